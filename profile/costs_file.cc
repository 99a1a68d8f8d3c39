// The costs file ⇄ CostTable. Checked by hand like a profile (yaml_fields.h):
// every mistake is one line naming the file, the line, the key path and what
// would have been accepted.
#include "profile/costs_file.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <limits>
#include <vector>

#include "profile/profile.h"
#include "profile/yaml_fields.h"

namespace hetsched {
namespace {

using namespace yaml_fields;

constexpr std::string_view kTopKeys[] = {"version", "source", "delegates", "handoffs"};
constexpr std::string_view kDelegateKeys[] = {"dispatch_us", "island_us", "edge_gbps", "classes", "measured_us"};
constexpr std::string_view kRateKeys[] = {"gflops", "gbps"};
constexpr std::string_view kTransferKeys[] = {"latency_us", "gbps"};

constexpr std::string_view kMicroseconds = "a number >= 0 (microseconds)";
constexpr std::string_view kGflops = "a number > 0 (GFLOP/s)";
constexpr std::string_view kGbps = "a number > 0 (GB/s of 10^9 bytes)";
constexpr std::string_view kEdgeGbps = "a number >= 0 (GB/s of 10^9 bytes; 0: the delegate copies nothing at island edges)";
constexpr int kVersion = 1;

// The names the schema accepts come from their owners (op_work.h,
// cost_model.h, profile.h), so a new class, handoff kind or delegate is a
// new key here without an edit.
const std::array<std::string_view, kNumOpClasses>& class_names() {
  static const auto names = [] {
    std::array<std::string_view, kNumOpClasses> n{};
    for (size_t i = 0; i < n.size(); ++i) n[i] = op_class_name(kAllOpClasses[i]);
    return n;
  }();
  return names;
}

const std::array<std::string_view, kNumCutKinds>& cut_names() {
  static const auto names = [] {
    std::array<std::string_view, kNumCutKinds> n{};
    for (size_t i = 0; i < n.size(); ++i) n[i] = cut_kind_name(kAllCutKinds[i]);
    return n;
  }();
  return names;
}

const std::vector<std::string_view>& delegate_names() {
  static const auto names = [] {
    std::vector<std::string_view> n;
    for (const std::string& name : known_delegate_names()) n.push_back(name);  // static strings: views stay valid
    return n;
  }();
  return names;
}

class CostsParser : private FieldChecker {
 public:
  explicit CostsParser(std::string source) : FieldChecker(std::move(source)) {}

  Result<CostTable> parse(const YAML::Node& root, bool* has_handoffs) const;

 private:
  Status parse_delegate(const Field& f, DelegateCosts& costs) const;
  Result<ClassRate> parse_rate(const Field& f) const;
  Status parse_handoffs(const Field& f, CostTable& table) const;
  Result<TransferCost> parse_transfer(const Field& f) const;
};

Result<CostTable> CostsParser::parse(const YAML::Node& root, bool* has_handoffs) const {
  Field doc{root, "", 1};
  if (!root.IsDefined() || root.IsNull()) return error(doc, "the costs file is empty", join(kTopKeys));
  if (!root.IsMap()) return error(doc, "expected a map, got " + std::string(kind_of(root)), join(kTopKeys));
  HS_ASSIGN_OR_RETURN(Entries top, entries(doc, kTopKeys));

  // The version first: a file of another version is refused as such, not
  // for the keys it has that this one does not know.
  HS_ASSIGN_OR_RETURN(const Field* version, require(doc, top, "version", kTopKeys));
  const std::string accepted_version = std::to_string(kVersion);
  HS_ASSIGN_OR_RETURN(int64_t v, integer(*version, std::numeric_limits<int64_t>::min(),
                                         std::numeric_limits<int64_t>::max(), accepted_version));
  if (v != kVersion)
    return error(*version, "'" + version->node.Scalar() + "' is not a supported version", accepted_version);

  CostTable table;
  table.source = "calibrated: " + source();
  if (const Field* f = find(top, "source")) {
    HS_ASSIGN_OR_RETURN(std::string text, scalar(*f, "a string", "free text: where the figures come from"));
    if (!text.empty()) table.source = std::move(text);
  }
  if (const Field* f = find(top, "delegates")) {
    HS_ASSIGN_OR_RETURN(Entries blocks, entries(*f, delegate_names()));
    for (const auto& [name, block] : blocks) HS_RETURN_IF_ERROR(parse_delegate(block, table.delegates[name]));
  }
  const Field* handoffs = find(top, "handoffs");
  if (handoffs != nullptr) HS_RETURN_IF_ERROR(parse_handoffs(*handoffs, table));
  if (has_handoffs != nullptr) *has_handoffs = handoffs != nullptr;
  return table;
}

Status CostsParser::parse_delegate(const Field& f, DelegateCosts& costs) const {
  // A section present is complete: half a delegate's figures mixed with
  // built-in ones would be a machine that does not exist.
  if (f.node.IsNull()) return error(f, "expected a map, got nothing", join(kDelegateKeys));
  HS_ASSIGN_OR_RETURN(Entries fields, entries(f, kDelegateKeys));
  HS_ASSIGN_OR_RETURN(const Field* dispatch, require(f, fields, "dispatch_us", kDelegateKeys));
  HS_ASSIGN_OR_RETURN(const Field* island, require(f, fields, "island_us", kDelegateKeys));
  HS_ASSIGN_OR_RETURN(const Field* classes, require(f, fields, "classes", kDelegateKeys));
  HS_ASSIGN_OR_RETURN(costs.dispatch_us, number(*dispatch, 0, true, kMicroseconds));
  HS_ASSIGN_OR_RETURN(costs.island_us, number(*island, 0, true, kMicroseconds));
  // Optional (files before it had none): 0 or absent, no edge copies.
  if (const Field* edge = find(fields, "edge_gbps")) {
    HS_ASSIGN_OR_RETURN(costs.edge_gbps, number(*edge, 0, true, kEdgeGbps));
  }

  if (classes->node.IsNull()) return error(*classes, "expected a map, got nothing", join(class_names()));
  HS_ASSIGN_OR_RETURN(Entries rates, entries(*classes, class_names()));
  for (OpClass c : kAllOpClasses) {
    HS_ASSIGN_OR_RETURN(const Field* rate, require(*classes, rates, op_class_name(c), class_names()));
    HS_ASSIGN_OR_RETURN(costs.rate(c), parse_rate(*rate));
  }
  // Optional: node times measured by `calibrate --model`, by op signature.
  if (const Field* measured = find(fields, "measured_us")) {
    constexpr std::string_view kSignatures = "op signatures (graph/op_work.h) mapped to microseconds";
    HS_ASSIGN_OR_RETURN(Entries times, open_entries(*measured, kSignatures));
    for (const auto& [signature, time] : times) {
      HS_ASSIGN_OR_RETURN(double us, number(time, 0, true, kMicroseconds));
      costs.measured_us[signature] = us;
    }
  }
  return Status::ok();
}

Result<ClassRate> CostsParser::parse_rate(const Field& f) const {
  if (f.node.IsNull()) return error(f, "expected a map, got nothing", join(kRateKeys));
  HS_ASSIGN_OR_RETURN(Entries fields, entries(f, kRateKeys));
  HS_ASSIGN_OR_RETURN(const Field* gflops, require(f, fields, "gflops", kRateKeys));
  HS_ASSIGN_OR_RETURN(const Field* gbps, require(f, fields, "gbps", kRateKeys));
  ClassRate rate;
  HS_ASSIGN_OR_RETURN(rate.gflops, number(*gflops, 0, false, kGflops));
  HS_ASSIGN_OR_RETURN(rate.gbps, number(*gbps, 0, false, kGbps));
  return rate;
}

Status CostsParser::parse_handoffs(const Field& f, CostTable& table) const {
  if (f.node.IsNull()) return error(f, "expected a map, got nothing", join(cut_names()));
  HS_ASSIGN_OR_RETURN(Entries kinds, entries(f, cut_names()));
  for (CutKind k : kAllCutKinds) {
    HS_ASSIGN_OR_RETURN(const Field* kind, require(f, kinds, cut_kind_name(k), cut_names()));
    HS_ASSIGN_OR_RETURN(table.transfer(k), parse_transfer(*kind));
  }
  return Status::ok();
}

Result<TransferCost> CostsParser::parse_transfer(const Field& f) const {
  if (f.node.IsNull()) return error(f, "expected a map, got nothing", join(kTransferKeys));
  HS_ASSIGN_OR_RETURN(Entries fields, entries(f, kTransferKeys));
  HS_ASSIGN_OR_RETURN(const Field* latency, require(f, fields, "latency_us", kTransferKeys));
  HS_ASSIGN_OR_RETURN(const Field* gbps, require(f, fields, "gbps", kTransferKeys));
  TransferCost cost;
  HS_ASSIGN_OR_RETURN(cost.latency_us, number(*latency, 0, true, kMicroseconds));
  HS_ASSIGN_OR_RETURN(cost.gbps, number(*gbps, 0, false, kGbps));
  return cost;
}

// The shortest text that reads back to the same double ("400", "3.1", "1e+09").
std::string number_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// A YAML double-quoted string.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

Result<CostTable> parse_costs(const std::string& yaml_text, const std::string& source_name, bool* has_handoffs) {
  HS_ASSIGN_OR_RETURN(YAML::Node root, load_yaml(yaml_text, source_name));
  // Every node's type is checked before it is read, so a throw here is a
  // missed check; it still leaves as a Status, never as an exception.
  try {
    return CostsParser(source_name).parse(root, has_handoffs);
  } catch (const YAML::Exception& e) {
    return internal_error("failed to read costs file '" + source_name + "': " + e.what());
  }
}

Result<CostTable> load_costs(const std::string& path, bool* has_handoffs) {
  HS_ASSIGN_OR_RETURN(std::string text, read_text_file(path, "costs file"));
  return parse_costs(text, path, has_handoffs);
}

std::string format_costs_yaml(const CostTable& table, const std::string& header_comment) {
  std::string out;
  size_t from = 0;
  while (from < header_comment.size()) {
    size_t end = header_comment.find('\n', from);
    if (end == std::string::npos) end = header_comment.size();
    const std::string line = header_comment.substr(from, end - from);
    out += line.empty() ? "#\n" : "# " + line + "\n";
    from = end + 1;
  }
  out += "version: " + std::to_string(kVersion) + "\n";
  out += "source: " + quoted(table.source) + "\n";
  if (!table.delegates.empty()) {
    out += "delegates:\n";
    for (const auto& [name, costs] : table.delegates) {
      out += "  " + name + ":\n";
      out += "    dispatch_us: " + number_text(costs.dispatch_us) + "\n";
      out += "    island_us: " + number_text(costs.island_us) + "\n";
      if (costs.edge_gbps > 0) out += "    edge_gbps: " + number_text(costs.edge_gbps) + "\n";
      out += "    classes:\n";
      for (OpClass c : kAllOpClasses) {
        const ClassRate& r = costs.rate(c);
        out += "      " + std::string(op_class_name(c)) + ": {gflops: " + number_text(r.gflops) +
               ", gbps: " + number_text(r.gbps) + "}\n";
      }
      if (!costs.measured_us.empty()) {
        out += "    measured_us:\n";
        for (const auto& [signature, us] : costs.measured_us)
          out += "      " + quoted(signature) + ": " + number_text(us) + "\n";
      }
    }
  }
  out += "handoffs:\n";
  for (CutKind k : kAllCutKinds) {
    const TransferCost& t = table.transfer(k);
    out += "  " + std::string(cut_kind_name(k)) + ": {latency_us: " + number_text(t.latency_us) +
           ", gbps: " + number_text(t.gbps) + "}\n";
  }
  return out;
}

}  // namespace hetsched

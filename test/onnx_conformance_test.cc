// The ONNX backend node tests on every delegate that claims their ops: the
// 932 cases of Debian's libonnx-testdata (ONNX 1.12, opsets up to 17) and
// the opset 18-21 cases of ONNX 1.23 whose ops hetsched has
// (test/data/onnx_node_opset18_21, chosen by
// scripts/models/select_node_tests.py).
//
// A case is "supported" on a delegate when the model imports (every node in
// hetsched's op set, tensors of hetsched dtypes) and the delegate's
// supports() accepts every node left after the loader's clean-up; it then
// runs through the real path (profile with only that delegate → plan →
// program → session) and its outputs must match the stored ones within the
// suite's tolerances (rtol 1e-3, atol 1e-7, as onnx/backend/test/runner
// does). Every case that does not run is listed by name with its reason,
// prefixed by the step that refused it (dtype, import, load, folded,
// delegate). Parameters the node tests feed as graph inputs (Reshape's
// shape, Resize's scales, a Conv's weights on the GPU delegates) are frozen
// into initializers when the loader or the delegate needs them constant, as
// real models have them; such cases say so.
//
// Each case runs in a child process, several cases per child: a kernel that
// crashes or hangs fails its case and the run goes on with the next one in
// a fresh child. The parent touches no hetsched code before forking, so no
// thread pool or Vulkan instance crosses a fork.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "delegates/registry.h"
#include "profile/profile.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "test/onnx_testdata.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

namespace fs = std::filesystem;
using testing::NamedTensor;
using testing::OnnxNodeTest;

// onnx/backend/test/runner/__init__.py compares with these unless a case
// overrides them (none of the node tests does).
constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;
// Per case, well above the slowest supported case on lavapipe.
constexpr int kCaseTimeoutMs = 60'000;

struct Target {
  std::string label;     // "cpu/xnnpack"
  std::string delegate;  // registry name
  std::string engine;    // cpu only
};

std::ostream& operator<<(std::ostream& os, const Target& t) { return os << t.label; }

enum class Outcome : char { kPass = 'P', kFail = 'F', kUnsupported = 'U' };

struct CaseResult {
  std::string name;
  Outcome outcome = Outcome::kFail;
  std::string detail;  // reason for unsupported, error for fail, max abs error for pass
};

// ---- what runs in the child -------------------------------------------------

Profile profile_for(const Target& target) {
  Profile p;
  p.name = "conformance-" + target.label;
  for (const std::string& name : known_delegate_names()) p.delegates[name].enabled = false;
  DelegateProfile& d = p.delegates[target.delegate];
  d.enabled = true;
  if (!target.engine.empty()) d.engine = target.engine;
  d.threads = 1;
  p.partition.prefer = "list";
  p.partition.order = {target.delegate};
  p.partition.fallback = "error";
  // A case of data-movement ops alone (Flatten, Identity) has no compute
  // node; it must still run on the delegate under test, not be pruned.
  p.partition.min_partition_size = 0;
  return p;
}

CaseResult unsupported_result(const std::string& name, std::string why) {
  return {name, Outcome::kUnsupported, std::move(why)};
}
CaseResult fail_result(const std::string& name, std::string why) { return {name, Outcome::kFail, std::move(why)}; }

std::string join(const std::vector<std::string>& lines, const std::string& sep) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : sep) + l;
  return out;
}

// `phase` tells the parent which step a crash or hang happened in.
// `scratch` is a directory for rewritten models.
CaseResult run_case(const fs::path& dir, const Target& target, const Delegate& delegate, const fs::path& scratch,
                    const std::function<void(const char*)>& phase) {
  const std::string name = dir.filename().string();
  phase("read");
  auto test = testing::load_onnx_node_test(dir);
  if (!test.is_ok()) {
    if (test.status().code() == StatusCode::kUnsupported)
      return unsupported_result(name, "dtype: " + test.status().message());
    return fail_result(name, "test data: " + test.status().message());
  }
  phase("import");
  auto rejected = unsupported_onnx_nodes(test->model.string());
  if (!rejected.is_ok()) return unsupported_result(name, "import: " + rejected.status().message());
  if (!rejected->empty()) return unsupported_result(name, "import: " + join(*rejected, "; "));

  auto shapes_of = [&] {
    InputShapes shapes;
    for (const NamedTensor& in : test->inputs) shapes[in.name] = in.tensor.shape();
    return shapes;
  };
  phase("load");
  auto graph = load_model(test->model.string(), shapes_of());
  // Parameters fed as graph inputs (see parameter_inputs): the model runs
  // again with them as the initializers they are in real models.
  std::string frozen;
  auto load_frozen = [&](int max_rank) -> Status {
    const std::vector<std::string> params = testing::parameter_inputs(*test, max_rank);
    if (params.empty()) return Status::ok();
    const fs::path copy = scratch / (name + ".onnx");
    HS_RETURN_IF_ERROR(testing::write_model_with_frozen_inputs(*test, params, copy));
    std::erase_if(test->inputs, [&](const NamedTensor& in) {
      return std::find(params.begin(), params.end(), in.name) != params.end();
    });
    graph = load_model(copy.string(), shapes_of());
    fs::remove(copy);
    frozen = " (parameter inputs frozen as constants: " + join(params, ", ") + ")";
    return Status::ok();
  };
  // Shape-deciding parameters (Reshape's shape, Slice's starts...) are 1-D at most.
  if (!graph.is_ok() && graph.status().message().find("must be a constant") != std::string::npos) {
    const Status s = load_frozen(1);
    if (!s.is_ok()) return fail_result(name, "freeze parameter inputs: " + s.message());
  }
  // Every node is in the op set, but the loader's shape inference refuses
  // this use of it (a dtype, an attribute value, a non-constant parameter):
  // no delegate gets to claim it.
  if (!graph.is_ok()) return unsupported_result(name, "load: " + graph.status().message() + frozen);
  if (graph->num_nodes() == 0)
    return unsupported_result(name, "folded: no node left to run after the loader's constant folding" + frozen);
  auto refusals = [&] {
    std::vector<std::string> refused;
    for (size_t n = 0; n < graph->num_nodes(); ++n) {
      const Capability c = delegate.supports(*graph, static_cast<NodeId>(n));
      if (!c.supported) refused.push_back(graph->describe_node(static_cast<NodeId>(n)) + ": " + c.reason);
    }
    return refused;
  };
  std::vector<std::string> refused = refusals();
  // A delegate may also need weights or bounds constant (GPU delegates
  // upload them at init): freeze every parameter input, whatever its rank.
  if (!refused.empty() && frozen.empty() && join(refused, ";").find("must be a constant") != std::string::npos) {
    const Status s = load_frozen(std::numeric_limits<int>::max());
    if (!s.is_ok()) return fail_result(name, "freeze parameter inputs: " + s.message());
    if (!graph.is_ok()) return unsupported_result(name, "load: " + graph.status().message() + frozen);
    if (graph->num_nodes() == 0)
      return unsupported_result(name, "folded: no node left to run after the loader's constant folding" + frozen);
    refused = refusals();
  }
  if (!refused.empty()) return unsupported_result(name, "delegate: " + join(refused, "; ") + frozen);

  phase("compile");
  const Profile profile = profile_for(target);
  auto program = build_program(*graph, profile);
  if (!program.is_ok()) return fail_result(name, "build program: " + program.status().message());
  phase("init");
  auto session = Session::create(std::move(program).value(), profile);
  if (!session.is_ok()) return fail_result(name, "create session: " + session.status().message());

  std::vector<Tensor> inputs;
  for (const std::string& input : (*session)->input_names()) {
    const NamedTensor* found = nullptr;
    for (const NamedTensor& t : test->inputs)
      if (t.name == input) found = &t;
    if (!found) return fail_result(name, "the session's input '" + input + "' is not in the test data");
    inputs.push_back(found->tensor);
  }
  phase("run");
  auto outputs = (*session)->run(inputs);
  if (!outputs.is_ok()) return fail_result(name, "run: " + outputs.status().message());
  if (outputs->size() != test->outputs.size())
    return fail_result(name, "run gave " + std::to_string(outputs->size()) + " outputs, the test has " +
                                 std::to_string(test->outputs.size()));
  double max_abs = 0;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const Tensor& want = test->outputs[i].tensor;
    const Tensor& got = (*outputs)[i];
    const testing::Closeness c = testing::compare_allclose(got, want, kRtol, kAtol);
    if (!c.same_type)
      return fail_result(name, "output '" + test->outputs[i].name + "' is " + got.type().to_string() + ", expected " +
                                   want.type().to_string());
    if (!c.ok()) return fail_result(name, "output '" + test->outputs[i].name + "': " + c.describe(want.num_elements()));
    max_abs = std::max(max_abs, c.max_abs_error);
  }
  std::ostringstream detail;
  detail << "max abs error " << max_abs << frozen;
  return {name, Outcome::kPass, detail.str()};
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// Runs cases[first..] until done, writing "S <i> <phase>" as each case moves
// on and "R <i> <outcome> <detail>" after it to `out`, or "X <why>" when the
// delegate cannot be made at all. Never returns.
[[noreturn]] void child_main(const std::vector<fs::path>& cases, size_t first, const Target& target, int out) {
  FILE* f = fdopen(out, "w");
  DelegateOptions options;
  if (!target.engine.empty()) options.emplace_back("engine", target.engine);
  options.emplace_back("threads", "1");
  auto delegate = make_delegate(target.delegate, options);
  if (!delegate.is_ok()) {
    std::fprintf(f, "X %s\n", one_line(delegate.status().message()).c_str());
    std::fflush(f);
    _exit(0);
  }
  // Removed explicitly: _exit skips destructors.
  auto* scratch = new testing::TempDir;
  for (size_t i = first; i < cases.size(); ++i) {
    const CaseResult r = run_case(cases[i], target, **delegate, scratch->path(), [&](const char* phase) {
      std::fprintf(f, "S %zu %s\n", i, phase);
      std::fflush(f);
    });
    std::fprintf(f, "R %zu %c %s\n", i, static_cast<char>(r.outcome), one_line(r.detail).c_str());
    std::fflush(f);
  }
  delete scratch;
  _exit(0);
}

// ---- the parent ---------------------------------------------------------------

struct Report {
  std::vector<CaseResult> results;  // by case index
  std::string unavailable;          // set when the target cannot be made
};

// Reads lines from `fd` until EOF or `timeout_ms` without output.
// Returns false on timeout.
bool read_line(int fd, std::string& buffer, std::string& line, int timeout_ms) {
  for (;;) {
    if (const size_t nl = buffer.find('\n'); nl != std::string::npos) {
      line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return false;
    char chunk[4096];
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) {
      line.clear();
      return true;  // EOF: the child ended
    }
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

Report run_all(const std::vector<fs::path>& cases, const Target& target) {
  Report report;
  report.results.resize(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) report.results[i].name = cases[i].filename().string();
  size_t next = 0;
  while (next < cases.size()) {
    int fds[2];
    if (pipe(fds) != 0) {
      report.unavailable = "pipe() failed";
      return report;
    }
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      report.unavailable = "fork() failed";
      return report;
    }
    if (pid == 0) {
      close(fds[0]);
      child_main(cases, next, target, fds[1]);
    }
    close(fds[1]);
    std::string buffer, line;
    long current = -1;
    std::string phase;
    bool timed_out = false;
    for (;;) {
      if (!read_line(fds[0], buffer, line, kCaseTimeoutMs)) {
        timed_out = true;
        break;
      }
      if (line.empty()) break;
      std::istringstream s(line);
      char kind = 0;
      s >> kind;
      if (kind == 'X') {
        std::getline(s >> std::ws, report.unavailable);
        next = cases.size();
        break;
      }
      size_t index = 0;
      s >> index;
      if (kind == 'S') {
        current = static_cast<long>(index);
        s >> phase;
        continue;
      }
      char outcome = 0;
      s >> outcome;
      std::string detail;
      std::getline(s >> std::ws, detail);
      report.results[index].outcome = static_cast<Outcome>(outcome);
      report.results[index].detail = detail;
      current = -1;
      next = index + 1;
    }
    if (timed_out) kill(pid, SIGKILL);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (current >= 0) {
      std::string why = timed_out             ? "timed out after " + std::to_string(kCaseTimeoutMs / 1000) + " s"
                        : WIFSIGNALED(status) ? "crashed (signal " + std::to_string(WTERMSIG(status)) + ")"
                                              : "exited with status " + std::to_string(WEXITSTATUS(status));
      why += " in phase " + phase;
      report.results[static_cast<size_t>(current)] =
          fail_result(report.results[static_cast<size_t>(current)].name, why);
      next = static_cast<size_t>(current) + 1;
    } else if (next < cases.size() && report.unavailable.empty() && !timed_out) {
      // The child ended between cases without finishing; nothing to blame.
      ADD_FAILURE() << "conformance child ended early after case " << next;
      break;
    }
  }
  return report;
}

class OnnxConformanceTest : public ::testing::TestWithParam<Target> {};

// A set of node tests, counted apart in the summary.
struct Suite {
  std::string label;
  fs::path root;
};

std::vector<Suite> suites() {
  return {{"onnx 1.12", testing::kOnnxNodeTestRoot},
          {"opsets 18-21", testing::source_path("test/data/onnx_node_opset18_21")}};
}

// "12 pass, 0 fail, 30 unsupported (delegate 3, import 27) of 42 cases"
std::string count_line(const std::vector<const CaseResult*>& results) {
  std::map<Outcome, size_t> by_outcome;
  // Unsupported cases by the step that refused them: dtype (test data types),
  // import (ops outside the op set), load (shape inference), folded, delegate.
  std::map<std::string, int> refused_by;
  for (const CaseResult* r : results) {
    ++by_outcome[r->outcome];
    if (r->outcome == Outcome::kUnsupported) ++refused_by[r->detail.substr(0, r->detail.find(':'))];
  }
  std::ostringstream line;
  line << by_outcome[Outcome::kPass] << " pass, " << by_outcome[Outcome::kFail] << " fail, "
       << by_outcome[Outcome::kUnsupported] << " unsupported (";
  bool first = true;
  for (const auto& [step, count] : refused_by) {
    line << (first ? "" : ", ") << step << " " << count;
    first = false;
  }
  line << ") of " << results.size() << " cases";
  return line.str();
}

TEST_P(OnnxConformanceTest, EverySupportedCasePasses) {
  const Target& target = GetParam();
  const std::vector<Suite> all_suites = suites();
  std::vector<fs::path> cases;
  std::vector<size_t> suite_of;  // per case, its index in suites()
  std::vector<std::string> missing;
  for (size_t s = 0; s < all_suites.size(); ++s) {
    const Suite& suite = all_suites[s];
    if (!fs::exists(suite.root)) {
      missing.push_back(suite.label + " at " + suite.root.string());
      continue;
    }
    for (fs::path& c : testing::list_onnx_node_tests(suite.root)) {
      cases.push_back(std::move(c));
      suite_of.push_back(s);
    }
  }
  for (const std::string& m : missing) std::cout << "[conformance] no node tests " << m << "\n";
  if (cases.empty()) GTEST_SKIP() << "no ONNX node tests (Debian package libonnx-testdata)";
  // For debugging one op: HETSCHED_CONFORMANCE_FILTER=<substring of case names>.
  if (const char* filter = std::getenv("HETSCHED_CONFORMANCE_FILTER")) {
    for (size_t i = cases.size(); i-- > 0;)
      if (cases[i].filename().string().find(filter) == std::string::npos) {
        cases.erase(cases.begin() + static_cast<std::ptrdiff_t>(i));
        suite_of.erase(suite_of.begin() + static_cast<std::ptrdiff_t>(i));
      }
    if (cases.empty()) GTEST_SKIP() << "no case matches HETSCHED_CONFORMANCE_FILTER=" << filter;
  }
  // HETSCHED_CONFORMANCE_NO_FORK=1 runs the cases in this process (under a debugger).
  if (std::getenv("HETSCHED_CONFORMANCE_NO_FORK")) {
    child_main(cases, 0, target, STDOUT_FILENO);
  }

  const auto start = std::chrono::steady_clock::now();
  const Report report = run_all(cases, target);
  if (!report.unavailable.empty()) GTEST_SKIP() << target.label << " unavailable: " << report.unavailable;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::map<Outcome, std::vector<const CaseResult*>> by_outcome;
  std::vector<const CaseResult*> all;
  std::vector<std::vector<const CaseResult*>> by_suite(all_suites.size());
  for (size_t i = 0; i < report.results.size(); ++i) {
    const CaseResult& r = report.results[i];
    by_outcome[r.outcome].push_back(&r);
    all.push_back(&r);
    by_suite[suite_of[i]].push_back(&r);
  }
  const size_t passed = by_outcome[Outcome::kPass].size();
  const size_t failed = by_outcome[Outcome::kFail].size();
  const size_t skipped = by_outcome[Outcome::kUnsupported].size();

  std::ostringstream summary;
  summary << "[conformance] " << target.label << ": " << count_line(all) << " in " << std::fixed
          << std::setprecision(1) << seconds << " s";
  for (size_t s = 0; s < all_suites.size(); ++s)
    if (!by_suite[s].empty())
      summary << "\n[conformance] " << target.label << " (" << all_suites[s].label << "): " << count_line(by_suite[s]);
  std::ostringstream text;
  for (const CaseResult* r : by_outcome[Outcome::kUnsupported])
    text << "[conformance] " << target.label << " unsupported " << r->name << ": " << r->detail << "\n";
  for (const CaseResult* r : by_outcome[Outcome::kPass])
    text << "[conformance] " << target.label << " pass " << r->name << ": " << r->detail << "\n";
  for (const CaseResult* r : by_outcome[Outcome::kFail])
    text << "[conformance] " << target.label << " FAIL " << r->name << ": " << r->detail << "\n";
  text << summary.str() << "\n";
  std::cout << text.str() << std::flush;

  // The whole listing, for docs/models.md and for reading without a terminal.
  const fs::path report_file = fs::path(HETSCHED_BINARY_DIR) / "onnx_conformance" /
                               (target.delegate + (target.engine.empty() ? "" : "_" + target.engine) + ".txt");
  fs::create_directories(report_file.parent_path());
  std::ofstream(report_file) << text.str();

  RecordProperty("passed", static_cast<int>(passed));
  RecordProperty("failed", static_cast<int>(failed));
  RecordProperty("unsupported", static_cast<int>(skipped));
  // A case runs only when the delegate claims every node, so a failure is a bug.
  std::vector<std::string> failures;
  for (const CaseResult* r : by_outcome[Outcome::kFail]) failures.push_back(r->name + ": " + r->detail);
  EXPECT_EQ(failed, 0u) << target.label << " fails supported cases:\n  " << join(failures, "\n  ");
  EXPECT_GT(passed, 0u) << target.label << " ran no case at all";
}

INSTANTIATE_TEST_SUITE_P(Delegates, OnnxConformanceTest,
                         ::testing::Values(Target{"cpu/portable", "cpu", "portable"},
                                           Target{"cpu/xnnpack", "cpu", "xnnpack"}, Target{"vulkan", "vulkan", ""},
                                           Target{"vgf", "vgf", ""}),
                         [](const ::testing::TestParamInfo<Target>& info) {
                           std::string name = info.param.label;
                           for (char& c : name)
                             if (c == '/') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace hetsched

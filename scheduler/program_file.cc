#include "scheduler/program_file.h"

#include <fcntl.h>
#include <flatbuffers/flatbuffers.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "graph/flatbuffers_read.h"
#include "graph/tensor_size.h"
#include "scheduler/program_generated.h"
#include "scheduler/shape_variants.h"

namespace hetsched {

namespace fbp = fb::program;

namespace {

static_assert(static_cast<uint8_t>(fbp::DType::Float32) == static_cast<uint8_t>(DType::kFloat32) &&
                  static_cast<uint8_t>(fbp::DType::Int64) == static_cast<uint8_t>(DType::kInt64) &&
                  static_cast<uint8_t>(fbp::DType::Int32) == static_cast<uint8_t>(DType::kInt32) &&
                  static_cast<uint8_t>(fbp::DType::Bool) == static_cast<uint8_t>(DType::kBool) &&
                  static_cast<uint8_t>(fbp::DType::UInt8) == static_cast<uint8_t>(DType::kUInt8) &&
                  static_cast<uint8_t>(fbp::DType::Int8) == static_cast<uint8_t>(DType::kInt8) &&
                  static_cast<uint8_t>(fbp::DType::Float16) == static_cast<uint8_t>(DType::kFloat16) &&
                  static_cast<uint8_t>(fbp::DType::BFloat16) == static_cast<uint8_t>(DType::kBFloat16),
              "program.fbs DType must number dtypes as hetsched::DType does");
static_assert(static_cast<uint8_t>(fbp::StepKind::RunIsland) == static_cast<uint8_t>(StepKind::kRunIsland) &&
                  static_cast<uint8_t>(fbp::StepKind::Handoff) == static_cast<uint8_t>(StepKind::kHandoff),
              "program.fbs StepKind must number step kinds as hetsched::StepKind does");
static_assert(static_cast<uint8_t>(fbp::HandoffKind::HostCopy) == static_cast<uint8_t>(HandoffKind::kHostCopy) &&
                  static_cast<uint8_t>(fbp::HandoffKind::Upload) == static_cast<uint8_t>(HandoffKind::kUpload) &&
                  static_cast<uint8_t>(fbp::HandoffKind::Readback) == static_cast<uint8_t>(HandoffKind::kReadback) &&
                  static_cast<uint8_t>(fbp::HandoffKind::DeviceCopy) == static_cast<uint8_t>(HandoffKind::kDeviceCopy) &&
                  static_cast<uint8_t>(fbp::HandoffKind::Alias) == static_cast<uint8_t>(HandoffKind::kAlias),
              "program.fbs HandoffKind must number handoffs as hetsched::HandoffKind does");

// --- writing -------------------------------------------------------------------

class ProgramWriter {
 public:
  // The first variant is the root; the others hang off its `variants`.
  Blob write(std::span<const Program> variants) {
    // Write every field, defaults too, so what is read back never depends on
    // a default the reader's schema might one day change.
    fbb_.ForceDefaults(true);
    std::vector<flatbuffers::Offset<fbp::Program>> others;
    for (size_t i = 1; i < variants.size(); ++i) others.push_back(table(variants[i], {}));
    auto fb_others = fbb_.CreateVector(others);
    auto root = table(variants.front(), fb_others);
    fbb_.FinishSizePrefixed(root, fbp::ProgramIdentifier());
    return Blob(fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize());
  }

 private:
  flatbuffers::Offset<fbp::Program> table(
      const Program& p, flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fbp::Program>>> variants) {
    std::vector<flatbuffers::Offset<fbp::Tensor>> tensors;
    for (const ProgramTensor& t : p.tensors) tensors.push_back(fbp::CreateTensor(fbb_, str(t.name), type(t.type)));
    std::vector<flatbuffers::Offset<fbp::Constant>> constants;
    for (const auto& [index, tensor] : p.constants)
      constants.push_back(fbp::CreateConstant(fbb_, index, bytes(tensor)));
    std::vector<flatbuffers::Offset<fbp::Island>> islands;
    for (const ProgramIsland& island : p.islands) islands.push_back(write_island(island));
    std::vector<flatbuffers::Offset<fbp::Step>> steps;
    for (const ProgramStep& s : p.steps) steps.push_back(write_step(s));

    auto model_name = str(p.model_name);
    auto profile_name = str(p.profile_name);
    auto fb_tensors = fbb_.CreateVector(tensors);
    auto fb_constants = fbb_.CreateVector(constants);
    auto fb_islands = fbb_.CreateVector(islands);
    auto fb_steps = fbb_.CreateVector(steps);
    auto inputs = fbb_.CreateVector(p.inputs);
    auto outputs = fbb_.CreateVector(p.outputs);
    auto metadata = specs(p.metadata);
    auto memory = write_memory(p.memory);
    return fbp::CreateProgram(fbb_, p.format_version, model_name, profile_name, fb_tensors, fb_constants, fb_islands,
                              fb_steps, inputs, outputs, metadata, memory, variants);
  }

  flatbuffers::Offset<flatbuffers::String> str(const std::string& s) { return fbb_.CreateString(s.data(), s.size()); }

  flatbuffers::Offset<fbp::TensorType> type(const TensorType& t) {
    return fbp::CreateTensorTypeDirect(fbb_, static_cast<fbp::DType>(t.dtype), &t.shape);
  }

  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> bytes(const Tensor& t) {
    return fbb_.CreateVector(reinterpret_cast<const uint8_t*>(t.raw()), t.byte_size());
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fbp::KeyValue>>> specs(const CompileSpecs& kv) {
    std::vector<flatbuffers::Offset<fbp::KeyValue>> entries;
    for (const auto& [key, value] : kv) entries.push_back(fbp::CreateKeyValue(fbb_, str(key), str(value)));
    return fbb_.CreateVector(entries);
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> strings(
      const std::vector<std::string>& list) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> entries;
    for (const std::string& s : list) entries.push_back(str(s));
    return fbb_.CreateVector(entries);
  }

  flatbuffers::Offset<fbp::Island> write_island(const ProgramIsland& island) {
    auto delegate = str(island.delegate);
    auto compile_specs = specs(island.compile_specs);
    auto blob = fbb_.CreateVector(island.blob);
    auto inputs = fbb_.CreateVector(island.inputs);
    auto outputs = fbb_.CreateVector(island.outputs);
    auto node_names = strings(island.node_names);
    auto op_types = strings(island.op_types);
    return fbp::CreateIsland(fbb_, island.id, delegate, compile_specs, blob, inputs, outputs, node_names, op_types);
  }

  flatbuffers::Offset<fbp::Step> write_step(const ProgramStep& s) {
    auto from = str(s.from);
    auto to = str(s.to);
    auto layout = str(s.layout);
    return fbp::CreateStep(fbb_, static_cast<fbp::StepKind>(s.kind), s.island, s.tensor,
                           static_cast<fbp::HandoffKind>(s.handoff), from, to, layout);
  }

  flatbuffers::Offset<fbp::MemoryPlan> write_memory(const MemoryPlan& m) {
    std::vector<flatbuffers::Offset<fbp::DomainPlan>> domains;
    for (const DomainPlan& d : m.domains) {
      std::vector<flatbuffers::Offset<fbp::PlannedBuffer>> buffers;
      for (const PlannedBuffer& b : d.buffers)
        buffers.push_back(fbp::CreatePlannedBuffer(fbb_, str(b.name), b.offset, b.bytes, b.first, b.last));
      auto name = str(d.domain);
      auto fb_buffers = fbb_.CreateVector(buffers);
      domains.push_back(fbp::CreateDomainPlan(fbb_, name, d.planned_bytes, d.lower_bound, fb_buffers));
    }
    std::vector<flatbuffers::Offset<fbp::IslandPlacement>> islands;
    for (const IslandPlacementPlan& i : m.islands) {
      auto inputs = fbb_.CreateVector(i.input_offsets);
      auto outputs = fbb_.CreateVector(i.output_offsets);
      islands.push_back(fbp::CreateIslandPlacement(fbb_, i.domain, i.scratch_offset, inputs, outputs));
    }
    auto fb_domains = fbb_.CreateVector(domains);
    auto host = fbb_.CreateVector(m.host_offsets);
    auto fb_islands = fbb_.CreateVector(islands);
    return fbp::CreateMemoryPlan(fbb_, fb_domains, host, fb_islands);
  }

  flatbuffers::FlatBufferBuilder fbb_{1024};
};

// --- reading -------------------------------------------------------------------

std::string read_str(const flatbuffers::String* s) { return copy_fb_string(s); }

template <typename T>
std::vector<T> read_vec(const flatbuffers::Vector<T>* v) {
  return copy_fb_vector(v);
}


// Reads the root table's format_version through the verifier's bounds checks
// and nothing else: a newer writer may have changed the rest so that the full
// verifier fails, and its reader should then hear "newer version", not
// "corrupt".
std::optional<uint32_t> read_format_version(std::span<const uint8_t> bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  constexpr size_t kRootOffsetAt = sizeof(flatbuffers::uoffset_t);  // after the size prefix
  flatbuffers::uoffset_t root = verifier.VerifyOffset(kRootOffsetAt);
  if (!root) return std::nullopt;
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(bytes.data() + kRootOffsetAt + root);
  if (!table->VerifyTableStart(verifier) ||
      !table->VerifyField<uint32_t>(verifier, fbp::Program::VT_FORMAT_VERSION, sizeof(uint32_t)))
    return std::nullopt;
  return table->GetField<uint32_t>(fbp::Program::VT_FORMAT_VERSION, 0);
}

// Turns a verified buffer into a Program. Messages are reasons only; the
// caller adds "failed to load program file 'x': ".
class ProgramReader {
 public:
  explicit ProgramReader(const fbp::Program& root) : root_(root) {}

  Result<Program> read() {
    Program p;
    p.format_version = root_.format_version();
    p.model_name = read_str(root_.model_name());
    p.profile_name = read_str(root_.profile_name());
    if (root_.tensors()) {
      for (uint32_t i = 0; i < root_.tensors()->size(); ++i) {
        const fbp::Tensor* t = root_.tensors()->Get(i);
        const std::string what = "tensor " + std::to_string(i);
        HS_ASSIGN_OR_RETURN(TensorType type, read_type(t->type(), what));
        p.tensors.push_back({read_str(t->name()), std::move(type)});
      }
    }
    if (root_.constants()) {
      for (uint32_t i = 0; i < root_.constants()->size(); ++i) {
        HS_ASSIGN_OR_RETURN(Tensor t, read_constant(*root_.constants()->Get(i), p, i));
        p.constants.emplace_back(root_.constants()->Get(i)->tensor(), std::move(t));
      }
    }
    if (root_.islands())
      for (const fbp::Island* island : *root_.islands()) p.islands.push_back(read_island(*island));
    if (root_.steps()) {
      for (uint32_t i = 0; i < root_.steps()->size(); ++i) {
        HS_ASSIGN_OR_RETURN(ProgramStep step, read_step(*root_.steps()->Get(i), "step " + std::to_string(i)));
        p.steps.push_back(std::move(step));
      }
    }
    p.inputs = read_vec(root_.inputs());
    p.outputs = read_vec(root_.outputs());
    p.metadata = read_specs(root_.metadata());
    if (root_.memory()) p.memory = read_memory(*root_.memory());
    return p;
  }

 private:
  static Status bad(const std::string& what) { return data_loss(what); }

  static Result<TensorType> read_type(const fbp::TensorType* t, const std::string& what) {
    if (!t) return bad(what + " has no type");
    auto dtype = static_cast<uint8_t>(t->dtype());
    if (dtype > static_cast<uint8_t>(fbp::DType::MAX)) return bad(what + " has unknown dtype " + std::to_string(dtype));
    TensorType type{static_cast<DType>(dtype), read_vec(t->shape())};
    for (int64_t d : type.shape)
      if (d < kDynamicDim) return bad(what + " has dimension " + std::to_string(d));
    if (!has_representable_size(type))
      return bad(what + " has type " + type.to_string() + ", larger than 2^63 bytes");
    return type;
  }

  static Result<Tensor> read_constant(const fbp::Constant& c, const Program& p, uint32_t i) {
    const std::string what = "constant " + std::to_string(i);
    if (c.tensor() < 0 || static_cast<size_t>(c.tensor()) >= p.tensors.size())
      return bad(what + " refers to tensor " + std::to_string(c.tensor()) + ", but the program has " +
                 std::to_string(p.tensors.size()) + " tensors");
    const ProgramTensor& t = p.tensors[static_cast<size_t>(c.tensor())];
    std::optional<size_t> want = t.type.is_static() ? checked_byte_size(t.type) : std::nullopt;
    if (!want)
      return bad(what + " is for tensor '" + t.name + "' of type " + t.type.to_string() + ", which cannot hold data");
    size_t have = c.data() ? c.data()->size() : 0;
    if (have != *want)
      return bad(what + " has " + std::to_string(have) + " bytes of data; tensor '" + t.name + "' (" +
                 t.type.to_string() + ") needs " + std::to_string(*want));
    Tensor tensor(t.type);
    if (have) std::memcpy(tensor.raw(), c.data()->data(), have);
    return tensor;
  }

  static CompileSpecs read_specs(const flatbuffers::Vector<flatbuffers::Offset<fbp::KeyValue>>* kv) {
    CompileSpecs specs;
    if (kv)
      for (const fbp::KeyValue* e : *kv) specs.emplace_back(read_str(e->key()), read_str(e->value()));
    return specs;
  }

  static std::vector<std::string> read_strings(
      const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* list) {
    std::vector<std::string> out;
    if (list)
      for (const flatbuffers::String* s : *list) out.push_back(read_str(s));
    return out;
  }

  static MemoryPlan read_memory(const fbp::MemoryPlan& fm) {
    MemoryPlan m;
    if (fm.domains())
      for (const fbp::DomainPlan* fd : *fm.domains()) {
        DomainPlan d{read_str(fd->domain()), fd->planned_bytes(), fd->lower_bound(), {}};
        if (fd->buffers())
          for (const fbp::PlannedBuffer* b : *fd->buffers())
            d.buffers.push_back({read_str(b->name()), b->offset(), b->bytes(), b->first(), b->last()});
        m.domains.push_back(std::move(d));
      }
    m.host_offsets = read_vec(fm.host_offsets());
    if (fm.islands())
      for (const fbp::IslandPlacement* fi : *fm.islands())
        m.islands.push_back({fi->domain(), fi->scratch_offset(), read_vec(fi->input_offsets()),
                             read_vec(fi->output_offsets())});
    return m;
  }

  static ProgramIsland read_island(const fbp::Island& fi) {
    ProgramIsland island;
    island.id = fi.id();
    island.delegate = read_str(fi.delegate());
    island.compile_specs = read_specs(fi.compile_specs());
    island.blob = read_vec(fi.blob());
    island.inputs = read_vec(fi.inputs());
    island.outputs = read_vec(fi.outputs());
    island.node_names = read_strings(fi.node_names());
    island.op_types = read_strings(fi.op_types());
    return island;
  }

  static Result<ProgramStep> read_step(const fbp::Step& fs, const std::string& what) {
    auto kind = static_cast<uint8_t>(fs.kind());
    if (kind > static_cast<uint8_t>(fbp::StepKind::MAX)) return bad(what + " has unknown kind " + std::to_string(kind));
    auto handoff = static_cast<uint8_t>(fs.handoff());
    if (handoff > static_cast<uint8_t>(fbp::HandoffKind::MAX))
      return bad(what + " has unknown handoff kind " + std::to_string(handoff));
    ProgramStep step;
    step.kind = static_cast<StepKind>(kind);
    step.island = fs.island();
    step.tensor = fs.tensor();
    step.handoff = static_cast<HandoffKind>(handoff);
    step.from = read_str(fs.from());
    step.to = read_str(fs.to());
    step.layout = read_str(fs.layout());
    return step;
  }

  const fbp::Program& root_;
};

std::string quoted(const std::string& name) { return "'" + name + "'"; }

Status load_failure(const std::string& source_name, const std::string& reason) {
  return data_loss("failed to load program file " + quoted(source_name) + ": " + reason);
}

}  // namespace

Blob serialize_program(const Program& program) { return ProgramWriter().write(std::span(&program, 1)); }

Blob serialize_program_variants(std::span<const Program> variants) {
  if (variants.empty()) return {};
  return ProgramWriter().write(variants);
}

namespace {
// For the readers of one program: a file of several shape variants is not one.
Result<Program> only_variant(Result<std::vector<Program>> variants, const std::string& source_name) {
  if (!variants.is_ok()) return variants.status();
  if (variants->size() > 1)
    return invalid_argument("program file " + quoted(source_name) + " holds " + std::to_string(variants->size()) +
                            " shape variants (" + shape_variants_label(*variants) +
                            "); open it as a model, which picks one by its input shapes");
  return std::move(variants->front());
}
}  // namespace

Result<Program> deserialize_program(std::span<const uint8_t> bytes, const std::string& source_name) {
  return only_variant(deserialize_program_variants(bytes, source_name), source_name);
}

Result<std::vector<Program>> deserialize_program_variants(std::span<const uint8_t> bytes,
                                                          const std::string& source_name) {
  // FlatBuffers reads scalars in place; a buffer at an odd address (a slice
  // of a larger file) is copied to one the allocator aligned.
  Blob aligned;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) != 0) {
    aligned.assign(bytes.begin(), bytes.end());
    bytes = aligned;
  }
  // The size prefix, the root offset, then the identifier.
  constexpr size_t kHeaderSize = 3 * sizeof(flatbuffers::uoffset_t);
  if (bytes.size() < kHeaderSize || !flatbuffers::BufferHasIdentifier(bytes.data(), fbp::ProgramIdentifier(), true))
    return data_loss(quoted(source_name) + " is not a hetsched program file (expected identifier " +
                     fbp::ProgramIdentifier() + ")");
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return load_failure(source_name, "file is larger than FlatBuffers' 2 GiB limit");

  const Status corrupt = load_failure(source_name, "truncated or corrupt (FlatBuffers verification failed)");
  std::optional<uint32_t> version = read_format_version(bytes);
  if (!version) return corrupt;
  if (*version > kProgramFormatVersion)
    return unsupported("program file " + quoted(source_name) + " has format version " + std::to_string(*version) +
                       "; this hetsched reads version " + std::to_string(kProgramFormatVersion) +
                       " — rebuild it with `hetsched compile`");
  if (*version == 0) return load_failure(source_name, "format version 0 does not exist");

  flatbuffers::Verifier::Options options;
  // The default cap of a million tables bounds verification time; honest
  // programs stay far below it, but the cap grows with the file anyway (no
  // table is smaller than 4 bytes) so size alone never refuses one.
  options.max_tables =
      std::max<flatbuffers::uoffset_t>(options.max_tables, static_cast<flatbuffers::uoffset_t>(bytes.size() / 4));
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), options);
  if (!fbp::VerifySizePrefixedProgramBuffer(verifier)) return corrupt;

  const fbp::Program& root = *fbp::GetSizePrefixedProgram(bytes.data());
  std::vector<const fbp::Program*> tables{&root};
  if (root.variants())
    for (const fbp::Program* v : *root.variants()) tables.push_back(v);
  std::vector<Program> variants;
  for (size_t i = 0; i < tables.size(); ++i) {
    const std::string which = tables.size() > 1 ? "variant " + std::to_string(i) + ": " : "";
    if (i > 0 && tables[i]->variants() && tables[i]->variants()->size() > 0)
      return load_failure(source_name, which + "has variants of its own (only the root may)");
    if (tables[i]->format_version() != root.format_version())
      return load_failure(source_name, which + "has format version " + std::to_string(tables[i]->format_version()) +
                                           ", the root " + std::to_string(root.format_version()));
    Result<Program> program = ProgramReader(*tables[i]).read();
    if (!program.is_ok()) return load_failure(source_name, which + program.status().message());
    Status valid = validate_program(*program);
    if (!valid.is_ok()) return load_failure(source_name, which + valid.message());
    variants.push_back(std::move(program).value());
  }
  if (Status same = check_shape_variants(variants); !same.is_ok()) return load_failure(source_name, same.message());
  return variants;
}

Status write_program_file(const Program& program, const std::string& path) {
  return write_program_variants_file(std::span(&program, 1), path);
}

Status write_program_variants_file(std::span<const Program> variants, const std::string& path) {
  if (Status same = check_shape_variants(variants); !same.is_ok())
    return invalid_argument("failed to write program file " + quoted(path) + ": " + same.message());
  Blob bytes = serialize_program_variants(variants);
  auto failed = [&](const std::string& reason) {
    return unavailable("failed to write program file " + quoted(path) + ": " + reason);
  };
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return failed(std::strerror(errno));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  int write_errno = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    write_errno = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    return failed(std::strerror(write_errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int rename_errno = errno;
    std::remove(tmp.c_str());
    return failed(std::strerror(rename_errno));
  }
  return Status::ok();
}

Result<Program> read_program_file(const std::string& path) {
  return only_variant(read_program_variants_file(path), path);
}

Result<std::vector<Program>> read_program_variants_file(const std::string& path) {
  auto failed = [&](int err) {
    std::string message = "failed to read program file " + quoted(path) + ": " + std::strerror(err);
    return err == ENOENT ? not_found(std::move(message)) : unavailable(std::move(message));
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failed(errno);
  // A directory opens fine and reports a meaningless size; refuse anything
  // that is not a regular file before sizing a buffer from it.
  struct stat st {};
  int stat_error = 0;
  if (::fstat(fd, &st) != 0)
    stat_error = errno;
  else if (!S_ISREG(st.st_mode))
    stat_error = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
  if (stat_error) {
    ::close(fd);
    return failed(stat_error);
  }
  Blob bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return failed(err);
    }
    if (n == 0) break;  // the file shrank while being read; the loader reports it as truncated
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return deserialize_program_variants(bytes, path);
}

}  // namespace hetsched

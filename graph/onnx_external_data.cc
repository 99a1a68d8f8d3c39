#include "graph/onnx_external_data.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <system_error>

namespace hetsched::onnx_import {

namespace fs = std::filesystem;

namespace {

// A non-negative decimal integer, nothing else (ONNX writes offsets and
// lengths as decimal strings).
Result<uint64_t> parse_size(const std::string& text, const std::string& key, const std::string& what) {
  const std::string bad = what + ": external_data " + key + " '" + text + "' is not a non-negative integer";
  if (text.empty() || text.size() > 19) return data_loss(bad);
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return data_loss(bad);
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// `location` resolved inside `dir`, or an error when it would leave it.
Result<fs::path> resolve_location(const fs::path& dir, const std::string& location, const std::string& what) {
  const std::string prefix = what + ": external data location '" + location + "' ";
  if (location.empty()) return data_loss(what + ": external_data has no location");
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    return invalid_argument(prefix + "is absolute; only paths relative to the model's directory are accepted");
  const fs::path lexical = rel.lexically_normal();
  if (lexical.empty() || *lexical.begin() == "..")
    return invalid_argument(prefix + "leaves the model's directory; only paths inside it are accepted");
  // Symlinks resolved: the file itself must lie inside the directory too.
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(dir.empty() ? fs::path(".") : dir, ec);
  const fs::path full = fs::weakly_canonical((dir.empty() ? fs::path(".") : dir) / lexical, ec);
  if (ec) return not_found(prefix + "cannot be resolved: " + ec.message());
  const fs::path inside = full.lexically_relative(base);
  if (inside.empty() || *inside.begin() == "..")
    return invalid_argument(prefix + "resolves to " + full.string() +
                            ", outside the model's directory; only paths inside it are accepted");
  return full;
}

}  // namespace

bool has_external_data(const onnx::TensorProto& proto) {
  return proto.data_location() == onnx::TensorProto::EXTERNAL || proto.external_data_size() > 0;
}

Result<std::vector<uint8_t>> ExternalDataReader::read(const onnx::TensorProto& proto, size_t expected_bytes,
                                                      const std::string& what) const {
  std::string location;
  uint64_t offset = 0;
  uint64_t length = expected_bytes;
  bool has_length = false;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      HS_ASSIGN_OR_RETURN(offset, parse_size(entry.value(), "offset", what));
    } else if (entry.key() == "length") {
      HS_ASSIGN_OR_RETURN(length, parse_size(entry.value(), "length", what));
      has_length = true;
    }
    // "checksum" (SHA-1) is optional and not checked.
  }
  HS_ASSIGN_OR_RETURN(const fs::path file, resolve_location(dir_, location, what));
  const std::string where = what + ": external data '" + location + "' (" + file.string() + ")";
  if (has_length && length != expected_bytes)
    return data_loss(where + " has length " + std::to_string(length) + ", but the tensor needs " +
                     std::to_string(expected_bytes) + " bytes");
  std::error_code ec;
  const uint64_t file_size = fs::file_size(file, ec);
  if (ec) return not_found(where + " cannot be read: " + ec.message());
  if (offset > file_size || length > file_size - offset)
    return data_loss(where + ": offset " + std::to_string(offset) + " + length " + std::to_string(length) +
                     " lies beyond the end of the file (" + std::to_string(file_size) + " bytes)");
  std::vector<uint8_t> bytes(static_cast<size_t>(length));
  if (length == 0) return bytes;
  std::ifstream f(file, std::ios::binary);
  if (!f) return not_found(where + " cannot be opened: " + std::strerror(errno));
  f.seekg(static_cast<std::streamoff>(offset));
  f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(length));
  if (static_cast<uint64_t>(f.gcount()) != length)
    return data_loss(where + ": short read, got " + std::to_string(f.gcount()) + " of " + std::to_string(length) +
                     " bytes at offset " + std::to_string(offset));
  return bytes;
}

}  // namespace hetsched::onnx_import

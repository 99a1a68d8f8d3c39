// Fuzz target: what `hetsched run` parses from its command line about model
// inputs. The input is "--input-shape specs" up to the first newline (specs
// separated by ';', each NAME=DIMS), one byte choosing the dtype, then the
// bytes of a raw tensor file. The first parsed shape is read from that file
// as read_raw_tensor does for `--input NAME=FILE`.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "cli/input_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hetsched;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string line = input.substr(0, newline);
  std::vector<std::string> specs;
  for (size_t start = 0;;) {
    const size_t end = line.find(';', start);
    specs.push_back(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  auto shapes = cli::parse_input_shapes(specs);
  if (!shapes.is_ok() || shapes.value().empty() || newline == std::string::npos || newline + 1 >= input.size())
    return 0;
  constexpr DType kDtypes[] = {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt32,
                               DType::kInt8,    DType::kUInt8,   DType::kBool};
  const auto selector = static_cast<uint8_t>(input[newline + 1]);
  const TensorType type{kDtypes[selector % std::size(kDtypes)], shapes.value().begin()->second};
  std::istringstream file(input.substr(newline + 2));
  (void)cli::read_raw_tensor(file, shapes.value().begin()->first, type, "fuzz.bin");
  return 0;
}

#include "test/test_util.h"

#include <atomic>
#include <fstream>
#include <unistd.h>

namespace hetsched::testing {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("hetsched_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Tensor random_tensor(const Shape& shape, uint32_t seed, float lo, float hi) {
  Tensor t(TensorType{DType::kFloat32, shape});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::filesystem::path source_path(const std::string& relative) {
  return std::filesystem::path(HETSCHED_SOURCE_DIR) / relative;
}

}  // namespace hetsched::testing

#include "graph/tensor.h"

#include "graph/dtype.h"

#include <cstdlib>
#include <limits>
#include <new>

namespace hetsched {

// A product past int64_t saturates at its maximum rather than wrapping
// (signed overflow is undefined): shapes from files are checked before use
// (tensor_size.h), but shape inference also multiplies requested dims (a
// Reshape's target) that no loader has seen, and any such count then simply
// fails to match.
// A zero dim anywhere makes the count 0, whatever the product of the dims
// before it (cli_input_fuzz: [549,10000,...,0] saturated before the 0 and
// asked for 2^63 bytes).
int64_t shape_elements(const Shape& shape) {
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

std::optional<size_t> checked_byte_size(const TensorType& type) {
  size_t bytes = dtype_size(type.dtype);
  for (int64_t d : type.shape)
    if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) return std::nullopt;
  return bytes;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

Result<Shape> parse_shape(std::string_view text) {
  Shape shape;
  if (text.empty()) return invalid_argument("empty shape (expected dims like 1x3x224x224)");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of("x,", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(pos, end - pos);
    if (part.empty()) return invalid_argument("shape '" + std::string(text) + "' has an empty dimension");
    int64_t v = 0;
    for (char c : part) {
      if (c < '0' || c > '9')
        return invalid_argument("shape '" + std::string(text) + "' has a non-numeric dimension '" + std::string(part) +
                                "' (expected dims like 1x3x224x224)");
      if (v > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10)
        return invalid_argument("shape '" + std::string(text) + "' has a dimension '" + std::string(part) +
                                "' beyond 2^63 - 1");
      v = v * 10 + (c - '0');
    }
    shape.push_back(v);
    pos = end + 1;
  }
  return shape;
}

bool TensorType::is_static() const {
  for (int64_t d : shape)
    if (d < 0) return false;
  return true;
}

std::string TensorType::to_string() const { return std::string(dtype_name(dtype)) + shape_to_string(shape); }

// 64 bytes: a cache line, and the widest SIMD load (AVX-512) any kernel uses.
constexpr size_t kTensorAlignment = 64;

void AlignedBuffer::Free::operator()(std::byte* p) const {
  if (!borrowed) ::operator delete[](p, std::align_val_t(kTensorAlignment));
}

AlignedBuffer AlignedBuffer::borrow(std::byte* data, size_t bytes, bool read_slack) {
  AlignedBuffer b;
  b.size_ = bytes;
  b.data_ = std::unique_ptr<std::byte[], Free>(data, Free{true, read_slack});
  return b;
}

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  data_.reset(static_cast<std::byte*>(::operator new[](bytes + kReadSlack, std::align_val_t(kTensorAlignment))));
  std::memset(data_.get(), 0, bytes + kReadSlack);
}

AlignedBuffer AlignedBuffer::uninitialized(size_t bytes) {
  AlignedBuffer b;
  b.size_ = bytes;
  if (bytes) {
    b.data_.reset(static_cast<std::byte*>(::operator new[](bytes + kReadSlack, std::align_val_t(kTensorAlignment))));
    std::memset(b.data_.get() + bytes, 0, kReadSlack);
  }
  return b;
}

AlignedBuffer::AlignedBuffer(const AlignedBuffer& other) : AlignedBuffer(other.size_) {
  if (size_) std::memcpy(data_.get(), other.data_.get(), size_);
}

AlignedBuffer& AlignedBuffer::operator=(const AlignedBuffer& other) {
  if (this != &other) *this = AlignedBuffer(other);
  return *this;
}

Tensor::Tensor(TensorType type) : type_(std::move(type)), buffer_(type_.is_static() ? type_.byte_size() : 0) {}

Tensor Tensor::uninitialized(TensorType type) {
  Tensor t;
  t.type_ = std::move(type);
  t.buffer_ = AlignedBuffer::uninitialized(t.type_.is_static() ? t.type_.byte_size() : 0);
  return t;
}

Tensor Tensor::borrow(TensorType type, void* data, bool read_slack) {
  Tensor t;
  t.type_ = std::move(type);
  t.buffer_ = AlignedBuffer::borrow(static_cast<std::byte*>(data), t.type_.is_static() ? t.type_.byte_size() : 0,
                                    read_slack);
  return t;
}

int64_t Tensor::int_at(int64_t i) const {
  switch (dtype()) {
    case DType::kInt64: return data<int64_t>()[i];
    case DType::kInt32: return data<int32_t>()[i];
    case DType::kUInt8: return data<uint8_t>()[i];
    case DType::kInt8: return data<int8_t>()[i];
    case DType::kBool: return data<uint8_t>()[i];
    case DType::kFloat32: return static_cast<int64_t>(data<float>()[i]);
    case DType::kFloat16:
    case DType::kBFloat16: break;
  }
  return 0;
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = int_at(static_cast<int64_t>(i));
  return v;
}

std::vector<float> Tensor::to_float_vector() const {
  std::vector<float> v(static_cast<size_t>(num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype() == DType::kFloat32) {
      v[i] = data<float>()[i];
    } else if (is_half_float(dtype())) {
      v[i] = half_float_to_float(dtype(), data<uint16_t>()[i]);
    } else {
      v[i] = static_cast<float>(int_at(static_cast<int64_t>(i)));
    }
  }
  return v;
}

}  // namespace hetsched

// TensorType (dtype + static shape) and Tensor (a TensorType with host data).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "graph/dtype.h"
#include "hetsched/status.h"

namespace hetsched {

// A dimension not known until input shapes are given (ONNX dim_param / -1).
inline constexpr int64_t kDynamicDim = -1;

using Shape = std::vector<int64_t>;

// Number of elements of a static shape (1 for a scalar).
int64_t shape_elements(const Shape& shape);
// "[1,3,8,8]"; dynamic dims print as "?".
std::string shape_to_string(const Shape& shape);
// Parses "1x3x640x640" (also accepts ',' as separator).
Result<Shape> parse_shape(std::string_view text);

struct TensorType {
  DType dtype = DType::kFloat32;
  Shape shape;

  size_t rank() const { return shape.size(); }
  bool is_static() const;
  int64_t num_elements() const { return shape_elements(shape); }
  size_t byte_size() const { return static_cast<size_t>(num_elements()) * dtype_size(dtype); }
  // "f32[1,3,8,8]"
  std::string to_string() const;
  bool operator==(const TensorType&) const = default;
};

// The byte size of a static type, or nullopt when a dimension is negative or
// the product overflows: every size read from a file or a shape computed
// from one goes through here (a corrupt shape must not wrap into a small
// allocation, and byte_size() does not check).
std::optional<size_t> checked_byte_size(const TensorType& type);

// Host memory for tensor data, 64-byte aligned so SIMD kernels can use it.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  // `bytes` left uninitialised, for buffers every byte of which is written
  // before it is read (zero-filling a multi-MiB output on every run costs as
  // much as copying it).
  static AlignedBuffer uninitialized(size_t bytes);
  // The caller's `bytes` at `data`, not owned and never freed here: the
  // public API's views (include/hetsched/hetsched.h). A copy owns its bytes.
  // `read_slack`: the caller's memory may be read kReadSlack bytes past the
  // end (a tensor placed in an arena that has that slack after its end).
  static AlignedBuffer borrow(std::byte* data, size_t bytes, bool read_slack = false);
  AlignedBuffer(const AlignedBuffer& other);
  AlignedBuffer& operator=(const AlignedBuffer& other);
  AlignedBuffer(AlignedBuffer&&) noexcept = default;
  AlignedBuffer& operator=(AlignedBuffer&&) noexcept = default;

  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }
  // A buffer this class allocated (not borrowed) may be read, never
  // written, up to kReadSlack bytes past size(): its allocation is that much
  // longer, zeroed. XNNPACK reads up to XNN_EXTRA_BYTES (16) past the end
  // of its inputs, so a CPU island's tensors can be its inputs in place.
  static constexpr size_t kReadSlack = 64;
  bool has_read_slack() const { return data_ && (!data_.get_deleter().borrowed || data_.get_deleter().read_slack); }

 private:
  struct Free {
    // No initializer: unique_ptr value-initialises its deleter (false), and
    // a nested class's initializer would not make it default-constructible
    // inside AlignedBuffer.
    bool borrowed;
    bool read_slack;  // borrowed only: see borrow()
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> data_;
  size_t size_ = 0;
};

// A tensor with its data on the host. Used for constants, model inputs and
// outputs, and by the CPU delegate.
class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor of `type`, which must be static.
  explicit Tensor(TensorType type);
  // A tensor of `type` (static) whose bytes the caller writes before reading.
  static Tensor uninitialized(TensorType type);
  // A tensor of `type` (static) over the caller's bytes (type.byte_size() of
  // them), which must outlive it; copies of it own their bytes. `read_slack`
  // as for AlignedBuffer::borrow.
  static Tensor borrow(TensorType type, void* data, bool read_slack = false);

  template <typename T>
  static Tensor from_vector(DType dtype, Shape shape, const std::vector<T>& values) {
    Tensor t(TensorType{dtype, std::move(shape)});
    std::memcpy(t.raw(), values.data(), std::min(t.byte_size(), values.size() * sizeof(T)));
    return t;
  }

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int64_t num_elements() const { return type_.num_elements(); }
  size_t byte_size() const { return buffer_.size(); }

  std::byte* raw() { return buffer_.data(); }
  const std::byte* raw() const { return buffer_.data(); }
  // Whether raw() may be read AlignedBuffer::kReadSlack bytes past the end
  // (the tensor owns its bytes).
  bool has_read_slack() const { return buffer_.has_read_slack(); }
  template <typename T>
  T* data() { return reinterpret_cast<T*>(buffer_.data()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(buffer_.data()); }
  template <typename T>
  std::span<T> span() { return {data<T>(), static_cast<size_t>(num_elements())}; }
  template <typename T>
  std::span<const T> span() const { return {data<T>(), static_cast<size_t>(num_elements())}; }

  // Integer element i of an integer tensor (i64, i32, u8, i8, bool), widened.
  int64_t int_at(int64_t i) const;
  // All elements of an integer tensor, widened to int64.
  std::vector<int64_t> to_int64_vector() const;
  // All elements of a float tensor as float.
  std::vector<float> to_float_vector() const;

 private:
  TensorType type_;
  AlignedBuffer buffer_;
};

}  // namespace hetsched

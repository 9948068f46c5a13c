// Tensor: the runtime's value (the interpreter's operands and results, the compiled step's
// inputs and outputs, the trainer's batches). An element type, a row-major shape of int64
// dims and a data pointer, either
//   * owning: a block from a CachingAllocator (or the heap), shared by every copy of the
//     Tensor and by reshapes of it; the block goes back when the last holder drops it; or
//   * a view: external memory (e.g. a ParamStore weight) the Tensor never frees; the owner
//     keeps it alive while any view of it is used.
// Copies are cheap (a shared_ptr copy) and share the data: a Tensor has value semantics
// only by convention, the interpreter writing into a buffer only when it holds its sole
// reference (see interpreter.h, donation).
#ifndef GPT_SFT_RUNTIME_BASE_TENSOR_H_
#define GPT_SFT_RUNTIME_BASE_TENSOR_H_

#include <cassert>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace gpt_sft::runtime {

class CachingAllocator;

enum class DType { kF32, kF64, kI32 };

size_t DTypeSize(DType dtype);
/// "f32", "f64", "i32" (MLIR's spelling).
const char* DTypeName(DType dtype);

template <typename T>
constexpr DType DTypeOf() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>,
                "Tensor elements are float, double or int32_t");
  if constexpr (std::is_same_v<T, float>) return DType::kF32;
  if constexpr (std::is_same_v<T, double>) return DType::kF64;
  return DType::kI32;
}

using Shape = std::vector<int64_t>;

int64_t NumElements(const Shape& shape);
/// "[4,2048,256]"; "[]" for rank 0.
std::string ShapeToString(const Shape& shape);

class Tensor {
 public:
  /// The null tensor: no type, no data (defined() is false).
  Tensor() = default;

  /// Uninitialised, 64-byte aligned, from `allocator` (null: the heap, uncached). Returns
  /// a null tensor when the memory is refused.
  static Tensor Empty(DType dtype, Shape shape, CachingAllocator* allocator = nullptr);
  static Tensor Zeros(DType dtype, Shape shape, CachingAllocator* allocator = nullptr);
  /// A non-owning view of `data` (numel elements of `dtype`); never freed by the Tensor.
  static Tensor View(DType dtype, Shape shape, void* data);
  /// `data` inside `storage`, which the Tensor shares (the interpreter's donated views
  /// get a storage with a no-op deleter so that its sole-holder test applies to them).
  static Tensor FromStorage(DType dtype, Shape shape, std::shared_ptr<void> storage, void* data);

  /// A heap tensor holding `values` (tests, small inputs). values.size() == numel.
  template <typename T>
  static Tensor FromVector(Shape shape, const std::vector<T>& values) {
    Tensor t = Empty(DTypeOf<T>(), std::move(shape));
    assert(static_cast<int64_t>(values.size()) == t.numel());
    if (!values.empty()) std::memcpy(t.raw_data(), values.data(), t.bytes());
    return t;
  }
  /// A rank-0 tensor (a loss, lr, step).
  template <typename T>
  static Tensor Scalar(T value) {
    return FromVector<T>({}, {value});
  }

  bool defined() const { return data_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numel() const { return NumElements(shape_); }
  size_t bytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype_); }

  void* raw_data() const { return data_; }
  template <typename T>
  T* data() const {
    assert(DTypeOf<T>() == dtype_);
    return static_cast<T*>(data_);
  }
  /// The elements copied out (tests, small results).
  template <typename T>
  std::vector<T> ToVector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + numel());
  }
  /// The value of a rank-0 (or one-element) float or int tensor, as a double.
  double ScalarAsDouble() const;

  /// True for a non-owning view (no storage).
  bool is_view() const { return storage_ == nullptr; }
  /// How many Tensors share this one's storage (0 for a view).
  long storage_use_count() const { return storage_.use_count(); }
  const std::shared_ptr<void>& storage() const { return storage_; }

  /// The same data under another shape with the same element count (shares storage).
  Tensor Reshaped(Shape shape) const;
  /// A fresh owning copy of the data.
  Tensor Clone(CachingAllocator* allocator = nullptr) const;

  /// "[4,2048,256] f32".
  std::string ShapeString() const;

 private:
  DType dtype_ = DType::kF32;
  Shape shape_;
  std::shared_ptr<void> storage_;  // null for a view
  void* data_ = nullptr;
};

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_BASE_TENSOR_H_

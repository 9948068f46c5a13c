// Implements Tensor.
#include "runtime/base/tensor.h"

#include <cstdlib>

#include "runtime/base/caching_allocator.h"

namespace gpt_sft::runtime {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF64: return 8;
    case DType::kI32: return 4;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kI32: return "i32";
  }
  return "?";
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

Tensor Tensor::Empty(DType dtype, Shape shape, CachingAllocator* allocator) {
  const size_t bytes = static_cast<size_t>(NumElements(shape)) * DTypeSize(dtype);
  std::shared_ptr<void> storage;
  if (allocator != nullptr) {
    storage = allocator->Allocate(bytes);
  } else {
    // aligned_alloc wants a multiple of the alignment; at least one granule, so that an
    // empty tensor still has a non-null data pointer.
    const size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    void* block = std::aligned_alloc(kTensorAlignment, rounded == 0 ? kTensorAlignment : rounded);
    if (block != nullptr) storage = std::shared_ptr<void>(block, [](void* p) { std::free(p); });
  }
  if (storage == nullptr) return Tensor();
  void* data = storage.get();
  return FromStorage(dtype, std::move(shape), std::move(storage), data);
}

Tensor Tensor::Zeros(DType dtype, Shape shape, CachingAllocator* allocator) {
  Tensor t = Empty(dtype, std::move(shape), allocator);
  if (t.defined()) std::memset(t.raw_data(), 0, t.bytes());
  return t;
}

Tensor Tensor::View(DType dtype, Shape shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  return t;
}

Tensor Tensor::FromStorage(DType dtype, Shape shape, std::shared_ptr<void> storage, void* data) {
  Tensor t = View(dtype, std::move(shape), data);
  t.storage_ = std::move(storage);
  return t;
}

double Tensor::ScalarAsDouble() const {
  assert(numel() == 1);
  switch (dtype_) {
    case DType::kF32: return *data<float>();
    case DType::kF64: return *data<double>();
    case DType::kI32: return *data<int32_t>();
  }
  return 0;
}

Tensor Tensor::Reshaped(Shape shape) const {
  assert(NumElements(shape) == numel());
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone(CachingAllocator* allocator) const {
  Tensor t = Empty(dtype_, shape_, allocator);
  if (t.defined() && bytes() > 0) std::memcpy(t.raw_data(), data_, bytes());
  return t;
}

std::string Tensor::ShapeString() const {
  return ShapeToString(shape_) + " " + DTypeName(dtype_);
}

}  // namespace gpt_sft::runtime

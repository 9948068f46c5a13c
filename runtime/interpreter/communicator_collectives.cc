#include "runtime/interpreter/communicator_collectives.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/base/caching_allocator.h"

namespace gpt_sft::runtime {
namespace {

namespace coll = collectives;

coll::DataType ToDataType(DType dtype) {
  switch (dtype) {
    case DType::kF32: return coll::DataType::kFloat32;
    case DType::kF64: return coll::DataType::kFloat64;
    case DType::kI32: return coll::DataType::kInt32;
  }
  return coll::DataType::kFloat32;
}

coll::ReduceOp ToReduceOp(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSum: return coll::ReduceOp::kSum;
    case Reduction::kAvg: return coll::ReduceOp::kAvg;
    case Reduction::kMax: return coll::ReduceOp::kMax;
    case Reduction::kMin: return coll::ReduceOp::kMin;
  }
  return coll::ReduceOp::kSum;
}

// x viewed as [outer, along, inner] around `dim`, in bytes for inner.
struct Split {
  int64_t outer = 1;
  int64_t along = 1;
  size_t inner_bytes = 0;
};

Split SplitAround(const Tensor& x, int64_t dim) {
  Split split;
  split.along = x.dim(dim);
  int64_t inner = 1;
  for (int64_t d = 0; d < dim; ++d) split.outer *= x.dim(d);
  for (int64_t d = dim + 1; d < x.rank(); ++d) inner *= x.dim(d);
  split.inner_bytes = static_cast<size_t>(inner) * DTypeSize(x.dtype());
  return split;
}

// Copies [outer, blocks * rows, inner] (from) to [blocks, outer, rows, inner] (to), or back
// when `to_blocks` is false.
void Regroup(const char* from, char* to, const Split& split, int64_t blocks, int64_t rows, bool to_blocks) {
  const size_t row_bytes = static_cast<size_t>(rows) * split.inner_bytes;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t o = 0; o < split.outer; ++o) {
      const size_t strided = (static_cast<size_t>(o * blocks + b)) * row_bytes;
      const size_t blocked = (static_cast<size_t>(b * split.outer + o)) * row_bytes;
      if (to_blocks) {
        std::memcpy(to + blocked, from + strided, row_bytes);
      } else {
        std::memcpy(to + strided, from + blocked, row_bytes);
      }
    }
  }
}

absl::StatusOr<Tensor> Allocate(DType dtype, Shape shape, CachingAllocator* allocator) {
  Tensor t = Tensor::Empty(dtype, shape, allocator);
  if (!t.defined() && NumElements(shape) > 0) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory for a ", ShapeToString(shape), " ",
                                                     DTypeName(dtype), " collective buffer"));
  }
  return t;
}

}  // namespace

int CommunicatorCollectives::GroupSize(std::string_view group) const {
  return group == "dp" ? communicator_.world_size() : 0;
}

absl::Status CommunicatorCollectives::CheckGroup(std::string_view op, std::string_view group) const {
  if (group == "dp") return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(std::string(op), ": unknown group \"", std::string(group),
                                                 "\"; the ", std::string(communicator_.backend()),
                                                 " communicator serves only \"dp\" (every rank)"));
}

absl::StatusOr<Tensor> CommunicatorCollectives::AllReduce(std::string_view group, Reduction reduction,
                                                          const Tensor& x, CachingAllocator* allocator) {
  if (absl::Status s = CheckGroup("all_reduce", group); !s.ok()) return s;
  absl::StatusOr<Tensor> result = Allocate(x.dtype(), x.shape(), allocator);
  if (!result.ok()) return result.status();
  if (x.numel() > 0) std::memcpy(result->raw_data(), x.raw_data(), x.bytes());
  if (absl::Status s = communicator_.AllReduce(result->raw_data(), x.numel(), ToDataType(x.dtype()),
                                               ToReduceOp(reduction));
      !s.ok()) {
    return s;
  }
  return result;
}

absl::StatusOr<Tensor> CommunicatorCollectives::ReduceScatter(std::string_view group, Reduction reduction,
                                                              int64_t dim, const Tensor& x,
                                                              CachingAllocator* allocator) {
  if (absl::Status s = CheckGroup("reduce_scatter", group); !s.ok()) return s;
  const int ranks = communicator_.world_size();
  if (dim < 0 || dim >= x.rank() || x.dim(dim) % ranks != 0) {
    return absl::InvalidArgumentError(absl::StrCat("reduce_scatter: dim ", dim, " of ", x.ShapeString(),
                                                   " does not split into ", ranks, " ranks"));
  }
  const Split split = SplitAround(x, dim);
  const int64_t rows = split.along / ranks;
  Shape shape = x.shape();
  shape[dim] = rows;
  absl::StatusOr<Tensor> result = Allocate(x.dtype(), shape, allocator);
  if (!result.ok()) return result.status();

  // Along dim 0 each rank's block is already contiguous; otherwise stage [ranks, outer, rows, inner].
  Tensor staged = x;
  if (split.outer > 1) {
    absl::StatusOr<Tensor> packed = Allocate(x.dtype(), x.shape(), allocator);
    if (!packed.ok()) return packed.status();
    Regroup(static_cast<const char*>(x.raw_data()), static_cast<char*>(packed->raw_data()), split, ranks, rows,
            /*to_blocks=*/true);
    staged = *std::move(packed);
  }
  if (absl::Status s = communicator_.ReduceScatter(staged.raw_data(), result->raw_data(), result->numel(),
                                                   ToDataType(x.dtype()), ToReduceOp(reduction));
      !s.ok()) {
    return s;
  }
  return result;
}

absl::StatusOr<Tensor> CommunicatorCollectives::AllGather(std::string_view group, int64_t dim, const Tensor& x,
                                                          CachingAllocator* allocator) {
  if (absl::Status s = CheckGroup("all_gather", group); !s.ok()) return s;
  const int ranks = communicator_.world_size();
  if (dim < 0 || dim >= x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("all_gather: dim ", dim, " is out of range for ", x.ShapeString()));
  }
  const Split split = SplitAround(x, dim);
  Shape shape = x.shape();
  shape[dim] *= ranks;
  absl::StatusOr<Tensor> result = Allocate(x.dtype(), shape, allocator);
  if (!result.ok()) return result.status();

  // Ranks' blocks arrive one after another: that is the result along dim 0; otherwise the
  // gathered [ranks, outer, rows, inner] is unpacked.
  Tensor gathered = *result;
  if (split.outer > 1) {
    absl::StatusOr<Tensor> staging = Allocate(x.dtype(), shape, allocator);
    if (!staging.ok()) return staging.status();
    gathered = *std::move(staging);
  }
  if (absl::Status s = communicator_.AllGather(x.raw_data(), gathered.raw_data(), x.numel(), ToDataType(x.dtype()));
      !s.ok()) {
    return s;
  }
  if (split.outer > 1) {
    Regroup(static_cast<const char*>(gathered.raw_data()), static_cast<char*>(result->raw_data()), split, ranks,
            split.along, /*to_blocks=*/false);
  }
  return result;
}

}  // namespace gpt_sft::runtime

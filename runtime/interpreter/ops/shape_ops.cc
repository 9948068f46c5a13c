// gpt.reshape (no copy: the result shares the operand's buffer, which nothing writes
// while it is shared) and gpt.transpose (a copy, tiled so both sides stream).
#include <algorithm>
#include <cstring>

#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/permute.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

absl::Status Reshape(OpContext& ctx) {
  auto op = ctx.As<gpt::ReshapeOp>();
  const Tensor& x = ctx.Get(op.getX());
  Shape shape(op.getShape().begin(), op.getShape().end());
  int64_t known = 1, inferred = -1;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (shape[i] == -1) {
      inferred = i;
    } else {
      known *= shape[i];
    }
  }
  if (inferred >= 0 && known != 0 && x.numel() % known == 0) shape[inferred] = x.numel() / known;
  if (NumElements(shape) != x.numel() || (inferred >= 0 && shape[inferred] < 0)) {
    return ctx.Error(absl::StrCat("cannot reshape ", x.ShapeString(), " (", x.numel(), " elements) to ",
                                  ShapeToString(Shape(op.getShape().begin(), op.getShape().end()))));
  }
  return ctx.SetResult(op.getResult(), x.Reshaped(shape));
}

/// out = x permuted (out dim i = x dim perm[i]). The input's
/// innermost dim lands at output dim q: when q is last, rows are copied whole; otherwise
/// 32x32 tiles of (output dim q, output's last dim) read and write contiguous runs.
/// E is an unsigned integer of the element's size (the copy moves bits only).
absl::Status Transpose(OpContext& ctx) {
  auto op = ctx.As<gpt::TransposeOp>();
  const Tensor& x = ctx.Get(op.getX());
  std::vector<int64_t> perm(op.getPerm().begin(), op.getPerm().end());
  if (static_cast<int64_t>(perm.size()) != x.rank()) {
    return ctx.Error("perm " + ShapeToString(perm) + " does not permute the dims of " + x.ShapeString());
  }
  Shape shape;
  for (int64_t p : perm) shape.push_back(x.dim(p));
  auto y = ctx.AllocateResult(op.getResult(), shape);
  if (!y.ok()) return y.status();
  if (x.numel() == 0) return absl::OkStatus();
  if (x.rank() == 0) {
    std::memcpy(y->raw_data(), x.raw_data(), x.bytes());
    return absl::OkStatus();
  }
  if (x.rank() > k::kMaxPermuteRank) return ctx.Unimplemented("transposes of rank > 8 are not supported");
  const int rank = static_cast<int>(x.rank());
  if (DTypeSize(x.dtype()) == 8) {
    k::Permute(static_cast<const uint64_t*>(x.raw_data()), static_cast<uint64_t*>(y->raw_data()), x.shape().data(),
               perm.data(), rank);
  } else {
    k::Permute(static_cast<const uint32_t*>(x.raw_data()), static_cast<uint32_t*>(y->raw_data()), x.shape().data(),
               perm.data(), rank);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterShapeOps(OpRegistry& registry) {
  registry.Register("gpt.reshape", Reshape);
  registry.Register("gpt.transpose", Transpose);
}

}  // namespace gpt_sft::runtime::interp

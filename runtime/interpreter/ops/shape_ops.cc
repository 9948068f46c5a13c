// gpt.reshape (no copy: the result shares the operand's buffer, which nothing writes
// while it is shared) and gpt.transpose (a copy, tiled so both sides stream).
#include <algorithm>
#include <cstring>

#include "compiler/dialect/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/parallel.h"

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
template <typename E>
void PermuteCopy(const E* in, E* out, const Shape& in_dims, const std::vector<int64_t>& perm) {
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  std::vector<int64_t> in_stride(rank, 1), out_dims(rank), src_stride(rank), out_stride(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * in_dims[i + 1];
  for (int64_t i = 0; i < rank; ++i) {
    out_dims[i] = in_dims[perm[i]];
    src_stride[i] = in_stride[perm[i]];
  }
  for (int64_t i = rank - 2; i >= 0; --i) out_stride[i] = out_stride[i + 1] * out_dims[i + 1];
  const int64_t last = rank - 1;
  const int64_t q = std::find(perm.begin(), perm.end(), last) - perm.begin();
  constexpr int64_t kTile = 32;
  // The dims other than q and last are enumerated by `outer`; tiles of dim q split further.
  std::vector<int64_t> others;
  int64_t outer = 1;
  for (int64_t i = 0; i < last; ++i) {
    if (i != q) {
      others.push_back(i);
      outer *= out_dims[i];
    }
  }
  const int64_t a_len = q == last ? 1 : out_dims[q];
  const int64_t a_tiles = (a_len + kTile - 1) / kTile;
  const int64_t b_len = out_dims[last];
  k::ParallelFor(outer * a_tiles, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      int64_t rest = task / a_tiles, src = 0, dst = 0;
      for (int64_t j = static_cast<int64_t>(others.size()) - 1; j >= 0; --j) {
        const int64_t d = others[j], idx = rest % out_dims[d];
        rest /= out_dims[d];
        src += idx * src_stride[d];
        dst += idx * out_stride[d];
      }
      if (q == last) {
        std::memcpy(out + dst, in + src, b_len * sizeof(E));
        continue;
      }
      const int64_t a0 = (task % a_tiles) * kTile, a1 = std::min(a_len, a0 + kTile);
      for (int64_t b0 = 0; b0 < b_len; b0 += kTile) {
        const int64_t b1 = std::min(b_len, b0 + kTile);
        for (int64_t a = a0; a < a1; ++a) {
          for (int64_t b = b0; b < b1; ++b) {
            out[dst + a * out_stride[q] + b] = in[src + a + b * src_stride[last]];
          }
        }
      }
    }
  });
}

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
  if (DTypeSize(x.dtype()) == 8) {
    PermuteCopy(static_cast<const uint64_t*>(x.raw_data()), static_cast<uint64_t*>(y->raw_data()), x.shape(), perm);
  } else {
    PermuteCopy(static_cast<const uint32_t*>(x.raw_data()), static_cast<uint32_t*>(y->raw_data()), x.shape(), perm);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterShapeOps(OpRegistry& registry) {
  registry.Register("gpt.reshape", Reshape);
  registry.Register("gpt.transpose", Transpose);
}

}  // namespace gpt_sft::runtime::interp

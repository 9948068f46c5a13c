// gpt.embedding (row gather) and gpt.embedding_grad (scatter-add into a zeroed table),
// through runtime/kernels/cpu/embedding.h. Ids are checked against the vocabulary here: an
// id out of range is an error naming the op, not a wild read.
#include <cstring>

#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/embedding.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

absl::Status CheckIds(const OpContext& ctx, const Tensor& ids, int64_t vocab) {
  if (ids.dtype() != DType::kI32) return ctx.Error("ids must be i32, got " + ids.ShapeString());
  const int32_t* p = ids.data<int32_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (p[i] < 0 || p[i] >= vocab) {
      return ctx.Error(absl::StrCat("id ", p[i], " at flat index ", i, " of ids ", ids.ShapeString(),
                                    " is outside the vocabulary [0, ", vocab, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status Embedding(OpContext& ctx) {
  auto op = ctx.As<gpt::EmbeddingOp>();
  const Tensor& table = ctx.Get(op.getTable());
  const Tensor& ids = ctx.Get(op.getIds());
  if (absl::Status s = RequireRank(ctx, "table", table, 2, "[V, C]"); !s.ok()) return s;
  if (absl::Status s = CheckIds(ctx, ids, table.dim(0)); !s.ok()) return s;
  Shape shape = ids.shape();
  shape.push_back(table.dim(1));
  auto out = ctx.AllocateResult(op.getResult(), shape);
  if (!out.ok()) return out.status();
  return DispatchFloat(ctx, "table", table, [&](auto zero) {
    using T = decltype(zero);
    k::Embedding(table.data<T>(), ids.data<int32_t>(), out->template data<T>(), ids.numel(), table.dim(1));
    return absl::OkStatus();
  });
}

absl::Status EmbeddingGrad(OpContext& ctx) {
  auto op = ctx.As<gpt::EmbeddingGradOp>();
  const Tensor& ids = ctx.Get(op.getIds());
  const Tensor& dy = ctx.Get(op.getDy());
  const int64_t vocab = static_cast<int64_t>(op.getVocabSize());
  bool ok = dy.rank() == ids.rank() + 1;
  for (int64_t i = 0; ok && i < ids.rank(); ++i) ok = ids.dim(i) == dy.dim(i);
  if (!ok) {
    return ctx.Error("dy must be [..., C] over ids [...], got ids " + ids.ShapeString() + " and dy " +
                     dy.ShapeString());
  }
  if (absl::Status s = CheckIds(ctx, ids, vocab); !s.ok()) return s;
  const int64_t C = dy.dim(dy.rank() - 1);
  auto dtable = ctx.AllocateResult(op.getResult(), {vocab, C});
  if (!dtable.ok()) return dtable.status();
  std::memset(dtable->raw_data(), 0, dtable->bytes());
  return DispatchFloat(ctx, "dy", dy, [&](auto zero) {
    using T = decltype(zero);
    k::EmbeddingGrad(dy.data<T>(), ids.data<int32_t>(), dtable->template data<T>(), ids.numel(), C);
    return absl::OkStatus();
  });
}

}  // namespace

void RegisterEmbeddingOps(OpRegistry& registry) {
  registry.Register("gpt.embedding", Embedding);
  registry.Register("gpt.embedding_grad", EmbeddingGrad);
}

}  // namespace gpt_sft::runtime::interp

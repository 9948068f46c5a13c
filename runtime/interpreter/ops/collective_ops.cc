// gpt.all_reduce, gpt.reduce_scatter and gpt.all_gather through the run's Collectives
// (InterpreterOptions::collectives; a single rank, identity, by default). The ops'
// group_size must equal the group's size in the Collectives.
#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;

Reduction ToReduction(gpt::ReductionKind kind) {
  switch (kind) {
    case gpt::ReductionKind::Sum: return Reduction::kSum;
    case gpt::ReductionKind::Avg: return Reduction::kAvg;
    case gpt::ReductionKind::Max: return Reduction::kMax;
    case gpt::ReductionKind::Min: return Reduction::kMin;
  }
  return Reduction::kSum;
}

absl::Status CheckSplit(const OpContext& ctx, const std::string& group, int64_t group_size, int64_t dim,
                        const Tensor& x) {
  const int size = ctx.collectives().GroupSize(group);
  if (group_size != size) {
    return ctx.Error(absl::StrCat("group_size ", group_size, " but group \"", group, "\" has ", size, " ranks"));
  }
  if (dim < 0 || dim >= x.rank()) return ctx.Error(absl::StrCat("dim ", dim, " is out of range for ", x.ShapeString()));
  return absl::OkStatus();
}

absl::Status AllReduce(OpContext& ctx) {
  auto op = ctx.As<gpt::AllReduceOp>();
  auto result = ctx.collectives().AllReduce(op.getGroup().str(), ToReduction(op.getReduction()), ctx.Get(op.getX()),
                                            ctx.allocator());
  if (!result.ok()) return ctx.Error(std::string(result.status().message()));
  return ctx.SetResult(op.getResult(), *std::move(result));
}

absl::Status ReduceScatter(OpContext& ctx) {
  auto op = ctx.As<gpt::ReduceScatterOp>();
  const Tensor& x = ctx.Get(op.getX());
  const std::string group = op.getGroup().str();
  const int64_t dim = static_cast<int64_t>(op.getDim());
  if (absl::Status s = CheckSplit(ctx, group, static_cast<int64_t>(op.getGroupSize()), dim, x); !s.ok()) return s;
  if (x.dim(dim) % static_cast<int64_t>(op.getGroupSize()) != 0) {
    return ctx.Error(absl::StrCat("dim ", dim, " of ", x.ShapeString(), " does not divide by group_size ",
                                  static_cast<int64_t>(op.getGroupSize())));
  }
  auto result = ctx.collectives().ReduceScatter(group, ToReduction(op.getReduction()), dim, x, ctx.allocator());
  if (!result.ok()) return ctx.Error(std::string(result.status().message()));
  return ctx.SetResult(op.getResult(), *std::move(result));
}

absl::Status AllGather(OpContext& ctx) {
  auto op = ctx.As<gpt::AllGatherOp>();
  const Tensor& x = ctx.Get(op.getX());
  const std::string group = op.getGroup().str();
  const int64_t dim = static_cast<int64_t>(op.getDim());
  if (absl::Status s = CheckSplit(ctx, group, static_cast<int64_t>(op.getGroupSize()), dim, x); !s.ok()) return s;
  auto result = ctx.collectives().AllGather(group, dim, x, ctx.allocator());
  if (!result.ok()) return ctx.Error(std::string(result.status().message()));
  return ctx.SetResult(op.getResult(), *std::move(result));
}

}  // namespace

void RegisterCollectiveOps(OpRegistry& registry) {
  registry.Register("gpt.all_reduce", AllReduce);
  registry.Register("gpt.reduce_scatter", ReduceScatter);
  registry.Register("gpt.all_gather", AllGather);
}

}  // namespace gpt_sft::runtime::interp

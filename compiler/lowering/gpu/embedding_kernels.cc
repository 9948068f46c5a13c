//===- embedding_kernels.cc - GPU kernels for gpt.embedding and its gradient -===//
//
// This file implements EmitEmbedding.
//   * gpt.embedding: a gather, one work-item per output element: out[n, c] = table[ids[n], c].
//   * gpt.embedding_grad: the scatter-add dtable[ids[n], :] += dy[n, :], deterministic and
//     without atomics (OpenCL's SPIR-V has no float atomics), in three kernels:
//       1. links: for every token n, whether it is its id's first occurrence and the next token
//          with the same id (N when none): each workgroup stages the ids in chunks of its size
//          through workgroup memory, so a token compares against every other at O(N^2 / W)
//          global reads per workgroup;
//       2. zero the table;
//       3. per (first-occurrence token, channel): walk the token's chain in token order and
//          store the sum - the order the interpreter adds in, so the sums are bit-identical.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

constexpr int64_t kBlock = 256;

int64_t GridFor(int64_t n) { return std::min<int64_t>(CeilDiv(n, kBlock), 65535); }

mlir::LogicalResult EmitGather(lowering::OpLowering& lowering, gpt::EmbeddingOp e) {
  mlir::OpBuilder& host = lowering.builder();
  auto table_type = llvm::cast<mlir::MemRefType>(lowering.BufferOf(e.getTable()).getType());
  const int64_t C = table_type.getDimSize(1);
  Value table = Flatten(host, lowering.loc(), lowering.BufferOf(e.getTable()));
  Value ids = Flatten(host, lowering.loc(), lowering.BufferOf(e.getIds()));
  Value out = Flatten(host, lowering.loc(), lowering.result(0));
  const int64_t n = llvm::cast<mlir::MemRefType>(out.getType()).getNumElements();
  lowering.RequireArgumentRange(e.getIds(), 0, table_type.getDimSize(0));
  const int64_t grid = GridFor(n);
  EmitLaunch(host, lowering.loc(), "embedding", {grid, 1, 1}, {kBlock, 1, 1}, {}, [&](KernelBuilder& k, mlir::ValueRange) {
    k.For(k.GlobalId(), k.Index(n), k.Index(grid * kBlock), [&](Value i) {
      Value token = k.Div(i, k.Index(C)), c = k.Rem(i, k.Index(C));
      Value row = k.IndexFromI32(k.Load(ids, {token}));
      k.Store(k.Load(table, {k.Add(k.Mul(row, k.Index(C)), c)}), out, {i});
    });
  });
  return mlir::success();
}

/// Kernel 1: first[n] (1 or 0) and next[n] (the next token with ids[n], or N).
void EmitLinks(mlir::OpBuilder& host, mlir::Location loc, Value ids, Value first, Value next, int64_t N) {
  mlir::MLIRContext* ctx = host.getContext();
  const int64_t grid = CeilDiv(N, kBlock);
  mlir::Type i32 = host.getI32Type();
  EmitLaunch(host, loc, "embedding_grad_links", {grid, 1, 1}, {kBlock, 1, 1}, {WorkgroupMemRef(ctx, {kBlock}, i32)},
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value staged = wg[0];
               Value n = k.GlobalId(), tid = k.ThreadId(0);
               Value in_range = k.Lt(n, k.Index(N));
               Value my = k.IfElse(in_range, {i32}, [&] { return llvm::SmallVector<Value>{k.Load(ids, {n})}; },
                                   [&] { return llvm::SmallVector<Value>{k.I32(-1)}; })[0];
               llvm::SmallVector<Value> init = {k.I32(1), k.Index(N)};
               llvm::SmallVector<Value> found = k.For(
                   k.Index(0), k.Index(N), k.Index(kBlock), init, [&](Value chunk, mlir::ValueRange carried) {
                     Value m = k.Add(chunk, tid);
                     Value id = k.IfElse(k.Lt(m, k.Index(N)), {i32},
                                         [&] { return llvm::SmallVector<Value>{k.Load(ids, {m})}; },
                                         [&] { return llvm::SmallVector<Value>{k.I32(-2)}; })[0];
                     k.Barrier();  // the previous chunk's readers are done
                     k.Store(id, staged, {tid});
                     k.Barrier();
                     return k.For(k.Index(0), k.Index(kBlock), k.Index(1), carried,
                                  [&](Value j, mlir::ValueRange state) {
                                    Value other = k.Add(chunk, j);
                                    Value same = k.b().create<mlir::arith::CmpIOp>(
                                        mlir::arith::CmpIPredicate::eq, k.Load(staged, {j}), my);
                                    Value before = k.And(same, k.Lt(other, n));
                                    Value after = k.And(k.And(same, k.Lt(n, other)), k.Eq(state[1], k.Index(N)));
                                    return llvm::SmallVector<Value>{k.Select(before, k.I32(0), state[0]),
                                                                    k.Select(after, other, state[1])};
                                  });
                   });
               k.If(in_range, [&] {
                 k.Store(found[0], first, {n});
                 k.Store(k.I32FromIndex(found[1]), next, {n});
               });
             });
}

mlir::LogicalResult EmitScatterAdd(lowering::OpLowering& lowering, gpt::EmbeddingGradOp e) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  Value ids = Flatten(host, loc, lowering.BufferOf(e.getIds()));
  Value dy = Flatten(host, loc, lowering.BufferOf(e.getDy()));
  Value dtable = Flatten(host, loc, lowering.result(0));
  auto dy_type = llvm::cast<mlir::MemRefType>(lowering.BufferOf(e.getDy()).getType());
  const int64_t C = dy_type.getDimSize(dy_type.getRank() - 1);
  const int64_t N = dy_type.getNumElements() / C;
  const int64_t table = llvm::cast<mlir::MemRefType>(dtable.getType()).getNumElements();
  lowering.RequireArgumentRange(e.getIds(), 0, e.getVocabSize());
  mlir::Type i32 = host.getI32Type();
  Value first = lowering.Scratch(mlir::MemRefType::get({N}, i32));
  Value next = lowering.Scratch(mlir::MemRefType::get({N}, i32));
  EmitLinks(host, loc, ids, first, next, N);
  mlir::Type f = llvm::cast<mlir::ShapedType>(e.getDy().getType()).getElementType();  // dy may be stored bf16
  const int64_t zero_grid = GridFor(table);
  EmitLaunch(host, loc, "zero", {zero_grid, 1, 1}, {kBlock, 1, 1}, {}, [&](KernelBuilder& k, mlir::ValueRange) {
    k.For(k.GlobalId(), k.Index(table), k.Index(zero_grid * kBlock),
          [&](Value i) { k.Store(k.Float(f, 0.0), dtable, {i}); });
  });
  const int64_t grid = GridFor(N * C);
  EmitLaunch(host, loc, "embedding_grad_sum", {grid, 1, 1}, {kBlock, 1, 1}, {}, [&](KernelBuilder& k, mlir::ValueRange) {
    k.For(k.GlobalId(), k.Index(N * C), k.Index(grid * kBlock), [&](Value i) {
      Value n = k.Div(i, k.Index(C)), c = k.Rem(i, k.Index(C));
      Value is_first = k.b().create<mlir::arith::CmpIOp>(mlir::arith::CmpIPredicate::ne, k.Load(first, {n}), k.I32(0));
      k.If(is_first, [&] {
        // while (m < N) { sum += dy[m, c]; m = next[m]; }  (m carried as i32: index-typed
        // loop values do not convert to SPIR-V)
        mlir::ImplicitLocOpBuilder& b = k.b();
        mlir::Type i32 = b.getI32Type();
        auto loop = b.create<mlir::scf::WhileOp>(mlir::TypeRange{i32, f}, mlir::ValueRange{k.I32FromIndex(n), k.Float(f, 0.0)});
        {
          mlir::OpBuilder::InsertionGuard guard(b);
          mlir::Location l = b.getLoc();
          mlir::Block* before = b.createBlock(&loop.getBefore(), {}, {i32, f}, {l, l});
          b.setInsertionPointToEnd(before);
          Value more = b.create<mlir::arith::CmpIOp>(mlir::arith::CmpIPredicate::slt, before->getArgument(0),
                                                     k.I32(static_cast<int32_t>(N)));
          b.create<mlir::scf::ConditionOp>(more, before->getArguments());
          mlir::Block* after = b.createBlock(&loop.getAfter(), {}, {i32, f}, {l, l});
          b.setInsertionPointToEnd(after);
          Value m = k.IndexFromI32(after->getArgument(0));
          Value sum = k.FAdd(after->getArgument(1), k.Load(dy, {k.Add(k.Mul(m, k.Index(C)), c)}));
          b.create<mlir::scf::YieldOp>(mlir::ValueRange{k.Load(next, {m}), sum});
        }
        Value row = k.IndexFromI32(k.Load(ids, {n}));
        k.Store(loop.getResult(1), dtable, {k.Add(k.Mul(row, k.Index(C)), c)});
      });
    });
  });
  return mlir::success();
}

}  // namespace

mlir::LogicalResult EmitEmbedding(lowering::OpLowering& lowering) {
  if (auto e = llvm::dyn_cast<gpt::EmbeddingOp>(lowering.op())) return EmitGather(lowering, e);
  return EmitScatterAdd(lowering, llvm::cast<gpt::EmbeddingGradOp>(lowering.op()));
}

}  // namespace gpt_sft::compiler::gpu_lowering

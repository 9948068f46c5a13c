//===- mma_tile.cc - one warp's m16n8k16 bf16 tile product ----------------===//
//
// This file implements the two realizations of the warp tile product and of the reduction
// over a fragment row's four lanes (mma_tile.h), and the packing of bf16 pairs.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/mma_tile.h"

#include <cassert>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;
namespace arith = ::mlir::arith;

// The emulation's slice of workgroup memory per warp: A [16][16] and B [16][8] as f32.
constexpr int64_t kScratchA = 16 * 16, kScratchB = 16 * 8, kScratchPerWarp = kScratchA + kScratchB;

Value Bits(KernelBuilder& k, Value f32) { return k.b().create<arith::BitcastOp>(k.b().getI32Type(), f32); }
Value FromBits(KernelBuilder& k, Value i32) { return k.b().create<arith::BitcastOp>(k.b().getF32Type(), i32); }
Value Shr(KernelBuilder& k, Value v, int32_t n) { return k.b().create<arith::ShRUIOp>(v, k.I32(n)); }
Value Shl(KernelBuilder& k, Value v, int32_t n) { return k.b().create<arith::ShLIOp>(v, k.I32(n)); }
Value AndI(KernelBuilder& k, Value v, int32_t mask) { return k.b().create<arith::AndIOp>(v, k.I32(mask)); }
Value OrI(KernelBuilder& k, Value a, Value b) { return k.b().create<arith::OrIOp>(a, b); }
Value AddI(KernelBuilder& k, Value a, Value b) { return k.b().create<arith::AddIOp>(a, b); }

/// The upper 16 bits of f32 `x` rounded to nearest, ties to even, in the lower half of an i32.
Value RoundedHalf(KernelBuilder& k, Value x) {
  Value bits = Bits(k, x);
  Value odd = AndI(k, Shr(k, bits, 16), 1);
  return Shr(k, AddI(k, bits, AddI(k, k.I32(0x7FFF), odd)), 16);
}

/// The f32 values of the lower and upper bf16 of `packed`.
std::pair<Value, Value> Unpack(KernelBuilder& k, Value packed) {
  return {FromBits(k, Shl(k, packed, 16)), FromBits(k, AndI(k, packed, static_cast<int32_t>(0xFFFF0000u)))};
}

}  // namespace

Value PackBf16x2(KernelBuilder& k, Value lo, Value hi) {
  return OrI(k, Shr(k, Bits(k, lo), 16), AndI(k, Bits(k, hi), static_cast<int32_t>(0xFFFF0000u)));
}

Value RoundToBf16(KernelBuilder& k, Value x) { return FromBits(k, Shl(k, RoundedHalf(k, x), 16)); }

Value PackBf16x2Rounded(KernelBuilder& k, Value lo, Value hi) {
  return OrI(k, RoundedHalf(k, lo), Shl(k, RoundedHalf(k, hi), 16));
}

WarpTiles::WarpTiles(KernelBuilder& k, MmaRealization how, Value scratch) : k_(k), how_(how), scratch_(scratch) {
  assert((how == MmaRealization::kNvvm) == !scratch && "the emulation, and only it, needs scratch");
  Value lid = k.LocalLinearId();
  lane_ = k.Rem(lid, k.Index(kWarpSize));
  warp_ = k.Div(lid, k.Index(kWarpSize));
  group_ = k.Div(lane_, k.Index(4));
  in_group_ = k.Rem(lane_, k.Index(4));
}

int64_t WarpTiles::ScratchFloats(MmaRealization how, int64_t threads) {
  return how == MmaRealization::kNvvm ? 0 : threads / kWarpSize * kScratchPerWarp;
}

FragC WarpTiles::Mma(const FragA& a, const FragB& b, const FragC& c) {
  auto& builder = k_.b();
  if (how_ == MmaRealization::kNvvm) {
    auto f32 = builder.getF32Type();
    auto result = mlir::LLVM::LLVMStructType::getLiteral(builder.getContext(), {f32, f32, f32, f32});
    auto call = builder.create<mlir::LLVM::CallIntrinsicOp>(
        result, "llvm.nvvm.mma.m16n8k16.row.col.bf16",
        mlir::ValueRange{a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], c[2], c[3]});
    FragC d;
    for (int64_t i = 0; i < 4; ++i) d[i] = builder.create<mlir::LLVM::ExtractValueOp>(call.getResult(0), i);
    return d;
  }
  // 1. Every lane puts its A and B elements where the layout says they are.
  Value base = k_.Mul(warp_, k_.Index(kScratchPerWarp));
  Value g = group_, t2 = k_.Mul(in_group_, k_.Index(2));
  auto at_a = [&](Value row, Value col) { return k_.Add(base, k_.Add(k_.Mul(row, k_.Index(16)), col)); };
  auto at_b = [&](Value row, Value col) {
    return k_.Add(base, k_.Add(k_.Index(kScratchA), k_.Add(k_.Mul(row, k_.Index(8)), col)));
  };
  auto plus = [&](Value v, int64_t n) { return k_.Add(v, k_.Index(n)); };
  k_.Barrier();  // every reader of the previous product is done
  const std::array<std::pair<int64_t, int64_t>, 4> a_at{{{0, 0}, {8, 0}, {0, 8}, {8, 8}}};  // (row, col) offsets
  for (int64_t i = 0; i < 4; ++i) {
    auto [lo, hi] = Unpack(k_, a[i]);
    Value row = plus(g, a_at[i].first), col = plus(t2, a_at[i].second);
    k_.Store(lo, scratch_, {at_a(row, col)});
    k_.Store(hi, scratch_, {at_a(row, plus(col, 1))});
  }
  for (int64_t i = 0; i < 2; ++i) {
    auto [lo, hi] = Unpack(k_, b[i]);
    Value row = plus(t2, 8 * i);
    k_.Store(lo, scratch_, {at_b(row, g)});
    k_.Store(hi, scratch_, {at_b(plus(row, 1), g)});
  }
  k_.Barrier();
  // 2. Each lane sums its four elements of D along k, in order.
  llvm::SmallVector<Value> sums =
      k_.For(k_.Index(0), k_.Index(16), k_.Index(1), {c[0], c[1], c[2], c[3]}, [&](Value kk, mlir::ValueRange acc) {
        Value a0 = k_.Load(scratch_, {at_a(g, kk)}), a1 = k_.Load(scratch_, {at_a(plus(g, 8), kk)});
        Value b0 = k_.Load(scratch_, {at_b(kk, t2)}), b1 = k_.Load(scratch_, {at_b(kk, plus(t2, 1))});
        return llvm::SmallVector<Value>{k_.Fma(a0, b0, acc[0]), k_.Fma(a0, b1, acc[1]), k_.Fma(a1, b0, acc[2]),
                                        k_.Fma(a1, b1, acc[3])};
      });
  return {sums[0], sums[1], sums[2], sums[3]};
}

llvm::SmallVector<Value> WarpTiles::GroupReduce(llvm::ArrayRef<Value> values, KernelBuilder::Reduction kind) {
  auto combine = [&](Value a, Value b) {
    return kind == KernelBuilder::Reduction::kSum ? k_.FAdd(a, b) : k_.FMax(a, b);
  };
  llvm::SmallVector<Value> out;
  if (how_ == MmaRealization::kNvvm) {
    for (Value v : values) {
      for (int32_t offset : {1, 2}) {
        auto shuffle = k_.b().create<mlir::gpu::ShuffleOp>(v, offset, kWarpSize, mlir::gpu::ShuffleMode::XOR);
        v = combine(v, shuffle.getShuffleResult());
      }
      out.push_back(v);
    }
    return out;
  }
  const int64_t threads = k_.threads();
  assert(static_cast<int64_t>(values.size()) * threads <= ScratchFloats(how_, threads));
  Value lid = k_.LocalLinearId();
  Value first = k_.Sub(lid, in_group_);
  k_.Barrier();
  for (size_t i = 0; i < values.size(); ++i) k_.Store(values[i], scratch_, {k_.Add(k_.Index(i * threads), lid)});
  k_.Barrier();
  for (size_t i = 0; i < values.size(); ++i) {
    Value at = k_.Add(k_.Index(i * threads), first);
    Value v = k_.Load(scratch_, {at});
    for (int64_t j = 1; j < 4; ++j) v = combine(v, k_.Load(scratch_, {k_.Add(at, k_.Index(j))}));
    out.push_back(v);
  }
  return out;
}

}  // namespace gpt_sft::compiler::gpu_lowering

// Implements LaunchBuilder: one launch per op of a compiled entry point. Each op's
// dimensions come from its static types (gpt-verify-static made them static), so a launch
// is a kernel call on fixed sizes and resolved addresses.
#include "runtime/executable/op_launches.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/fusion_kernels.h"
#include "compiler/dialect/gpt_ops.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "runtime/collectives/communicator.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/embedding.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/optimizers.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/permute.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/rotary.h"

namespace gpt_sft::runtime::exec {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;
using ::mlir::Value;

constexpr char kOffsetsAttr[] = "gpt.offsets";
constexpr char kDonatesAttr[] = "gpt.donates";
constexpr char kKernelAttr[] = "gpt.kernel";
constexpr int64_t kAlignment = 64;

std::string Describe(mlir::Operation* op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef() << " at ";
  op->getLoc().print(os);
  return os.str();
}

mlir::RankedTensorType TypeOf(Value v) { return llvm::dyn_cast<mlir::RankedTensorType>(v.getType()); }

std::optional<DType> DTypeOf(Value v) {
  auto t = TypeOf(v);
  if (!t) return std::nullopt;
  if (t.getElementType().isF32()) return DType::kF32;
  if (t.getElementType().isF64()) return DType::kF64;
  if (t.getElementType().isSignlessInteger(32)) return DType::kI32;
  return std::nullopt;
}

int64_t Elements(Value v) { return TypeOf(v).getNumElements(); }
int64_t Dim(Value v, int64_t i) { return TypeOf(v).getDimSize(i < 0 ? TypeOf(v).getRank() + i : i); }
int64_t Bytes(Value v) { return Elements(v) * static_cast<int64_t>(DTypeSize(*DTypeOf(v))); }
/// Product of all dims but the last (rows of a [..., C] tensor).
int64_t Rows(Value v) { return Elements(v) / Dim(v, -1); }

absl::StatusOr<BufferSpec> SpecOf(Value v, mlir::DictionaryAttr attrs, const std::string& what) {
  std::optional<DType> dtype = DTypeOf(v);
  auto type = TypeOf(v);
  if (!dtype || !type.hasStaticShape()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    v.getType().print(os);
    return absl::InvalidArgumentError(absl::StrCat(what, " has type ", os.str(),
                                                   "; the compiled path runs static f32, f64 and i32 tensors"));
  }
  BufferSpec spec;
  spec.dtype = *dtype;
  spec.shape.assign(type.getShape().begin(), type.getShape().end());
  if (attrs) {
    if (auto name = attrs.getAs<mlir::StringAttr>("gpt.name")) spec.name = name.str();
  }
  return spec;
}

/// Calls f(T{}) with T the float type of `v` (f32 or f64).
template <typename F>
absl::Status ForFloat(Value v, mlir::Operation* op, F&& f) {
  std::optional<DType> d = DTypeOf(v);
  if (d == DType::kF32) return f(float{});
  if (d == DType::kF64) return f(double{});
  return absl::UnimplementedError(absl::StrCat(Describe(op), ": expected an f32 or f64 operand"));
}

/// The elements of a dense constant, splat or not (as the interpreter's constant op fills them).
template <typename T>
void FillDense(mlir::DenseElementsAttr attr, T* out, int64_t n) {
  if (attr.isSplat()) {
    std::fill(out, out + n, attr.getSplatValue<T>());
    return;
  }
  int64_t i = 0;
  for (T value : attr.getValues<T>()) out[i++] = value;
}

absl::Status CheckIds(const int32_t* ids, int64_t n, int64_t vocab, const std::string& where) {
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": id ", ids[i], " at flat index ", i,
                                                     " is outside the vocabulary [0, ", vocab, ")"));
    }
  }
  return absl::OkStatus();
}

/// The gpt.softcap_grad that is the only reader of `ce`'s gradient (through single-use
/// reshapes, which are views) and whose y is the very logits `ce` differentiated (the same
/// value, or a reshape of it); null otherwise.
gpt::SoftcapGradOp SoftcapGradConsumer(gpt::CrossEntropyGradOp ce) {
  auto root = [](Value v) {
    while (auto r = v.getDefiningOp<gpt::ReshapeOp>()) v = r.getX();
    return v;
  };
  Value g = ce.getResult();
  while (g.hasOneUse()) {
    mlir::Operation* user = *g.getUsers().begin();
    if (auto r = llvm::dyn_cast<gpt::ReshapeOp>(user)) {
      g = r.getResult();
      continue;
    }
    auto softcap = llvm::dyn_cast<gpt::SoftcapGradOp>(user);
    if (!softcap || softcap.getDy() != g || root(softcap.getY()) != root(ce.getLogits()) ||
        Elements(softcap.getY()) != Elements(ce.getLogits()) || DTypeOf(softcap.getY()) != DTypeOf(ce.getLogits())) {
      return {};
    }
    // Only the chain's views may stand between the two: the plan placed the softcap's result
    // for its own position, and no other op may run in between on bytes it shares.
    for (mlir::Operation* between = ce->getNextNode(); between != softcap.getOperation();
         between = between->getNextNode()) {
      if (!llvm::isa<gpt::ReshapeOp>(between)) return {};
    }
    return softcap;
  }
  return {};
}

collectives::ReduceOp ToReduceOp(gpt::ReductionKind kind) {
  switch (kind) {
    case gpt::ReductionKind::Sum: return collectives::ReduceOp::kSum;
    case gpt::ReductionKind::Avg: return collectives::ReduceOp::kAvg;
    case gpt::ReductionKind::Max: return collectives::ReduceOp::kMax;
    case gpt::ReductionKind::Min: return collectives::ReduceOp::kMin;
  }
  return collectives::ReduceOp::kSum;
}

}  // namespace

char* LaunchBuilder::Own(int64_t bytes) {
  const int64_t rounded = std::max<int64_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  char* p = static_cast<char*>(std::aligned_alloc(kAlignment, rounded));
  std::memset(p, 0, rounded);
  owned_->buffers.emplace_back(p);
  owned_->bytes += rounded;
  return p;
}

WorkspaceRef LaunchBuilder::Scratch(int64_t bytes) {
  workspace_bytes_ = std::max(workspace_bytes_, k::RoundUpToWorkspaceAlignment(bytes));
  return WorkspaceRef{workspace_base_, bytes};
}

Address LaunchBuilder::OwnAddress(int64_t bytes) {
  owned_->bases.push_back(Own(bytes));
  return Address{&owned_->bases.back(), 0};
}

absl::StatusOr<std::unique_ptr<Schedule>> LaunchBuilder::Build(mlir::func::FuncOp func) {
  auto schedule = std::make_unique<Schedule>();
  schedule->name = func.getSymName().str();
  const std::string fn = "@" + schedule->name;
  if (!func.getBody().hasOneBlock()) return absl::InvalidArgumentError(fn + " has more than one block");
  if (auto arena = func->getAttrOfType<mlir::IntegerAttr>("gpt.arena_bytes")) {
    schedule->arena_bytes = arena.getInt();
  } else {
    return absl::InvalidArgumentError(fn + " has no gpt.arena_bytes: the artifact was not memory-planned");
  }
  mlir::Block& block = func.getBody().front();
  schedule->arg_ptrs.assign(block.getNumArguments(), nullptr);
  for (mlir::BlockArgument arg : block.getArguments()) {
    absl::StatusOr<BufferSpec> spec =
        SpecOf(arg, func.getArgAttrDict(arg.getArgNumber()), absl::StrCat(fn, " argument ", arg.getArgNumber()));
    if (!spec.ok()) return spec.status();
    schedule->args.push_back(*spec);
    where_[arg] = Address{&schedule->arg_ptrs[arg.getArgNumber()], 0};
  }
  for (mlir::Operation& op : block.without_terminator()) {
    if (absl::Status s = Place(&op, *schedule); !s.ok()) return s;
    if (absl::Status s = AddLaunch(&op, *schedule); !s.ok()) return s;
  }
  mlir::Operation* ret = block.getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    absl::StatusOr<BufferSpec> spec =
        SpecOf(v, func.getResultAttrDict(i), absl::StrCat(fn, " result ", i));
    if (!spec.ok()) return spec.status();
    schedule->results.push_back(*spec);
    schedule->result_addrs.push_back(Of(v));
  }
  return schedule;
}

absl::Status LaunchBuilder::Place(mlir::Operation* op, Schedule& schedule) {
  if (op->getNumResults() == 0) return absl::OkStatus();
  // tensor.empty: the `outs` placeholder of a lowered fusion; it holds no bytes.
  if (llvm::isa<mlir::tensor::EmptyOp>(op)) return absl::OkStatus();
  auto offsets = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kOffsetsAttr);
  auto donates = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kDonatesAttr);
  if (!offsets || static_cast<int64_t>(offsets.size()) != op->getNumResults()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Describe(op), " has no arena placement (gpt.offsets); the artifact was not memory-planned"));
  }
  for (unsigned r = 0; r < op->getNumResults(); ++r) {
    const int64_t donated = donates ? donates[r] : -1;
    if (donated >= 0) {
      where_[op->getResult(r)] = Address{&schedule.arg_ptrs[donated], 0};
    } else if (offsets[r] >= 0 && offsets[r] + Bytes(op->getResult(r)) <= schedule.arena_bytes) {
      where_[op->getResult(r)] = Address{arena_base_, offsets[r]};
    } else {
      return absl::InvalidArgumentError(absl::StrCat(Describe(op), " result ", r, " is placed at ", offsets[r],
                                                     " outside the arena of ", schedule.arena_bytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

absl::Status LaunchBuilder::AddLaunch(mlir::Operation* op, Schedule& schedule) {
  Launch launch;
  launch.op = op->getName().getStringRef().str();
  launch.where = Describe(op);
  const std::string where = launch.where;
  auto add = [&](std::function<absl::Status()> run) {
    launch.run = std::move(run);
    schedule.launches.push_back(std::move(launch));
    return absl::OkStatus();
  };
  /// A copy into `dst` unless the value already lives there.
  auto copy_launch = [&](Value from, Value to) {
    const Address src = Of(from), dst = Of(to);
    const int64_t bytes = Bytes(to);
    if (src == dst) return absl::OkStatus();
    return add([src, dst, bytes] {
      if (src.get() != dst.get()) std::memmove(dst.get(), src.get(), bytes);
      return absl::OkStatus();
    });
  };

  if (llvm::isa<mlir::tensor::EmptyOp>(op) || absorbed_.contains(op)) return absl::OkStatus();

  if (auto generic = llvm::dyn_cast<mlir::linalg::GenericOp>(op)) {
    auto symbol = op->getAttrOfType<mlir::StringAttr>(kKernelAttr);
    if (!symbol) return absl::InvalidArgumentError(where + " names no compiled kernel (gpt.kernel)");
    absl::StatusOr<void*> fn = kernels_->Find(symbol.str());
    if (!fn.ok()) return absl::NotFoundError(absl::StrCat(where, ": ", fn.status().message()));
    auto kernel = reinterpret_cast<compiler::FusionKernelFn>(*fn);
    std::vector<Address> addrs;
    for (Value in : generic.getDpsInputs()) addrs.push_back(Of(in));
    for (Value out : generic.getResults()) addrs.push_back(Of(out));
    const int64_t n = Elements(generic.getResult(0));
    auto buffers = std::make_shared<std::vector<void*>>(addrs.size());
    launch.op = "fusion";
    return add([kernel, addrs, buffers, n] {
      for (size_t i = 0; i < addrs.size(); ++i) (*buffers)[i] = addrs[i].get();
      void* const* b = buffers->data();
      // Chunks of >= 16K elements: a few microseconds each, well above the pool's handoff.
      k::ParallelFor(n, 16384, [kernel, b](int64_t begin, int64_t end) { kernel(b, begin, end); });
      return absl::OkStatus();
    });
  }

  if (auto c = llvm::dyn_cast<mlir::arith::ConstantOp>(op)) {
    auto attr = llvm::dyn_cast<mlir::DenseElementsAttr>(c.getValue());
    if (!attr || !TypeOf(c.getResult())) return absl::UnimplementedError(where + ": only dense tensor constants run");
    const int64_t bytes = Bytes(c.getResult()), n = Elements(c.getResult());
    char* value = Own(bytes);
    switch (*DTypeOf(c.getResult())) {
      case DType::kF32: FillDense(attr, reinterpret_cast<float*>(value), n); break;
      case DType::kF64: FillDense(attr, reinterpret_cast<double*>(value), n); break;
      case DType::kI32: FillDense(attr, reinterpret_cast<int32_t*>(value), n); break;
    }
    const Address dst = Of(c.getResult());
    return add([value, dst, bytes] {
      std::memcpy(dst.get(), value, bytes);
      return absl::OkStatus();
    });
  }

  if (auto r = llvm::dyn_cast<gpt::ReshapeOp>(op)) return copy_launch(r.getX(), r.getResult());

  if (auto t = llvm::dyn_cast<gpt::TransposeOp>(op)) {
    auto type = TypeOf(t.getX());
    const int rank = static_cast<int>(type.getRank());
    if (rank < 1 || rank > k::kMaxPermuteRank) return absl::UnimplementedError(where + ": rank 1..8 transposes run");
    std::array<int64_t, k::kMaxPermuteRank> dims{}, perm{};
    for (int i = 0; i < rank; ++i) {
      dims[i] = type.getDimSize(i);
      perm[i] = t.getPerm()[i];
    }
    const Address x = Of(t.getX()), y = Of(t.getResult());
    const bool wide = DTypeSize(*DTypeOf(t.getX())) == 8;
    return add([x, y, dims, perm, rank, wide] {
      if (wide) {
        k::Permute(x.as<const uint64_t>(), y.as<uint64_t>(), dims.data(), perm.data(), rank);
      } else {
        k::Permute(x.as<const uint32_t>(), y.as<uint32_t>(), dims.data(), perm.data(), rank);
      }
      return absl::OkStatus();
    });
  }

  if (auto e = llvm::dyn_cast<gpt::EmbeddingOp>(op)) {
    const Address table = Of(e.getTable()), ids = Of(e.getIds()), out = Of(e.getResult());
    const int64_t n = Elements(e.getIds()), V = Dim(e.getTable(), 0), C = Dim(e.getTable(), 1);
    return ForFloat(e.getTable(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        if (absl::Status s = CheckIds(ids.as<const int32_t>(), n, V, where); !s.ok()) return s;
        k::Embedding(table.as<const T>(), ids.as<const int32_t>(), out.as<T>(), n, C);
        return absl::OkStatus();
      });
    });
  }

  if (auto e = llvm::dyn_cast<gpt::EmbeddingGradOp>(op)) {
    const Address ids = Of(e.getIds()), dy = Of(e.getDy()), dtable = Of(e.getDtable());
    const int64_t n = Elements(e.getIds()), V = static_cast<int64_t>(e.getVocabSize()), C = Dim(e.getDy(), -1);
    const int64_t bytes = Bytes(e.getDtable());
    return ForFloat(e.getDy(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        if (absl::Status s = CheckIds(ids.as<const int32_t>(), n, V, where); !s.ok()) return s;
        std::memset(dtable.get(), 0, bytes);
        k::EmbeddingGrad(dy.as<const T>(), ids.as<const int32_t>(), dtable.as<T>(), n, C);
        return absl::OkStatus();
      });
    });
  }

  if (auto m = llvm::dyn_cast<gpt::MatmulOp>(op)) {
    const Address x = Of(m.getX()), w = Of(m.getW()), y = Of(m.getResult());
    const int64_t M = Rows(m.getX()), N = Dim(m.getW(), 0), K = Dim(m.getW(), 1);
    return ForFloat(m.getX(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        k::Matmul(x.as<const T>(), w.as<const T>(), y.as<T>(), M, N, K);
        return absl::OkStatus();
      });
    });
  }

  if (auto m = llvm::dyn_cast<gpt::MatmulWeightGradOp>(op)) {
    const Address dy = Of(m.getDy()), x = Of(m.getX()), dw = Of(m.getResult());
    const int64_t M = Rows(m.getX()), N = Dim(m.getDy(), -1), K = Dim(m.getX(), -1);
    return ForFloat(m.getX(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        k::MatmulGradWeight(dy.as<const T>(), x.as<const T>(), dw.as<T>(), M, N, K, /*accumulate=*/false);
        return absl::OkStatus();
      });
    });
  }

  if (auto n = llvm::dyn_cast<gpt::RmsNormOp>(op)) {
    const Address x = Of(n.getX()), y = Of(n.getResult());
    const int64_t rows = Rows(n.getX()), dim = Dim(n.getX(), -1);
    const double eps = n.getEps().convertToDouble();
    return ForFloat(n.getX(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        k::RmsNorm(x.as<const T>(), y.as<T>(), rows, dim, T(eps));
        return absl::OkStatus();
      });
    });
  }

  if (auto n = llvm::dyn_cast<gpt::RmsNormGradOp>(op)) {
    const Address x = Of(n.getX()), dy = Of(n.getDy()), dx = Of(n.getResult());
    const int64_t rows = Rows(n.getX()), dim = Dim(n.getX(), -1);
    const double eps = n.getEps().convertToDouble();
    return ForFloat(n.getX(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        k::RmsNormGrad(x.as<const T>(), dy.as<const T>(), dx.as<T>(), rows, dim, T(eps));
        return absl::OkStatus();
      });
    });
  }

  auto rotary = [&](Value in, Value positions, Value result, double base, bool grad) -> absl::Status {
    const k::RotaryShape s{Dim(in, 0), Dim(in, 1), Dim(in, 2), Dim(in, 3)};
    if (s.D % 2 != 0) return absl::InvalidArgumentError(where + ": head dim must be even");
    Address pos;
    if (positions) {
      pos = Of(positions);
    } else {  // positions 0..T-1 in every row, made once
      pos = OwnAddress(s.B * s.T * sizeof(int32_t));
      int32_t* iota = pos.as<int32_t>();
      for (int64_t i = 0; i < s.B * s.T; ++i) iota[i] = static_cast<int32_t>(i % s.T);
    }
    const Address x = Of(in), y = Of(result);
    const WorkspaceRef ws = Scratch(k::RotaryWorkspaceBytes(s));
    return ForFloat(in, op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        if (grad) {
          k::RotaryGrad(x.as<const T>(), pos.as<const int32_t>(), y.as<T>(), s, base, ws.get());
        } else {
          k::Rotary(x.as<const T>(), pos.as<const int32_t>(), y.as<T>(), s, base, ws.get());
        }
        return absl::OkStatus();
      });
    });
  };
  if (auto r = llvm::dyn_cast<gpt::RotaryOp>(op)) {
    return rotary(r.getX(), r.getPositions(), r.getResult(), r.getBase().convertToDouble(), false);
  }
  if (auto r = llvm::dyn_cast<gpt::RotaryGradOp>(op)) {
    return rotary(r.getDy(), r.getPositions(), r.getResult(), r.getBase().convertToDouble(), true);
  }

  if (auto a = llvm::dyn_cast<gpt::AttentionOp>(op)) {
    if (!a.getCausal() || a.getScale()) {
      return absl::UnimplementedError(where + ": the compiled path runs causal attention at the default scale");
    }
    const k::AttentionShape s{Dim(a.getQ(), 0), Dim(a.getQ(), 1), Dim(a.getQ(), 2), Dim(a.getK(), 2),
                              Dim(a.getQ(), 3)};
    const int64_t lse_bytes = s.B * s.H * s.T * static_cast<int64_t>(DTypeSize(*DTypeOf(a.getQ())));
    const Address lse = OwnAddress(lse_bytes);
    lse_of_[a.getResult()] = lse;
    const Address q = Of(a.getQ()), kk = Of(a.getK()), v = Of(a.getV()), out = Of(a.getResult());
    const Address seg = a.getSegmentIds() ? Of(a.getSegmentIds()) : Address{};
    return ForFloat(a.getQ(), op, [&](auto zero) {
      using T = decltype(zero);
      const WorkspaceRef ws = Scratch(k::AttentionWorkspaceBytes<T>(s, seg.base != nullptr));
      return add([=] {
        k::Attention(q.as<const T>(), kk.as<const T>(), v.as<const T>(),
                     seg.base ? seg.as<const int32_t>() : nullptr, s, out.as<T>(), lse.as<T>(), ws.get());
        return absl::OkStatus();
      });
    });
  }

  if (auto a = llvm::dyn_cast<gpt::AttentionGradOp>(op)) {
    if (!a.getCausal() || a.getScale()) {
      return absl::UnimplementedError(where + ": the compiled path runs causal attention at the default scale");
    }
    const k::AttentionShape s{Dim(a.getQ(), 0), Dim(a.getQ(), 1), Dim(a.getQ(), 2), Dim(a.getK(), 2),
                              Dim(a.getQ(), 3)};
    const Address q = Of(a.getQ()), kk = Of(a.getK()), v = Of(a.getV()), out = Of(a.getOut()),
                  dout = Of(a.getDout()), dq = Of(a.getDq()), dk = Of(a.getDk()), dv = Of(a.getDv());
    const Address seg = a.getSegmentIds() ? Of(a.getSegmentIds()) : Address{};
    // The forward's lse when `out` is that forward's result (the same q, k, v, segments);
    // otherwise the forward runs again here, into buffers of our own, to get it.
    Address lse;
    bool recompute = true;
    if (auto fwd = a.getOut().getDefiningOp<gpt::AttentionOp>()) {
      recompute = !(fwd.getQ() == a.getQ() && fwd.getK() == a.getK() && fwd.getV() == a.getV() &&
                    fwd.getSegmentIds() == a.getSegmentIds());
      if (!recompute) lse = lse_of_.lookup(fwd.getResult());
    }
    Address scratch_out;
    if (recompute) {
      const int64_t esize = static_cast<int64_t>(DTypeSize(*DTypeOf(a.getQ())));
      lse = OwnAddress(s.B * s.H * s.T * esize);
      scratch_out = OwnAddress(Bytes(a.getQ()));
    }
    return ForFloat(a.getQ(), op, [&](auto zero) {
      using T = decltype(zero);
      // The recomputed forward runs before the backward: the two share the scratch.
      const bool segmented = seg.base != nullptr;
      const WorkspaceRef ws = Scratch(std::max(recompute ? k::AttentionWorkspaceBytes<T>(s, segmented) : 0,
                                               k::AttentionGradWorkspaceBytes<T>(s, segmented)));
      return add([=] {
        const int32_t* segments = seg.base ? seg.as<const int32_t>() : nullptr;
        if (recompute) {
          k::Attention(q.as<const T>(), kk.as<const T>(), v.as<const T>(), segments, s, scratch_out.as<T>(),
                       lse.as<T>(), ws.get());
        }
        k::AttentionGrad(q.as<const T>(), kk.as<const T>(), v.as<const T>(), segments, s, out.as<const T>(),
                         lse.as<const T>(), dout.as<const T>(), dq.as<T>(), dk.as<T>(), dv.as<T>(), ws.get());
        return absl::OkStatus();
      });
    });
  }

  // Elementwise ops gpt-fuse left alone (a chain of one).
  auto binary = [&](Value a, Value b, Value y, auto kernel) {
    const Address pa = Of(a), pb = Of(b), py = Of(y);
    const int64_t n = Elements(y);
    return ForFloat(y, op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        kernel(pa.as<const T>(), pb.as<const T>(), py.as<T>(), n);
        return absl::OkStatus();
      });
    });
  };
  if (auto e = llvm::dyn_cast<gpt::AddOp>(op)) {
    return binary(e.getLhs(), e.getRhs(), e.getResult(), [](auto* a, auto* b, auto* y, int64_t n) { k::Add(a, b, y, n); });
  }
  if (auto e = llvm::dyn_cast<gpt::MulOp>(op)) {
    return binary(e.getLhs(), e.getRhs(), e.getResult(), [](auto* a, auto* b, auto* y, int64_t n) { k::Mul(a, b, y, n); });
  }
  if (auto e = llvm::dyn_cast<gpt::ReluSquareGradOp>(op)) {
    return binary(e.getX(), e.getDy(), e.getResult(),
                  [](auto* x, auto* dy, auto* dx, int64_t n) { k::ReluSquareGrad(x, dy, dx, n); });
  }
  if (auto e = llvm::dyn_cast<gpt::SoftcapGradOp>(op)) {
    const double cap = e.getCap().convertToDouble();
    return binary(e.getY(), e.getDy(), e.getResult(), [cap](auto* y, auto* dy, auto* dx, int64_t n) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(y)>>;
      k::SoftcapGrad(y, dy, dx, n, T(cap));
    });
  }
  if (auto e = llvm::dyn_cast<gpt::ReluSquareOp>(op)) {
    const Address x = Of(e.getX()), y = Of(e.getResult());
    const int64_t n = Elements(e.getResult());
    return ForFloat(e.getX(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        k::ReluSquare(x.as<const T>(), y.as<T>(), n);
        return absl::OkStatus();
      });
    });
  }
  if (auto e = llvm::dyn_cast<gpt::SoftcapOp>(op)) {
    const Address x = Of(e.getX()), y = Of(e.getResult());
    const int64_t n = Elements(e.getResult());
    const double cap = e.getCap().convertToDouble();
    return ForFloat(e.getX(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        k::Softcap(x.as<const T>(), y.as<T>(), n, T(cap));
        return absl::OkStatus();
      });
    });
  }

  if (auto ce = llvm::dyn_cast<gpt::CrossEntropyOp>(op)) {
    if (ce.getIgnoreIndex() != -1) return absl::UnimplementedError(where + ": the compiled path ignores target -1 only");
    const Address logits = Of(ce.getLogits()), targets = Of(ce.getTargets()), loss = Of(ce.getResult());
    const int64_t N = Dim(ce.getLogits(), 0), V = Dim(ce.getLogits(), 1);
    const WorkspaceRef ws = Scratch(k::CrossEntropyWorkspaceBytes(N));
    return ForFloat(ce.getLogits(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        const int32_t* t = targets.as<const int32_t>();
        for (int64_t i = 0; i < N; ++i) {
          if (t[i] != -1 && (t[i] < 0 || t[i] >= V)) {
            return absl::InvalidArgumentError(absl::StrCat(where, ": target ", t[i], " at row ", i,
                                                           " is neither -1 nor in [0, ", V, ")"));
          }
        }
        *loss.as<T>() = T(k::CrossEntropy(logits.as<const T>(), t, N, V, ws.get()).loss);
        return absl::OkStatus();
      });
    });
  }

  if (auto ce = llvm::dyn_cast<gpt::CrossEntropyGradOp>(op)) {
    if (ce.getIgnoreIndex() != -1) return absl::UnimplementedError(where + ": the compiled path ignores target -1 only");
    const Address logits = Of(ce.getLogits()), targets = Of(ce.getTargets()), dloss = Of(ce.getDloss());
    const int64_t N = Dim(ce.getLogits(), 0), V = Dim(ce.getLogits(), 1);
    // Epilogue fusion: when the gradient's only consumer (through views) is the softcap's
    // gradient at the same logits, one pass writes the softcap gradient directly.
    gpt::SoftcapGradOp softcap = SoftcapGradConsumer(ce);
    Address dlogits = Of(ce.getResult());
    double cap = 0;
    // Inputs whose bytes the fused output overlaps (the plan may give a value that dies at the
    // cross-entropy and one born at the softcap the same bytes): small ones (targets, dloss)
    // are copied aside first; large ones (the logits) rule the fusion out.
    struct Snapshot {
      Address from, to;
      int64_t bytes;
    };
    std::vector<Snapshot> snapshots;
    Address targets_in = targets, dloss_in = dloss;
    if (softcap) {
      if (absl::Status s = Place(softcap, schedule); !s.ok()) return s;
      const Address out = Of(softcap.getResult());
      const int64_t out_bytes = Bytes(softcap.getResult());
      auto overlaps = [&](Value in) {
        const Address a = Of(in);
        return a.base == out.base && a.offset < out.offset + out_bytes && out.offset < a.offset + Bytes(in);
      };
      if (overlaps(ce.getLogits())) softcap = {};
      for (auto [value, address] : {std::pair<Value, Address*>{ce.getTargets(), &targets_in}, {ce.getDloss(), &dloss_in}}) {
        if (softcap && overlaps(value)) {
          if (Bytes(value) > (int64_t{1} << 20)) {
            softcap = {};
            break;
          }
          const Address copy = OwnAddress(Bytes(value));
          snapshots.push_back({*address, copy, Bytes(value)});
          *address = copy;
        }
      }
    }
    if (softcap) {
      dlogits = Of(softcap.getResult());
      cap = softcap.getCap().convertToDouble();
      absorbed_.insert(softcap.getOperation());
      launch.op = "gpt.cross_entropy_grad+softcap_grad";
    } else {
      snapshots.clear();
      targets_in = targets;
      dloss_in = dloss;
    }
    return ForFloat(ce.getLogits(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        for (const Snapshot& snap : snapshots) std::memcpy(snap.to.get(), snap.from.get(), snap.bytes);
        const double d = double(*dloss_in.as<const T>());
        if (cap != 0) {
          k::CrossEntropySoftcapGrad(logits.as<const T>(), targets_in.as<const int32_t>(), N, V, d, T(cap),
                                     dlogits.as<T>());
        } else {
          k::CrossEntropyGrad(logits.as<const T>(), targets_in.as<const int32_t>(), N, V, d, dlogits.as<T>());
        }
        return absl::OkStatus();
      });
    });
  }

  if (auto u = llvm::dyn_cast<gpt::AdamwUpdateOp>(op)) {
    const Address p = Of(u.getParam()), g = Of(u.getGrad()), m = Of(u.getExpAvg()), v = Of(u.getExpAvgSq()),
                  lr = Of(u.getLr()), step = Of(u.getStep());
    const Address np = Of(u.getNewParam()), nm = Of(u.getNewExpAvg()), nv = Of(u.getNewExpAvgSq());
    const int64_t n = Elements(u.getGrad()), bytes = Bytes(u.getGrad());
    const double beta1 = u.getBeta1().convertToDouble(), beta2 = u.getBeta2().convertToDouble(),
                 eps = u.getEps().convertToDouble(), wd = u.getWeightDecay().convertToDouble();
    return ForFloat(u.getGrad(), op, [&](auto zero) {
      using T = decltype(zero);
      return add([=] {
        const double step_value = double(*step.as<const T>());
        if (step_value < 1) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": step must be >= 1, got ", step_value));
        }
        // Not donated (the plan could not): update copies in the results' buffers.
        if (!(np == p)) std::memmove(np.get(), p.get(), bytes);
        if (!(nm == m)) std::memmove(nm.get(), m.get(), bytes);
        if (!(nv == v)) std::memmove(nv.get(), v.get(), bytes);
        const k::AdamWHyper hyper{double(*lr.as<const T>()), beta1, beta2, eps, wd,
                                  static_cast<int64_t>(std::llround(step_value))};
        k::AdamWUpdate(np.as<T>(), nm.as<T>(), nv.as<T>(), g.as<const T>(), n, hyper);
        return absl::OkStatus();
      });
    });
  }

  if (auto u = llvm::dyn_cast<gpt::MuonUpdateOp>(op)) {
    if (!u.getNesterov() || u.getNsSteps() != 5) {
      return absl::UnimplementedError(where + ": the CPU kernel runs Nesterov Muon with 5 Newton-Schulz steps");
    }
    const Address p = Of(u.getParam()), g = Of(u.getGrad()), buf = Of(u.getMomentumBuffer()), lr = Of(u.getLr());
    const Address np = Of(u.getNewParam()), nb = Of(u.getNewMomentumBuffer());
    const int64_t rows = Dim(u.getGrad(), 0), cols = Dim(u.getGrad(), 1), bytes = Bytes(u.getGrad());
    const double momentum = u.getMomentum().convertToDouble();
    return ForFloat(u.getGrad(), op, [&](auto zero) {
      using T = decltype(zero);
      const WorkspaceRef ws = Scratch(k::MuonScratchSize(rows, cols) * static_cast<int64_t>(sizeof(T)));
      return add([=] {
        char* scratch = ws.get().data;
        if (!(np == p)) std::memmove(np.get(), p.get(), bytes);
        if (!(nb == buf)) std::memmove(nb.get(), buf.get(), bytes);
        const k::MuonHyper hyper{double(*lr.as<const T>()), momentum};
        k::MuonUpdate(np.as<T>(), nb.as<T>(), g.as<const T>(), rows, cols, hyper, reinterpret_cast<T*>(scratch));
        return absl::OkStatus();
      });
    });
  }

  // gpt.all_reduce: the operand copied into the result's buffer, then reduced there in place
  // over the communicator's ranks. One rank (no communicator): the copy alone.
  if (auto r = llvm::dyn_cast<gpt::AllReduceOp>(op)) {
    if (absl::Status s = copy_launch(r.getX(), r.getResult()); !s.ok()) return s;
    if (communicator_ == nullptr || communicator_->world_size() == 1) return absl::OkStatus();
    const std::optional<DType> dtype = DTypeOf(r.getResult());
    if (dtype != DType::kF32 && dtype != DType::kF64) {
      return absl::UnimplementedError(where + ": all_reduce runs on f32 or f64 tensors");
    }
    const collectives::DataType type =
        dtype == DType::kF32 ? collectives::DataType::kFloat32 : collectives::DataType::kFloat64;
    const collectives::ReduceOp reduce = ToReduceOp(r.getReduction());
    const Address buffer = Of(r.getResult());
    const int64_t count = Bytes(r.getResult()) / (dtype == DType::kF32 ? 4 : 8);
    collectives::Communicator* comm = communicator_;
    return add([comm, buffer, count, type, reduce, where] {
      absl::Status s = comm->AllReduce(buffer.get(), count, type, reduce);
      if (s.ok()) return s;
      return absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
    });
  }
  // Sharded collectives are not emitted by the step builder yet (the optimizer state is
  // replicated: StepConfig::dp_world_size); one rank makes them the identity.
  if (llvm::isa<gpt::ReduceScatterOp, gpt::AllGatherOp>(op)) {
    if (auto size = op->getAttrOfType<mlir::IntegerAttr>("group_size"); size && size.getInt() != 1) {
      return absl::UnimplementedError(where + ": the compiled path runs reduce_scatter and all_gather on one rank only");
    }
    return copy_launch(op->getOperand(0), op->getResult(0));
  }

  return absl::UnimplementedError(absl::StrCat("the compiled path has no launch for ", where,
                                               "; run this step with --compile=false (the interpreter)"));
}

}  // namespace gpt_sft::runtime::exec

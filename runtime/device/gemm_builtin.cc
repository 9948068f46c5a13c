// Implements ReadGemmCall and ToColumnMajor.
#include "runtime/device/gemm_builtin.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::device {
namespace {

constexpr const char* kScalarNames[] = {"M", "N", "K", "a_transposed", "b_transposed", "inputs_bf16", "alpha", "beta"};
constexpr int kScalars = 8, kInts = 6;
constexpr const char* kBufferNames[] = {"a", "b", "c_in", "c"};

}  // namespace

absl::StatusOr<GemmCall> ReadGemmCall(absl::Span<const KernelArg> all_args, std::string_view label, bool batched,
                                      bool ab_bf16) {
  const std::string_view builtin = ab_bf16 ? (batched ? kGemmBatchedBf16Builtin : kGemmBf16Builtin)
                                           : (batched ? kGemmBatchedBuiltin : kGemmBuiltin);
  const std::string where = absl::StrCat(std::string(label), " (builtin ", std::string(builtin), ")");
  auto is_int = [](const KernelArg& a) {
    return !a.is_buffer && (a.scalar.type == Scalar::Type::kI64 || a.scalar.type == Scalar::Type::kI32);
  };
  GemmCall g;
  absl::Span<const KernelArg> args = all_args;
  if (batched) {
    if (args.empty() || !is_int(args[0])) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": argument 0 (batch) must be an integer scalar"));
    }
    g.batch = args[0].scalar.i;
    if (g.batch < 1) return absl::InvalidArgumentError(absl::StrCat(where, ": batch ", g.batch, " must be >= 1"));
    args = args.subspan(1);
  }
  const int first = batched ? 1 : 0;  // where the common arguments start, for messages
  if (args.size() != kScalars + 4) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", all_args.size(), " arguments, expected ",
                                                   first + kScalars + 4, " (", first + kScalars, " scalars, 4 buffers)"));
  }
  for (int i = 0; i < kScalars; ++i) {
    const bool want_int = i < kInts;
    const bool is_float = !args[i].is_buffer && (args[i].scalar.type == Scalar::Type::kF64 ||
                                                 args[i].scalar.type == Scalar::Type::kF32);
    if (want_int ? !is_int(args[i]) : !is_float) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": argument ", first + i, " (", kScalarNames[i],
                                                     ") must be ", want_int ? "an integer" : "a float", " scalar"));
    }
  }
  for (int i = kScalars; i < kScalars + 4; ++i) {
    if (!args[i].is_buffer) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": argument ", first + i, " (", kBufferNames[i - kScalars], ") must be a buffer"));
    }
  }
  g.M = args[0].scalar.i;
  g.N = args[1].scalar.i;
  g.K = args[2].scalar.i;
  g.a_transposed = args[3].scalar.i != 0;
  g.b_transposed = args[4].scalar.i != 0;
  g.inputs_bf16 = args[5].scalar.i != 0;
  g.alpha = args[6].scalar.f;
  g.beta = args[7].scalar.f;
  g.a = args[8].buffer;
  g.b = args[9].buffer;
  g.c_in = args[10].buffer;
  g.c = args[11].buffer;
  g.ab_stored_bf16 = ab_bf16;
  if (g.M < 1 || g.N < 1 || g.K < 1) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": dims M=", g.M, " N=", g.N, " K=", g.K, " must be >= 1"));
  }
  const int64_t need[] = {g.batch * g.M * g.K, g.batch * g.K * g.N, g.beta != 0 ? g.batch * g.M * g.N : 0,
                          g.batch * g.M * g.N};
  const BufferRange* ranges[] = {&g.a, &g.b, &g.c_in, &g.c};
  const int64_t element_bytes[] = {ab_bf16 ? 2 : 4, ab_bf16 ? 2 : 4, 4, 4};
  for (int i = 0; i < 4; ++i) {
    const BufferRange& r = *ranges[i];
    if (!InsideItsBuffer(r)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": buffer ", kBufferNames[i], " bytes [", r.offset, ", ",
                                                     r.offset + r.bytes, ") lie outside its buffer of ",
                                                     r.buffer ? r.buffer->bytes() : 0, " bytes"));
    }
    if (ranges[i]->bytes < need[i] * element_bytes[i]) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": buffer ", kBufferNames[i], " holds ", ranges[i]->bytes,
                                                     " bytes; ", g.batch > 1 ? absl::StrCat(g.batch, " x ") : "", "[",
                                                     g.M, ", ", g.N, ", ", g.K, "] needs ", need[i] * element_bytes[i]));
    }
  }
  return g;
}

absl::StatusOr<GemmCall> ReadGemmBuiltin(std::string_view name, absl::Span<const KernelArg> args,
                                         std::string_view label, std::string_view driver) {
  const bool bf16 = name == kGemmBf16Builtin || name == kGemmBatchedBf16Builtin;
  if (name != kGemmBuiltin && name != kGemmBatchedBuiltin && !bf16) {
    return absl::UnimplementedError(absl::StrCat(std::string(label), ": the ", std::string(driver),
                                                 " driver has no builtin '", std::string(name), "' (it has ",
                                                 std::string(kGemmBuiltin), ", ", std::string(kGemmBatchedBuiltin), ", ",
                                                 std::string(kGemmBf16Builtin), " and ",
                                                 std::string(kGemmBatchedBf16Builtin), ")"));
  }
  return ReadGemmCall(args, label, name == kGemmBatchedBuiltin || name == kGemmBatchedBf16Builtin, bf16);
}

ColumnMajorGemm ToColumnMajor(const GemmCall& g) {
  ColumnMajorGemm cm;
  cm.m = g.N;
  cm.n = g.M;
  cm.k = g.K;
  // cuBLAS's A is our B. Stored [K, N] row-major it is the column-major N x K matrix (ld N),
  // taken as is; stored [N, K] it is the column-major K x N matrix (ld K), transposed.
  cm.op_a = g.b_transposed ? 1 : 0;
  cm.a_rows = g.b_transposed ? g.K : g.N;
  cm.a_cols = g.b_transposed ? g.N : g.K;
  cm.a_ld = cm.a_rows;
  // cuBLAS's B is our A: stored [M, K] it is the column-major K x M matrix (ld K); stored
  // [K, M] the column-major M x K one (ld M), transposed.
  cm.op_b = g.a_transposed ? 1 : 0;
  cm.b_rows = g.a_transposed ? g.M : g.K;
  cm.b_cols = g.a_transposed ? g.K : g.M;
  cm.b_ld = cm.b_rows;
  // Our C [M, N] row-major is the column-major N x M matrix (ld N).
  cm.c_rows = g.N;
  cm.c_cols = g.M;
  cm.c_ld = g.N;
  return cm;
}

}  // namespace gpt_sft::runtime::device

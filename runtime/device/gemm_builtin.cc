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

absl::StatusOr<GemmCall> ReadGemmCall(absl::Span<const KernelArg> args, std::string_view label) {
  const std::string where = absl::StrCat(std::string(label), " (builtin ", std::string(kGemmBuiltin), ")");
  if (args.size() != kScalars + 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", args.size(), " arguments, expected ", kScalars + 4, " (", kScalars, " scalars, 4 buffers)"));
  }
  for (int i = 0; i < kScalars; ++i) {
    const bool want_int = i < kInts;
    const bool is_int = !args[i].is_buffer && (args[i].scalar.type == Scalar::Type::kI64 ||
                                               args[i].scalar.type == Scalar::Type::kI32);
    const bool is_float = !args[i].is_buffer && (args[i].scalar.type == Scalar::Type::kF64 ||
                                                 args[i].scalar.type == Scalar::Type::kF32);
    if (want_int ? !is_int : !is_float) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": argument ", i, " (", kScalarNames[i], ") must be ",
                                                     want_int ? "an integer" : "a float", " scalar"));
    }
  }
  for (int i = kScalars; i < kScalars + 4; ++i) {
    if (!args[i].is_buffer) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": argument ", i, " (", kBufferNames[i - kScalars], ") must be a buffer"));
    }
  }
  GemmCall g;
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
  if (g.M < 1 || g.N < 1 || g.K < 1) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": dims M=", g.M, " N=", g.N, " K=", g.K, " must be >= 1"));
  }
  const int64_t need[] = {g.M * g.K, g.K * g.N, g.beta != 0 ? g.M * g.N : 0, g.M * g.N};
  const BufferRange* ranges[] = {&g.a, &g.b, &g.c_in, &g.c};
  for (int i = 0; i < 4; ++i) {
    const BufferRange& r = *ranges[i];
    if (!InsideItsBuffer(r)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": buffer ", kBufferNames[i], " bytes [", r.offset, ", ",
                                                     r.offset + r.bytes, ") lie outside its buffer of ",
                                                     r.buffer ? r.buffer->bytes() : 0, " bytes"));
    }
    if (ranges[i]->bytes < need[i] * 4) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": buffer ", kBufferNames[i], " holds ", ranges[i]->bytes,
                                                     " bytes; [", g.M, ", ", g.N, ", ", g.K, "] needs ", need[i] * 4));
    }
  }
  return g;
}

absl::StatusOr<GemmCall> ReadGemmBuiltin(std::string_view name, absl::Span<const KernelArg> args,
                                         std::string_view label, std::string_view driver) {
  if (name != kGemmBuiltin) {
    return absl::UnimplementedError(absl::StrCat(std::string(label), ": the ", std::string(driver),
                                                 " driver has no builtin '", std::string(name), "' (it has ",
                                                 std::string(kGemmBuiltin), ")"));
  }
  return ReadGemmCall(args, label);
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

// The embedding generators (compiler/lowering/gpu/embedding_kernels.cc) on OpenCL against the
// interpreter: the gather, and the scatter-add gradient with ids that repeat, one id for every
// token (a chain as long as the batch, ids staged through more than one workgroup-sized
// chunk), ids that never repeat, and table rows no id reaches (zero).
// Tolerance 0: the gather copies, and the scatter-add sums each (id, channel) in token order
// in f32, the interpreter's order and precision, so both are bit-identical.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

using runtime::Tensor;

void ExpectExact(const std::string& ir, const KernelRun& run) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    EXPECT_GT(d.max_reference, 0) << d.name << " is all zero: the test checks nothing";
    EXPECT_EQ(d.max_abs_error, 0) << d.name << " differs (max |reference| " << d.max_reference << ")";
  }
}

Tensor Ints(runtime::Shape shape, int32_t lo, int32_t hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick(lo, hi - 1);
  Tensor t = Tensor::Empty(runtime::DType::kI32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int32_t>()[i] = pick(rng);
  return t;
}

/// The gather and the scatter-add of ids [B, T] into a table [V, C].
std::string EmbeddingIr(int B, int T, int V, int C) {
  const std::string ids = "tensor<" + std::to_string(B) + "x" + std::to_string(T) + "xi32>";
  const std::string table = "tensor<" + std::to_string(V) + "x" + std::to_string(C) + "xf32>";
  const std::string act = "tensor<" + std::to_string(B) + "x" + std::to_string(T) + "x" + std::to_string(C) + "xf32>";
  return "func.func @f(%table: " + table + " {gpt.name = \"table\"}, %ids: " + ids + " {gpt.name = \"ids\"}, %dy: " + act +
         " {gpt.name = \"dy\"}) -> (" + act + " {gpt.name = \"out\"}, " + table + " {gpt.name = \"dtable\"}) {\n" +
         "  %out = gpt.embedding %table[%ids] : " + table + ", " + ids + "\n" +
         "  %dt = gpt.embedding_grad %ids, %dy, vocab " + std::to_string(V) + " : " + ids + ", " + act + "\n" +
         "  return %out, %dt : " + act + ", " + table + "\n}";
}

TEST(EmbeddingKernelsTest, GatherAndScatterAddWithRepeatedIds) {
  KernelRun run;
  run.inputs["ids"] = Ints({3, 50}, 0, 20, 9);  // 150 tokens over 20 ids: every id repeats
  ExpectExact(EmbeddingIr(3, 50, 20, 24), run);
}

// 600 tokens of one id: a chain of 600 summed by each channel's work-item; the links kernel
// compares every token with 600 others through three chunks of 256.
TEST(EmbeddingKernelsTest, OneIdForEveryToken) {
  KernelRun run;
  Tensor ids = Tensor::Empty(runtime::DType::kI32, {2, 300});
  for (int64_t i = 0; i < ids.numel(); ++i) ids.data<int32_t>()[i] = 7;
  run.inputs["ids"] = ids;
  ExpectExact(EmbeddingIr(2, 300, 16, 8), run);
}

// Ids that never repeat (a permutation of half the vocabulary, the first and last row among
// them): every token is its own chain; the other rows stay zero.
TEST(EmbeddingKernelsTest, IdsThatNeverRepeat) {
  KernelRun run;
  std::vector<int32_t> all(64);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), std::mt19937_64(13));
  std::swap(*std::find(all.begin(), all.end(), 0), all[0]);
  std::swap(*std::find(all.begin(), all.end(), 63), all[1]);
  Tensor ids = Tensor::Empty(runtime::DType::kI32, {4, 8});
  std::copy(all.begin(), all.begin() + 32, ids.data<int32_t>());
  run.inputs["ids"] = ids;
  ExpectExact(EmbeddingIr(4, 8, 64, 40), run);
}

}  // namespace
}  // namespace gpt_sft::tests

#include "runtime/kernels/cpu/embedding.h"

#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::Dot;
using testing::Random;
using testing::Vec;

TEST(Embedding, GathersRowsAndScatterAddsTheVjp) {
  const int64_t V = 4, C = 3, N = 5;
  std::vector<int32_t> ids = {2, 0, 2, 3, 2};
  Vec table = Random(V * C, 13), dout = Random(N * C, 14), dtable(V * C, 0.0), out(N * C);
  Embedding(table.data(), ids.data(), out.data(), N, C);
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) EXPECT_EQ(out[n * C + c], table[ids[n] * C + c]);
  EmbeddingGrad(dout.data(), ids.data(), dtable.data(), N, C);
  auto loss = [&](const Vec& t) { Vec o(N * C); Embedding(t.data(), ids.data(), o.data(), N, C); return Dot(dout, o); };
  EXPECT_LT(testing::MaxFdError(table, loss, dtable), testing::kFdTolerance);
  EXPECT_EQ(dtable[1 * C], 0.0);  // row 1 is never looked up
  EXPECT_DOUBLE_EQ(dtable[2 * C + 1], dout[0 * C + 1] + dout[2 * C + 1] + dout[4 * C + 1]);
}

TEST(Embedding, GradAccumulatesAcrossCallsOnWideRows) {
  const int64_t V = 3, C = 300, N = 4;  // several column chunks
  std::vector<int32_t> ids = {1, 1, 0, 1};
  Vec dout(N * C, 1.0), dtable(V * C, 0.5);
  EmbeddingGrad(dout.data(), ids.data(), dtable.data(), N, C);
  EmbeddingGrad(dout.data(), ids.data(), dtable.data(), N, C);
  for (int64_t c = 0; c < C; ++c) {
    ASSERT_EQ(dtable[c], 2.5);
    ASSERT_EQ(dtable[C + c], 6.5);
    ASSERT_EQ(dtable[2 * C + c], 0.5);
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels

// ParamChecksums sees every bit of every parameter; one rank always agrees with itself. The
// disagreement between ranks is tested as real MPI ranks (data_parallel_step_test, and
// tests/trainer_ranks_test.sh).
#include "trainer/run_dir/param_checksum.h"

#include <cstring>

#include "gtest/gtest.h"
#include "runtime/collectives/communicator.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::trainer {
namespace {

runtime::ParamStore Params() {
  runtime::ParamStore params = *runtime::ParamStore::Create(*compiler::ModelConfig::FromDepth(1, 97, 64, 64, 2));
  params.InitNanochat(3, /*zero_output_projections=*/false);
  return params;
}

TEST(ParamChecksums, OneFlippedBitChangesOnlyThatParametersChecksum) {
  runtime::ParamStore params = Params();
  const std::vector<uint64_t> before = ParamChecksums(params);
  ASSERT_EQ(before.size(), params.params().size());
  EXPECT_EQ(ParamChecksums(Params()), before);  // the same init, the same bits
  runtime::Param& last = params.params().back();
  uint32_t bits;
  std::memcpy(&bits, &last.data()[last.numel() - 1], 4);
  bits ^= 1u;  // the least significant mantissa bit of the very last element
  std::memcpy(&last.data()[last.numel() - 1], &bits, 4);
  const std::vector<uint64_t> after = ParamChecksums(params);
  for (size_t i = 0; i + 1 < after.size(); ++i) EXPECT_EQ(after[i], before[i]) << params.params()[i].name;
  EXPECT_NE(after.back(), before.back());
}

TEST(VerifyParamsIdenticalAcrossRanks, OneRankAgreesWithItself) {
  std::unique_ptr<runtime::collectives::Communicator> one = runtime::collectives::MakeSingleRankCommunicator();
  EXPECT_TRUE(VerifyParamsIdenticalAcrossRanks(Params(), *one).ok());
}

}  // namespace
}  // namespace gpt_sft::trainer

// Every rank of an MPI world (trainer/BUILD's mpi_test): SftEvaluation with the world deals the
// problems out and sums the counts, and must report exactly what one rank scoring every problem
// reports. A random model with an lm_head of its own gets some multiple-choice problems right
// and others wrong, so the sum over ranks is checked, not only zeros.
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "data/tokenizer/tokenizer.h"
#include "gtest/gtest.h"
#include "runtime/collectives/mpi_test_world.h"
#include "runtime/params/param_store.h"
#include "base/runfiles.h"
#include "trainer/loop/sft_evaluation.h"

namespace gpt_sft::trainer {
namespace {

runtime::collectives::Communicator& World() { return runtime::collectives::MpiTestWorld(); }

TEST(SftEvaluationRanks, DealtOutProblemsGiveTheOneRankMetrics) {
  absl::StatusOr<std::string> words = base::FindRunfile("external/wordlist/words");
  ASSERT_TRUE(words.ok()) << words.status();
  std::ifstream in(*words);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<data::Tokenizer> tokenizer = data::Tokenizer::Train({text.str()}, 512);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  absl::StatusOr<compiler::ModelConfig> config =
      compiler::ModelConfig::FromDepth(1, tokenizer->vocab_size(), 256, 64, 1);
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<runtime::ParamStore> params = runtime::ParamStore::Create(*config);
  ASSERT_TRUE(params.ok()) << params.status();
  params->InitNanochat(3, /*zero_output_projections=*/false);
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.f, 0.5f);
  for (runtime::Param& p : params->params()) {  // nanochat's zero lm_head picks the first letter always
    if (p.name == "lm_head.weight") {
      for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] = normal(rng);
    }
  }
  constexpr int kProblems = 13;  // not a multiple of 2 or 4: the shares are uneven
  auto one_rank = SftEvaluation::Create(&*params, &*tokenizer, *words, kProblems, 7, 1);
  auto dealt = SftEvaluation::Create(&*params, &*tokenizer, *words, kProblems, 7, 1, &World());
  ASSERT_TRUE(one_rank.ok()) << one_rank.status();
  ASSERT_TRUE(dealt.ok()) << dealt.status();
  absl::StatusOr<std::vector<std::pair<std::string, double>>> expected = (*one_rank)->Run();
  absl::StatusOr<std::vector<std::pair<std::string, double>>> got = (*dealt)->Run();
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ(*got, *expected) << "rank " << World().rank() << " of " << World().world_size();
  const double mc = (*expected)[0].second;
  EXPECT_GT(mc, 0.0) << "a random model should get some problems right";
  EXPECT_LT(mc, 1.0) << "a random model should get some problems wrong";
}

}  // namespace
}  // namespace gpt_sft::trainer

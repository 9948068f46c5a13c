// The "done when": a nanochat model_XXXXXX.pt + tokenizer.pkl, written by real PyTorch
// and tiktoken (tests/nanochat/make_nanochat_golden.py), load without Python and give the same
// logits as our own checkpoint of the same weights, and the logits our independent PyTorch
// reference (tests/golden/reference_gpt.py, float64) computed from those weights.
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/test_dir.h"
#include "data/tokenizer/tiktoken_pickle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/nanochat_checkpoint.h"
#include "runtime/checkpoint/param_file.h"
#include "trainer/eval/logits_evaluator.h"

namespace gpt_sft::tests {
namespace {

nlohmann::json Golden() {
  std::ifstream in("tests/nanochat/golden.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

std::vector<float> LogitsOf(const runtime::ParamStore& store, const std::vector<int32_t>& ids) {
  absl::StatusOr<std::unique_ptr<trainer::LogitsEvaluator>> eval = trainer::LogitsEvaluator::Create(&store);
  EXPECT_TRUE(eval.ok()) << eval.status();
  absl::StatusOr<runtime::Tensor> logits = (*eval)->Logits(ids);
  EXPECT_TRUE(logits.ok()) << logits.status();
  const float* p = logits->data<float>();
  return std::vector<float>(p, p + logits->numel());
}

TEST(NanochatLogits, NanochatFilesGiveOurCheckpointsLogitsAndTheReferences) {
  const nlohmann::json golden = Golden();
  absl::StatusOr<data::Tokenizer> tok = data::LoadTiktokenPickle("tests/nanochat/base/tokenizer/tokenizer.pkl");
  ASSERT_TRUE(tok.ok()) << tok.status();
  // The input is <|bos|> + the golden text as our tokenizer (read from tokenizer.pkl) encodes it.
  std::vector<int32_t> ids = {tok->SpecialId(data::SpecialToken::kBos)};
  tok->EncodeAppend(golden.at("text").get<std::string>(), &ids);
  const std::vector<int32_t> inputs = golden.at("inputs").get<std::vector<int32_t>>();
  ids.resize(inputs.size());
  ASSERT_EQ(ids, inputs);

  absl::StatusOr<runtime::LoadedCheckpoint> nanochat =
      runtime::LoadNanochatCheckpoint("tests/nanochat/base/base_checkpoints/d2");
  ASSERT_TRUE(nanochat.ok()) << nanochat.status();
  ASSERT_EQ(nanochat->params.config().vocab_size, tok->vocab_size());
  absl::StatusOr<runtime::ParamStore> ours =
      runtime::ReadParamFile("tests/nanochat/same_weights.safetensors", nanochat->params.config());
  ASSERT_TRUE(ours.ok()) << ours.status();
  // And through our checkpoint API: the nanochat weights saved as our checkpoint and reloaded.
  runtime::CheckpointRecord record;
  record.step = 7;
  absl::StatusOr<runtime::ResolvedCheckpoint> saved =
      runtime::SaveCheckpoint(base::testing::FreshTestDir(), nanochat->params, record);
  ASSERT_TRUE(saved.ok()) << saved.status();
  absl::StatusOr<runtime::LoadedCheckpoint> reloaded = runtime::LoadCheckpoint(*saved);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();

  const std::vector<float> from_nanochat = LogitsOf(nanochat->params, ids);
  EXPECT_EQ(from_nanochat, LogitsOf(*ours, ids));
  EXPECT_EQ(from_nanochat, LogitsOf(reloaded->params, ids));

  // Our float32 interpreter against the float64 reference: 1.3e-6 today. The bound leaves room
  // for rotary tables rounded to bf16 as nanochat rounds them (issue 19 item 2b), which moves
  // these logits (|logit| <= 4) by 3.0e-3 (measured with the reference so modified); a wrong
  // weight, layout or token moves them by O(1).
  const std::vector<std::vector<double>> expected = golden.at("logits_float64").get<std::vector<std::vector<double>>>();
  const int64_t V = nanochat->params.config().vocab_size;
  ASSERT_EQ(from_nanochat.size(), expected.size() * V);
  double worst = 0;
  for (size_t t = 0; t < expected.size(); ++t) {
    for (int64_t v = 0; v < V; ++v) worst = std::max(worst, std::abs(from_nanochat[t * V + v] - expected[t][v]));
  }
  std::cout << "max |our logits - reference float64 logits| = " << worst << "\n";
  EXPECT_LT(worst, 2e-2);
}

}  // namespace
}  // namespace gpt_sft::tests

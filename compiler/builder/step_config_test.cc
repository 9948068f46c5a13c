#include "compiler/builder/step_config.h"

#include "gtest/gtest.h"

namespace gpt_sft::compiler {
namespace {

StepConfig Small(bool packed) {
  StepConfig c;
  c.model = *ModelConfig::FromDepth(2, 512, 64, 128, 1);
  c.batch_size = 2;
  c.seq_len = 64;
  c.packed = packed;
  return c;
}

TEST(OptimizerConfig, D20InitialLearningRatesAreNanochats) {
  const OptimizerConfig opt;
  EXPECT_NEAR(opt.InitialLr(ParamGroup::kUnembedding, 1280), 6.1968e-05, 1e-9);
  EXPECT_NEAR(opt.InitialLr(ParamGroup::kEmbedding, 1280), 3.09839e-03, 1e-8);
  EXPECT_DOUBLE_EQ(opt.InitialLr(ParamGroup::kMatrix, 1280), 4.0e-04);
}

TEST(StepConfig, ValidateNamesTheField) {
  StepConfig c = Small(false);
  EXPECT_TRUE(c.Validate().ok());
  c.batch_size = 0;
  EXPECT_NE(c.Validate().message().find("batch_size"), std::string::npos);
  c = Small(false);
  c.grad_accum_steps = 0;
  EXPECT_NE(c.Validate().message().find("grad_accum_steps"), std::string::npos);
  c = Small(false);
  c.seq_len = -5;
  EXPECT_NE(c.Validate().message().find("seq_len"), std::string::npos);
  c.seq_len = kDynamicDim;
  EXPECT_TRUE(c.Validate().ok());
}

TEST(Signatures, MicroStepTakesParamsGradsThenTheBatch) {
  const EntrySignature s = MicroStepSignature(Small(true));
  const size_t n = 2 + 6 * 2;
  ASSERT_EQ(s.arguments.size(), 2 * n + 4);
  EXPECT_EQ(s.arguments[0], "transformer.wte.weight");
  EXPECT_EQ(s.arguments[n], "grad/transformer.wte.weight");
  EXPECT_EQ(s.arguments[2 * n], "inputs");
  EXPECT_EQ(s.arguments[2 * n + 3], "positions");
  ASSERT_EQ(s.results.size(), n + 1);
  EXPECT_EQ(s.results[0], "loss");
  EXPECT_EQ(s.results[n], "grad/lm_head.weight");
  EXPECT_EQ(LossSignature(Small(false)).arguments.size(), n + 2);
}

TEST(Signatures, OptimizerStateIsTwoMomentsForAdamWAndOneBufferForMuon) {
  const EntrySignature s = OptimizerStepSignature(Small(false));
  const size_t n = 14, state = 2 * 2 + 12;  // wte, lm_head: 2 each; 12 matrices: 1 each
  ASSERT_EQ(s.arguments.size(), 2 * n + state + 2);
  EXPECT_EQ(s.arguments[2 * n], "adamw.exp_avg/transformer.wte.weight");
  EXPECT_EQ(s.arguments[2 * n + 1], "adamw.exp_avg_sq/transformer.wte.weight");
  EXPECT_EQ(s.arguments[2 * n + 2], "muon.momentum_buffer/transformer.h.0.attn.c_q.weight");
  EXPECT_EQ(s.arguments[2 * n + state], "lr_multiplier");
  EXPECT_EQ(s.arguments.back(), "step");
  EXPECT_EQ(s.results.size(), n + state);
}

}  // namespace
}  // namespace gpt_sft::compiler

namespace gpt_sft::compiler {
namespace {

TEST(StepConfigJsonTest, RoundTripsEveryField) {
  StepConfig c;
  c.model = *ModelConfig::FromDepth(2, 512, 256);
  c.batch_size = 2;
  c.seq_len = 64;
  c.packed = true;
  c.grad_accum_steps = 3;
  c.dp_world_size = 2;
  c.optimizer.matrix_lr = 0.05;
  c.optimizer.muon_nesterov = false;
  c.dtype = ElementType::kBF16;
  absl::StatusOr<StepConfig> back = StepConfig::FromJson(c.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToJson(), c.ToJson());
  EXPECT_TRUE(back->model == c.model);
  EXPECT_EQ(back->grad_accum_steps, 3);
  EXPECT_FALSE(back->optimizer.muon_nesterov);
  EXPECT_EQ(back->dtype, ElementType::kBF16);
}

TEST(Dtype, ParsesShortAndLongNamesAndListsThemOnError) {
  EXPECT_EQ(*ParseDtype("bfloat16"), ElementType::kBF16);
  EXPECT_EQ(*ParseDtype("bf16"), ElementType::kBF16);
  EXPECT_EQ(*ParseDtype("float32"), ElementType::kF32);
  EXPECT_EQ(*ParseDtype("f64"), ElementType::kF64);
  for (ElementType t : {ElementType::kF32, ElementType::kF64, ElementType::kBF16}) {
    EXPECT_EQ(*ParseDtype(DtypeName(t)), t);
  }
  absl::StatusOr<ElementType> bad = ParseDtype("float16");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown dtype 'float16'"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("bfloat16"), std::string::npos) << bad.status();
}

TEST(StepConfigJsonTest, RefusesAMissingKeyNamingIt) {
  absl::StatusOr<StepConfig> bad = StepConfig::FromJson(R"({"batch_size": 4})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("model"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace gpt_sft::compiler

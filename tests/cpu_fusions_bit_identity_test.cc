// The cpu target's fusions (runtime/device/cpu/BUILTINS.md: rotary by tables, rotary with its
// QK-norm, softcap with its loss, the lm_head's loss with its VJP, the residual add with its
// rms_norm, forward and backward, relu² as the MLP matmul's epilogue, matmuls by transposed
// weights without the copy, a run of adds in one launch, the optimizer's same-shape Muon
// updates in one launch; under bf16 autocast their bf16 forms, dy written prepared for the
// lm_head's weight gradient and the residual add with the next norm as the projection's
// epilogue) keep the compiled step bit-identical to the interpreter, in f32 and in bf16:
// every micro-batch loss and every parameter after several optimizer steps are the same
// bits, padded and packed (packed rows restart their positions), with gradient accumulation.
// The artifact is checked to run the fused builtins, so the comparison covers them.
#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/step_compiler.h"
#include "gtest/gtest.h"
#include "runtime/params/param_store.h"
#include "trainer/batch_tensors.h"
#include "trainer/device_step.h"
#include "trainer/eager_step.h"
#include "trainer/step_compile.h"
#include "trainer/step_testing.h"

namespace gpt_sft {
namespace {

constexpr int kVocab = 97, kB = 2, kT = 32, kAccum = 2, kSteps = 3;

compiler::StepConfig Config(bool packed, compiler::ElementType dtype) {
  compiler::StepConfig config;
  config.model = *compiler::ModelConfig::FromDepth(2, kVocab, 64, 64, 2);
  config.batch_size = kB;
  config.seq_len = kT;
  config.packed = packed;
  config.grad_accum_steps = kAccum;
  config.dtype = dtype;
  return config;
}

/// The fused builtins each dtype's artifact must run.
std::vector<std::string> FusedBuiltins(compiler::ElementType dtype) {
  if (dtype == compiler::ElementType::kBF16) {
    return {"cpu.linear_softcap_bf16_cross_entropy_grad_v2.f32", "cpu.matmul_weight_grad_bf16_prepared_dy_slabs.f32",
            "cpu.rotary_rms_norm_round_bf16.f32", "cpu.rms_norm_rotary_grad_of_rounded_dy_bf16.f32",
            "cpu.matmul_bf16_residual_rms_norm.f32", "cpu.matmul_bf16_round_relu_square_prepared_x_r.f32",
            "cpu.matmul_bf16_residual_rms_norm_prepared_x_y.f32", "cpu.matmul_bf16_round_prepared_x.f32",
            "cpu.matmul_weight_grad_bf16_prepared_x.f32", "cpu.matmul_weight_grad_bf16_prepared_dy_x.f32",
            "cpu.matmul_grad_input_bf16_relu_square_grad_prepared_g.f32",
            "cpu.matmul_grad_input_bf16_round_prepared_dy.f32",
            "cpu.matmul_grad_input_bf16.f32", "cpu.attention_grad_bf16_prepared_dv.f32", "cpu.rms_norm_grad_add_round_bf16.f32",
            "cpu.muon_group_bf16.f32"};
  }
  return {"cpu.rotary_rms_norm.f32", "cpu.rms_norm_rotary_grad.f32", "cpu.softcap_cross_entropy.f32",
          "cpu.linear_softcap_cross_entropy_grad_v2.f32", "cpu.add_rms_norm.f32", "cpu.rms_norm_grad_add.f32",
          "cpu.add_list.f32", "cpu.matmul_relu_square.f32", "cpu.matmul_grad_input.f32", "cpu.muon_group.f32"};
}

std::set<std::string> Builtins(const compiler::StepConfig& config) {
  absl::StatusOr<artifact::Artifact> a = compiler::CompileStep(config, compiler::Target::kCpu);
  EXPECT_TRUE(a.ok()) << a.status();
  std::set<std::string> names;
  if (!a.ok()) return names;
  for (const artifact::Function& f : a->functions) {
    for (const artifact::Launch& l : f.launches) {
      if (l.kind == artifact::LaunchKind::kBuiltin) names.insert(l.name);
    }
  }
  return names;
}

void ExpectBitIdentical(bool packed, compiler::ElementType dtype = compiler::ElementType::kF32) {
  const compiler::StepConfig config = Config(packed, dtype);
  const std::set<std::string> builtins = Builtins(config);
  for (const std::string& fused : FusedBuiltins(dtype)) {
    EXPECT_TRUE(builtins.count(fused)) << fused << " is not in the artifact";
  }
  runtime::ParamStore eager_params = trainer::testing::RandomParams(config.model);
  runtime::ParamStore compiled_params = trainer::testing::RandomParams(config.model);
  auto eager = trainer::EagerStep::Create(config, &eager_params);
  ASSERT_TRUE(eager.ok()) << eager.status();
  trainer::DeviceStepOptions options;
  options.device = "cpu";
  auto compiled = trainer::CompileDeviceStep(config, &compiled_params, /*cache_dir=*/"", options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  uint32_t seed = 11;
  for (int step = 0; step < kSteps; ++step) {
    for (int m = 0; m < kAccum; ++m) {
      const data::Batch batch = trainer::testing::TwoDocumentBatch(seed++, kB, kT, kVocab);
      absl::StatusOr<double> a = (*eager)->MicroStep(trainer::ToStepBatch(batch, packed));
      absl::StatusOr<double> b = (*compiled)->MicroStep(trainer::ToStepBatch(batch, packed));
      ASSERT_TRUE(a.ok()) << a.status();
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_EQ(std::memcmp(&*a, &*b, sizeof(double)), 0)
          << "step " << step << " micro " << m << ": interpreter " << *a << ", compiled " << *b;
    }
    ASSERT_TRUE((*eager)->OptimizerStep(1.0 - step / double(kSteps)).ok());
    ASSERT_TRUE((*compiled)->OptimizerStep(1.0 - step / double(kSteps)).ok());
  }
  ASSERT_TRUE((*compiled)->SyncParamsToHost().ok());
  EXPECT_EQ(trainer::testing::MaxRelDiff(compiled_params, eager_params), 0.0);
  EXPECT_GT(trainer::testing::MaxRelDiff(trainer::testing::RandomParams(config.model), eager_params), 1e-3)
      << "training moved nothing";
}

TEST(CpuFusionsBitIdentity, PaddedStepsAreTheInterpretersBits) { ExpectBitIdentical(false); }
TEST(CpuFusionsBitIdentity, PackedStepsAreTheInterpretersBits) { ExpectBitIdentical(true); }
TEST(CpuFusionsBitIdentity, Bf16PaddedStepsAreTheInterpretersBits) {
  ExpectBitIdentical(false, compiler::ElementType::kBF16);
}
TEST(CpuFusionsBitIdentity, Bf16PackedStepsAreTheInterpretersBits) {
  ExpectBitIdentical(true, compiler::ElementType::kBF16);
}

}  // namespace
}  // namespace gpt_sft

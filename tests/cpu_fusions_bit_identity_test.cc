// The cpu target's fusions (runtime/device/cpu/BUILTINS.md: rotary by tables, rotary with its
// QK-norm, softcap with its loss, the lm_head's loss with its VJP, the residual add with its
// rms_norm, forward and backward, relu² as the MLP matmul's epilogue, matmuls by transposed
// weights without the copy, a run of adds in one launch, the optimizer's same-shape Muon
// updates in one launch; under bf16 autocast their bf16 forms, dy written prepared for the
// lm_head's weight gradient and the residual add with the next norm as the projection's
// epilogue) keep the compiled step bit-identical to the interpreter, in f32 and in bf16:
// every micro-batch loss and every parameter after several optimizer steps are the same
// bits, padded and packed (packed rows restart their positions), with gradient accumulation.
// The artifact is checked to run the fused builtins (GEMMs by their params), so the comparison covers them.
#include <cmath>
#include <cstring>
#include <initializer_list>
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
#include "ukernel/attention.h"
#include "ukernel/gemm.h"
#include "ukernel/norm.h"
#include "ukernel/rotary.h"

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

/// A micro-kernel family's launch as Builtins() names it: the builtin and the scalars that
/// pick its variant (ukernel/: GEMM form, epilogue, flags; norm, rotary, attention op, flags).
std::string Variant(const std::string& builtin, std::initializer_list<int64_t> params) {
  std::string s = builtin + "(";
  for (int64_t p : params) s += std::to_string(p) + ",";
  return s + ")";
}
std::string Gemm(ukernel::GemmForm form, ukernel::GemmEpilogue epilogue, int64_t flags) {
  return Variant("cpu.gemm.f32", {static_cast<int64_t>(form), static_cast<int64_t>(epilogue), flags});
}
std::string Norm(ukernel::NormOp op, int64_t flags) {
  return Variant("cpu.norm.f32", {static_cast<int64_t>(op), flags});
}
std::string Rotary(ukernel::RotaryOp op, int64_t flags) {
  return Variant("cpu.rotary.f32", {static_cast<int64_t>(op), flags});
}

/// The fused builtins each dtype's artifact must run.
std::vector<std::string> FusedBuiltins(compiler::ElementType dtype) {
  using ukernel::GemmEpilogue;
  using ukernel::GemmForm;
  using ukernel::NormOp;
  using ukernel::RotaryOp;
  constexpr int64_t kBf16 = ukernel::kGemmBf16Inputs, kRound = ukernel::kGemmRoundOutput,
                    kA = ukernel::kGemmPreparedA, kB = ukernel::kGemmPreparedB, kOut = ukernel::kGemmPreparedOut;
  if (dtype == compiler::ElementType::kBF16) {
    return {"cpu.linear_softcap_bf16_cross_entropy_grad_v2.f32",
            Gemm(GemmForm::kDyTX, GemmEpilogue::kNone, kBf16 | ukernel::kGemmSlabsA),
            Rotary(RotaryOp::kRotaryRmsNorm, ukernel::kRotaryBf16),
            Rotary(RotaryOp::kRmsNormRotaryGrad, ukernel::kRotaryBf16),
            Gemm(GemmForm::kXWt, GemmEpilogue::kResidualRmsNorm, kBf16 | kRound),
            Gemm(GemmForm::kXWt, GemmEpilogue::kReluSquare, kBf16 | kRound | kA | kOut),
            Gemm(GemmForm::kXWt, GemmEpilogue::kResidualRmsNorm, kBf16 | kRound | kA | kOut),
            Gemm(GemmForm::kXWt, GemmEpilogue::kNone, kBf16 | kRound | kA),
            Gemm(GemmForm::kDyTX, GemmEpilogue::kNone, kBf16 | kB),
            Gemm(GemmForm::kDyTX, GemmEpilogue::kNone, kBf16 | kA | kB),
            Gemm(GemmForm::kDyW, GemmEpilogue::kReluSquareGrad, kBf16 | kRound | kOut),
            Gemm(GemmForm::kDyW, GemmEpilogue::kNone, kBf16 | kRound | kA),
            Gemm(GemmForm::kDyW, GemmEpilogue::kNone, kBf16),
            Variant("cpu.attention.f32", {static_cast<int64_t>(ukernel::AttentionOp::kBackward),
                                         ukernel::kAttentionBf16Inputs | ukernel::kAttentionPreparedDv}),
            Norm(NormOp::kRmsNormGradAdd, ukernel::kNormRoundOutput),
            "cpu.muon_group_bf16.f32"};
  }
  return {Rotary(RotaryOp::kRotaryRmsNorm, 0), Rotary(RotaryOp::kRmsNormRotaryGrad, 0),
          "cpu.softcap_cross_entropy.f32", "cpu.linear_softcap_cross_entropy_grad_v2.f32",
          Norm(NormOp::kAddRmsNorm, 0), Norm(NormOp::kRmsNormGradAdd, 0), "cpu.add_list.f32",
          Gemm(GemmForm::kXWt, GemmEpilogue::kReluSquare, 0), Gemm(GemmForm::kDyW, GemmEpilogue::kNone, 0),
          "cpu.muon_group.f32"};
}

std::set<std::string> Builtins(const compiler::StepConfig& config) {
  absl::StatusOr<artifact::Artifact> a = compiler::CompileStep(config, compiler::Target::kCpu);
  EXPECT_TRUE(a.ok()) << a.status();
  std::set<std::string> names;
  if (!a.ok()) return names;
  for (const artifact::Function& f : a->functions) {
    for (const artifact::Launch& l : f.launches) {
      if (l.kind != artifact::LaunchKind::kBuiltin) continue;
      // How many leading scalars name a family launch's variant.
      const size_t picks = l.name == "cpu.gemm.f32" ? 3 : (l.name == "cpu.norm.f32" || l.name == "cpu.rotary.f32" || l.name == "cpu.attention.f32")
                                                  ? 2
                                                  : 0;
      if (picks > 0 && l.args.size() >= picks) {
        std::string key = l.name + "(";
        for (size_t i = 0; i < picks; ++i) {
          int64_t v = l.args[i].scalar.i;
          // Segment ids are the batch's layout, not a fusion: packed and padded steps name
          // the same attention variants.
          if (l.name == "cpu.attention.f32" && i == 1) v &= ~ukernel::kAttentionSegments;
          key += std::to_string(v) + ",";
        }
        names.insert(key + ")");
      } else {
        names.insert(l.name);
      }
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

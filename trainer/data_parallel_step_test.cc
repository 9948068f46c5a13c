// Data-parallel training steps, run as real MPI ranks (mpi_test: 2 and 4 processes). Each
// optimizer step takes kGlobalMicroBatches micro-batches; rank r takes its contiguous share
// and accumulates over it (grad_accum_steps = kGlobalMicroBatches / world), and the step's
// gpt.all_reduce averages the gradients over the ranks. Every rank also runs the one-rank
// reference in-process (all micro-batches, no communicator), and the parameters after 5
// optimizer steps must agree within 1e-5 relative, for the interpreter and for the compiled
// step on each device (cpu, opencl), with the ranks bit-identical to each other and no
// recompilation on any rank.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compiler/codegen/step_compiler.h"
#include "data/collate/batch.h"
#include "gtest/gtest.h"
#include "runtime/collectives/mpi_test_world.h"
#include "runtime/interpreter/communicator_collectives.h"
#include "runtime/params/param_store.h"
#include "trainer/batch_tensors.h"
#include "trainer/device_step.h"
#include "trainer/eager_step.h"
#include "trainer/run_dir/param_checksum.h"
#include "trainer/step_compile.h"
#include "trainer/step_testing.h"

namespace gpt_sft::trainer {
namespace {

constexpr int kVocab = 97, kB = 2, kT = 16, kGlobalMicroBatches = 4, kOptimizerSteps = 5;

runtime::collectives::Communicator& World() { return runtime::collectives::MpiTestWorld(); }

compiler::StepConfig Config(bool packed, int world) {
  compiler::StepConfig config;
  config.model = *compiler::ModelConfig::FromDepth(2, kVocab, 64, 64, 2);
  config.batch_size = kB;
  config.seq_len = kT;
  config.packed = packed;
  config.grad_accum_steps = kGlobalMicroBatches / world;
  config.dp_world_size = world;
  return config;
}

// Micro-batch `index` of optimizer step `step`: the same on every rank.
data::Batch MicroBatch(int step, int index) { return testing::TwoDocumentBatch(1000 * step + index, kB, kT, kVocab); }
runtime::ParamStore RandomParams() { return testing::RandomParams(Config(false, 1).model); }
using testing::MaxRelDiff;

// The same over the updates (after - before): the optimizers are nearly invariant to the
// gradients' scale (AdamW's m / sqrt(v), Muon's orthogonalisation), so this is the sharper
// check that each rank applied the average of every rank's gradients.
double MaxRelUpdateDiff(const runtime::ParamStore& a, const runtime::ParamStore& b, const runtime::ParamStore& start) {
  double worst = 0;
  for (size_t i = 0; i < a.params().size(); ++i) {
    const float *pa = a.params()[i].data(), *pb = b.params()[i].data(), *p0 = start.params()[i].data();
    double diff = 0, scale = 1e-30;
    for (int64_t j = 0; j < a.params()[i].numel(); ++j) {
      diff = std::max(diff, std::abs(double(pa[j] - p0[j]) - double(pb[j] - p0[j])));
      scale = std::max(scale, std::abs(double(pb[j] - p0[j])));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

// The bar on the parameters, and a tighter one on the updates.
void ExpectMatchesOneRank(const runtime::ParamStore& params, const runtime::ParamStore& reference, int rank,
                          int world) {
  const runtime::ParamStore start = RandomParams();
  EXPECT_LE(MaxRelDiff(params, reference), 1e-5) << "rank " << rank << " of " << world;
  EXPECT_LE(MaxRelUpdateDiff(params, reference, start), 1e-3) << "rank " << rank << " of " << world;
}

// kOptimizerSteps steps over micro-batches [first, first + count) of each step.
template <typename Step>
void Train(Step& step, int first, int count) {
  for (int s = 0; s < kOptimizerSteps; ++s) {
    for (int m = first; m < first + count; ++m) {
      absl::StatusOr<double> loss = step.MicroStep(ToStepBatch(MicroBatch(s, m), step.config().packed));
      ASSERT_TRUE(loss.ok()) << loss.status();
      ASSERT_TRUE(std::isfinite(*loss));
    }
    ASSERT_TRUE(step.OptimizerStep(1.0 - 0.1 * s).ok());
  }
  ASSERT_TRUE(step.SyncParamsToHost().ok());
}

// The compiled step on `device` over `world` (null: one rank), compiled by this process or
// loaded from `cache_dir`.
absl::StatusOr<std::unique_ptr<DeviceStep>> MakeCompiled(const compiler::StepConfig& config,
                                                        runtime::ParamStore* params, const std::string& device,
                                                        runtime::collectives::Communicator* world,
                                                        const std::string& cache_dir = "") {
  DeviceStepOptions options;
  options.device = device;
  options.communicator = world;
  return CompileDeviceStep(config, params, cache_dir, options);
}

// The ranks' parameters are the same bits: every rank's checksum equals rank 0's.
void ExpectRanksBitIdentical(const runtime::ParamStore& params) {
  absl::Status same = VerifyParamsIdenticalAcrossRanks(params, World());
  EXPECT_TRUE(same.ok()) << same;
}

// The one-rank run: the interpreter (device "") or the compiled step on `device`.
runtime::ParamStore OneRankReference(bool packed, const std::string& device) {
  runtime::ParamStore params = RandomParams();
  const compiler::StepConfig config = Config(packed, 1);
  if (!device.empty()) {
    auto step = MakeCompiled(config, &params, device, nullptr);
    EXPECT_TRUE(step.ok()) << step.status();
    if (step.ok()) Train(**step, 0, kGlobalMicroBatches);
  } else {
    auto step = EagerStep::Create(config, &params);
    EXPECT_TRUE(step.ok()) << step.status();
    if (step.ok()) Train(**step, 0, kGlobalMicroBatches);
  }
  return params;
}

class DataParallelStep : public ::testing::TestWithParam<bool> {};  // packed or padded

TEST_P(DataParallelStep, EagerRanksMatchOneRankOverTheSameGlobalBatch) {
  runtime::collectives::Communicator& world = World();
  const bool packed = GetParam();
  const int share = kGlobalMicroBatches / world.world_size();
  runtime::ParamStore params = RandomParams();
  runtime::InterpreterOptions options;
  options.collectives = std::make_shared<runtime::CommunicatorCollectives>(world);
  auto step = EagerStep::Create(Config(packed, world.world_size()), &params, options);
  ASSERT_TRUE(step.ok()) << step.status();
  Train(**step, world.rank() * share, share);
  const runtime::ParamStore reference = OneRankReference(packed, "");
  ExpectMatchesOneRank(params, reference, world.rank(), world.world_size());
  ExpectRanksBitIdentical(params);
}

INSTANTIATE_TEST_SUITE_P(Packing, DataParallelStep, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Packed" : "Padded"; });

class DataParallelDeviceStep : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};  // device, packed

TEST_P(DataParallelDeviceStep, CompiledRanksMatchOneRankWithoutRecompiling) {
  runtime::collectives::Communicator& world = World();
  const auto& [device, packed] = GetParam();
  const int share = kGlobalMicroBatches / world.world_size();
  runtime::ParamStore params = RandomParams();
  auto step = MakeCompiled(Config(packed, world.world_size()), &params, device, &world);
  ASSERT_TRUE(step.ok()) << step.status();
  Train(**step, world.rank() * share, share);
  EXPECT_EQ((*step)->Recompilations(), 0) << "rank " << world.rank() << " recompiled";
  const runtime::ParamStore reference = OneRankReference(packed, device);
  ExpectMatchesOneRank(params, reference, world.rank(), world.world_size());
  ExpectRanksBitIdentical(params);
}

INSTANTIATE_TEST_SUITE_P(DevicesAndPacking, DataParallelDeviceStep,
                         ::testing::Combine(::testing::Values("cpu", "opencl"), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "Packed" : "Padded");
                         });

TEST(DataParallelCompile, RankZeroCompilesAndTheOthersLoadItsArtifact) {
  runtime::collectives::Communicator& world = World();
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string cache = std::string(tmp) + "/dp_cache_" + std::to_string(world.world_size());
  runtime::ParamStore params = RandomParams();
  auto step = MakeCompiled(Config(true, world.world_size()), &params, "cpu", &world, cache);
  ASSERT_TRUE(step.ok()) << step.status();
  if (world.rank() > 0) {
    EXPECT_TRUE((*step)->compile_report().cache_hit) << "rank " << world.rank();
  }
}

TEST(DataParallelStepErrors, AStepBuiltForAnotherWorldIsRefusedNamingBothSizes) {
  runtime::collectives::Communicator& world = World();
  runtime::ParamStore params = RandomParams();
  auto step = MakeCompiled(Config(false, world.world_size() * 2 > 4 ? 1 : world.world_size() * 2), &params, "cpu",
                           &world);
  ASSERT_FALSE(step.ok());
  EXPECT_NE(std::string(step.status().message()).find("dp_world_size"), std::string::npos) << step.status();
  runtime::InterpreterOptions eager;
  eager.collectives = std::make_shared<runtime::CommunicatorCollectives>(world);
  auto eager_step = EagerStep::Create(Config(false, 1), &params, eager);
  ASSERT_FALSE(eager_step.ok());
  EXPECT_NE(std::string(eager_step.status().message()).find("dp_world_size 1"), std::string::npos);
}

}  // namespace
}  // namespace gpt_sft::trainer

// Executable::Bind keeps distinct slots on distinct bytes (the compiled cpu step updates
// differently named state at once: compiler/lowering/muon_group_fusion.h), whether the
// overlap comes through two wrappers of one host block or two ranges of one buffer.
#include <memory>
#include <vector>

#include "compiler/builder/step_config.h"
#include "compiler/codegen/step_compiler.h"
#include "gtest/gtest.h"
#include "runtime/device/device.h"
#include "runtime/executable/executable.h"

namespace gpt_sft::runtime {
namespace {

constexpr char kQ[] = "transformer.h.0.attn.c_q.weight";
constexpr char kK[] = "transformer.h.0.attn.c_k.weight";

class ExecutableBind : public ::testing::Test {
 protected:
  void SetUp() override {
    compiler::StepConfig config;
    config.model = *compiler::ModelConfig::FromDepth(1, 97, 32, 64, 1);
    config.batch_size = 1;
    config.seq_len = 32;
    absl::StatusOr<artifact::Artifact> artifact = compiler::CompileStep(config, compiler::Target::kCpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    absl::StatusOr<std::unique_ptr<device::Device>> cpu = device::CreateDevice("cpu");
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    cpu_ = *std::move(cpu);
    absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Load(*artifact, cpu_.get());
    ASSERT_TRUE(exe.ok()) << exe.status();
    exe_ = *std::move(exe);
    bytes_ = 64 * 64 * sizeof(float);
  }

  std::unique_ptr<device::Buffer> Wrap(float* data, int64_t bytes) {
    absl::StatusOr<std::unique_ptr<device::Buffer>> b = cpu_->WrapHostMemory(data, bytes);
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? *std::move(b) : nullptr;
  }

  std::unique_ptr<device::Device> cpu_;
  std::unique_ptr<Executable> exe_;
  int64_t bytes_ = 0;
};

TEST_F(ExecutableBind, TwoWrappersOfOneHostBlockAreRefused) {
  std::vector<float> block(64 * 64 + 16);
  std::unique_ptr<device::Buffer> q = Wrap(block.data(), bytes_), k = Wrap(block.data() + 16, bytes_);
  ASSERT_TRUE(exe_->Bind(kQ, device::WholeBuffer(*q)).ok());
  const absl::Status s = exe_->Bind(kK, device::WholeBuffer(*k));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(kK), std::string::npos) << s;
  EXPECT_NE(s.message().find(kQ), std::string::npos) << s;
}

TEST_F(ExecutableBind, OverlappingRangesOfOneBufferAreRefused) {
  absl::StatusOr<std::unique_ptr<device::Buffer>> buffer = cpu_->Allocate(2 * bytes_);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  ASSERT_TRUE(exe_->Bind(kQ, device::BufferRange{buffer->get(), 0, bytes_}).ok());
  EXPECT_FALSE(exe_->Bind(kK, device::BufferRange{buffer->get(), bytes_ - 4, bytes_}).ok());
  EXPECT_TRUE(exe_->Bind(kK, device::BufferRange{buffer->get(), bytes_, bytes_}).ok());  // adjacent: no shared byte
}

TEST_F(ExecutableBind, SeparateMemoryBindsAndRebindingASlotIsNoOverlap) {
  std::vector<float> a(64 * 64), b(64 * 64);
  std::unique_ptr<device::Buffer> q = Wrap(a.data(), bytes_), k = Wrap(b.data(), bytes_);
  ASSERT_TRUE(exe_->Bind(kQ, device::WholeBuffer(*q)).ok());
  EXPECT_TRUE(exe_->Bind(kK, device::WholeBuffer(*k)).ok());
  EXPECT_TRUE(exe_->Bind(kQ, device::WholeBuffer(*q)).ok());  // the slot's own old range
  EXPECT_TRUE(exe_->AllocateUnboundSlots().ok());
}

}  // namespace
}  // namespace gpt_sft::runtime

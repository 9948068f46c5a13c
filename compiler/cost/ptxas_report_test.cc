// ParsePtxasReport on text captured from `ptxas -arch=sm_90 -v` (CUDA 13.0) on this project's
// depth-2 cuda step, cut to a few kernels: one with a stack frame (attention), one without,
// a device function's own properties between entries, and one entry with spills (its two
// spill figures edited in, as the current kernels spill nowhere).
#include "compiler/cost/ptxas_report.h"

#include "gtest/gtest.h"

namespace gpt_sft::compiler::cost {
namespace {

constexpr char kReport[] = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'attention' for 'sm_90'
ptxas info    : Function properties for attention
    1120 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 128 registers, used 1 barriers, 1120 bytes cumulative stack size, 24576 bytes smem
ptxas info    : Compile time = 64.195 ms
ptxas info    : Compiling entry function 'pow_kernel' for 'sm_90'
ptxas info    : Function properties for pow_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 44 registers, used 0 barriers
ptxas info    : Compile time = 20.192 ms
ptxas info    : Function properties for __internal_accurate_pow
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'rms_norm' for 'sm_90'
ptxas info    : Function properties for rms_norm
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 2.658 ms
ptxas info    : Compiling entry function 'spilling' for 'sm_90'
ptxas info    : Function properties for spilling
    40 bytes stack frame, 36 bytes spill stores, 32 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 40 bytes cumulative stack size
)";

TEST(PtxasReport, ReadsEachEntrysRegistersFrameSpillsAndSharedMemory) {
  absl::StatusOr<std::map<std::string, KernelResources>> report = ParsePtxasReport(kReport);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->size(), 4u);

  const KernelResources& attention = report->at("attention");
  EXPECT_EQ(attention.registers, 128);
  EXPECT_EQ(attention.stack_frame_bytes, 1120);
  EXPECT_EQ(attention.shared_bytes, 24576);
  EXPECT_TRUE(attention.UsesLocalMemory());

  const KernelResources& rms_norm = report->at("rms_norm");
  EXPECT_EQ(rms_norm.registers, 14);
  EXPECT_EQ(rms_norm.stack_frame_bytes, 0);
  EXPECT_EQ(rms_norm.shared_bytes, 1024);
  EXPECT_FALSE(rms_norm.UsesLocalMemory());

  const KernelResources& spilling = report->at("spilling");
  EXPECT_EQ(spilling.registers, 255);
  EXPECT_EQ(spilling.spill_store_bytes, 36);
  EXPECT_EQ(spilling.spill_load_bytes, 32);
  EXPECT_EQ(spilling.shared_bytes, 0);
  EXPECT_TRUE(spilling.UsesLocalMemory());
}

TEST(PtxasReport, ADeviceFunctionsFrameIsNotTheEntrysBefore) {
  absl::StatusOr<std::map<std::string, KernelResources>> report = ParsePtxasReport(kReport);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->count("__internal_accurate_pow"), 0u);
  EXPECT_EQ(report->at("pow_kernel").stack_frame_bytes, 0);
  EXPECT_EQ(report->at("pow_kernel").registers, 44);
}

TEST(PtxasReport, AnEntryWithoutItsRegisterLineIsAnError) {
  absl::StatusOr<std::map<std::string, KernelResources>> report =
      ParsePtxasReport("ptxas info    : Compiling entry function 'cut' for 'sm_90'\n");
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("'cut'"), std::string::npos) << report.status();
}

TEST(PtxasReport, NoEntriesIsAnEmptyReport) {
  absl::StatusOr<std::map<std::string, KernelResources>> report = ParsePtxasReport("ptxas info    : 0 bytes gmem\n");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->empty());
}

}  // namespace
}  // namespace gpt_sft::compiler::cost

// The PyTorch eager baseline's configuration (from Test 2's figures) and its python choice,
// with a /bin/sh stand-in as the peer (no torch): a missing venv, --torch_eager=none, a config
// the peer cannot run and a failing peer are each "not measured" with the reason; a working
// peer gives the figure.
#include "trainer/validation/torch_eager_baseline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "trainer/validation/criteria.h"
#include "trainer/validation/synthetic_report.h"

namespace gpt_sft::trainer::validation {
namespace {

using ::testing::HasSubstr;

base::Json Model() {
  return base::Json{{"n_layer", 2},   {"n_embd", 128},     {"n_head", 2},
                    {"n_kv_head", 2}, {"vocab_size", 512}, {"sequence_len", 512}};
}

std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

TEST(TorchEagerPeerOptions, Test2sShapeMicroBatchesThreadsAndDtype) {
  const TestRun compiled = SyntheticTest(TestRole::kCompiled, 8, 0.2);  // [4, 512], 8192 tokens/step, 1 thread
  absl::StatusOr<bench::PeerOptions> o = TorchEagerPeerOptions(Model(), compiled, "bfloat16");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->depth, 2);
  EXPECT_EQ(o->n_embd, 128);
  EXPECT_EQ(o->n_head, 2);
  EXPECT_EQ(o->vocab, 512);
  EXPECT_EQ(o->batch, 4);
  EXPECT_EQ(o->seq, 512);
  EXPECT_EQ(o->grad_accum, 4);
  EXPECT_EQ(o->threads, 1);
  EXPECT_EQ(o->mode, "eager");
  EXPECT_EQ(o->dtype, "bfloat16");
  EXPECT_EQ(TorchEagerPeerOptions(Model(), compiled, "float32 (the trainer's default)")->dtype, "float32");
}

TEST(TorchEagerPeerOptions, WhatThePeerCannotRunIsSaid) {
  const TestRun compiled = SyntheticTest(TestRole::kCompiled, 8, 0.2);
  base::Json gqa = Model();
  gqa["n_kv_head"] = 1;
  EXPECT_THAT(TorchEagerPeerOptions(gqa, compiled, "float32").status().message(), HasSubstr("n_kv_head = n_head"));
  EXPECT_THAT(TorchEagerPeerOptions(nullptr, compiled, "float32").status().message(), HasSubstr("n_layer"));
  TestRun odd = compiled;
  odd.steps.back().tokens = 3000;
  EXPECT_THAT(TorchEagerPeerOptions(Model(), odd, "float32").status().message(), HasSubstr("not a whole number"));
  TestRun no_threads = compiled;
  no_threads.summary->num_threads.reset();
  EXPECT_THAT(TorchEagerPeerOptions(Model(), no_threads, "float32").status().message(), HasSubstr("thread count"));
}

TorchEagerRequest Request(const std::string& python_flag, const std::string& script) {
  TorchEagerRequest r;
  r.python_flag = python_flag;
  r.venv.root_dir = TempDir() + "/no_venvs_here";
  r.script = script;
  return r;
}

TEST(MeasureTorchEager, NoneAndAMissingVenvAreNotMeasuredWithTheReason) {
  const TestRun compiled = SyntheticTest(TestRole::kCompiled, 8, 0.2);
  std::ostringstream console;
  TorchEagerBaseline none = MeasureTorchEager(Request("none", ""), Model(), &compiled, "float32", console);
  EXPECT_FALSE(none.measured);
  EXPECT_EQ(none.why_not, "--torch_eager=none");
  TorchEagerBaseline missing = MeasureTorchEager(Request("auto", ""), Model(), &compiled, "float32", console);
  EXPECT_FALSE(missing.measured);
  EXPECT_THAT(missing.why_not, HasSubstr("no PyTorch peer venv at " + TempDir() + "/no_venvs_here/torch-peer-"));
  EXPECT_THAT(missing.why_not, HasSubstr("--torch_eager=venv"));
  EXPECT_THAT(console.str(), HasSubstr("PyTorch eager baseline not measured"));
  TorchEagerBaseline no_test2 = MeasureTorchEager(Request("/bin/sh", ""), Model(), nullptr, "float32", console);
  EXPECT_EQ(no_test2.why_not, "Test 2 did not run");
}

TEST(MeasureTorchEager, RunsThePeerWithTest2sConfig) {
  // The stand-in reports the flags it was given as its torch version, and 0.5 s per step.
  const std::string script = TempDir() + "/stand_in_peer.sh";
  std::ofstream(script) << R"(echo "{\"config\": {\"depth\": 2, \"n_embd\": 128, \"n_head\": 2, \"vocab\": 512, \
\"batch\": 4, \"seq\": 512}, \"threads\": 1, \"warmup\": 1, \"steps\": 3, \"step_seconds_median\": 0.5, \
\"step_seconds\": [0.4, 0.5, 0.6], \"step_user_seconds\": [1, 1, 1], \"step_system_seconds\": [0, 0, 0], \
\"step_minor_faults\": [0, 0, 0], \"tokens_per_second\": 1, \"num_params\": 1, \"flops_per_token\": 1, \
\"gflops_per_second\": 1, \"peak_rss_bytes\": 123, \"torch_version\": \"$*\", \"sgemm_library\": \"x\", \
\"blas\": [], \"glibc_tunables\": \"\", \"attention\": \"sdpa ${OMP_WAIT_POLICY}\"}")";
  const TestRun compiled = SyntheticTest(TestRole::kCompiled, 8, 0.2);
  std::ostringstream console;
  TorchEagerBaseline b = MeasureTorchEager(Request("/bin/sh", script), Model(), &compiled, "float32", console);
  ASSERT_TRUE(b.measured) << b.why_not;
  ASSERT_TRUE(b.seconds_per_step.has_value());
  EXPECT_DOUBLE_EQ(*b.seconds_per_step, 0.5);
  EXPECT_EQ(b.peak_rss_bytes, 123);
  EXPECT_THAT(b.torch_version,
              HasSubstr("--depth=2 --n_embd=128 --n_head=2 --vocab=512 --batch=4 --seq=512 "
                        "--threads=1 --warmup=1 --steps=3 --mode=eager --dtype=float32 --grad_accum=4"));
  EXPECT_EQ(b.attention, "sdpa PASSIVE");
  EXPECT_EQ(b.source, "--torch_eager=/bin/sh");
  EXPECT_EQ(b.command.front(), "/bin/sh");
  EXPECT_EQ(b.grad_accum, 4);
  // And the criterion reads it: 0.5 s over Test 2's 0.202 s.
  std::vector<TestRun> tests = SyntheticTests();
  for (const Criterion& c : EvaluateCriteria(tests, {}, b)) {
    if (c.id == "speedup_vs_torch_eager") {
      EXPECT_EQ(c.status, CriterionStatus::kPass) << c.measured;
    }
  }
}

TEST(MeasureTorchEager, AFailingPeerIsNotMeasured) {
  const std::string script = TempDir() + "/failing_peer.sh";
  std::ofstream(script) << "echo 'cannot import torch' >&2\nexit 3\n";
  const TestRun compiled = SyntheticTest(TestRole::kCompiled, 8, 0.2);
  std::ostringstream console;
  TorchEagerBaseline b = MeasureTorchEager(Request("/bin/sh", script), Model(), &compiled, "float32", console);
  EXPECT_FALSE(b.measured);
  EXPECT_THAT(b.why_not, HasSubstr("torch is not importable"));
}

}  // namespace
}  // namespace gpt_sft::trainer::validation

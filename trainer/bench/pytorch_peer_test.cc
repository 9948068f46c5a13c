// Tests of the peer's plumbing (JSON parsing, environment, error paths) without torch: stand-in
// scripts run under /bin/sh play the peer. The real script is only run with bad flags, which it
// rejects before importing torch.
#include "trainer/bench/pytorch_peer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace gpt_sft::bench {
namespace {

using ::testing::HasSubstr;

constexpr char kGoodLine[] =
    R"({"config": {"depth": 4, "n_embd": 256, "n_head": 2, "vocab": 8192, "batch": 4, "seq": 2048,)"
    R"( "dtype": "float32"}, "threads": 2, "warmup": 2, "steps": 3, "step_seconds_median": 3.5,)"
    R"( "step_seconds": [3.4, 3.5, 3.9], "step_user_seconds": [6.1, 6.2, 6.3],)"
    R"( "step_system_seconds": [0.5, 0.6, 0.7], "step_minor_faults": [100, 200, 300000000000],)"
    R"( "tokens_per_step": 8192, "tokens_per_second": 2340.5,)"
    R"( "num_params": 7340032, "flops_per_token": 56623104, "gflops_per_second": 132.5,)"
    R"( "peak_rss_bytes": 5900000000, "losses": [9.1, 9.0, 9.0, 8.9, 8.9], "torch_version": "1.13.0a0",)"
    R"( "sgemm_library": "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3",)"
    R"( "blas": ["/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so"],)"
    R"( "glibc_tunables": "glibc.malloc.mmap_max=0"})";

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// Writes a /bin/sh script that stands in for pytorch_peer.py.
std::string WriteScript(const std::string& name, const std::string& body) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream(path) << body;
  return path;
}

PeerOptions ShellPeer(const std::string& script) {
  PeerOptions o;
  o.python = "/bin/sh";
  o.script = script;
  return o;
}

TEST(ParsePeerJsonTest, ReadsEveryFieldOfTheLastJsonLine) {
  absl::StatusOr<PeerResult> r =
      ParsePeerJson(std::string("noise\n{\"not\": \"this one\"}\n") + kGoodLine + "\n", "peer.py");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->depth, 4);
  EXPECT_EQ(r->n_embd, 256);
  EXPECT_EQ(r->n_head, 2);
  EXPECT_EQ(r->vocab, 8192);
  EXPECT_EQ(r->batch, 4);
  EXPECT_EQ(r->seq, 2048);
  EXPECT_EQ(r->threads, 2);
  EXPECT_EQ(r->warmup, 2);
  EXPECT_EQ(r->steps, 3);
  EXPECT_DOUBLE_EQ(r->step_seconds_median, 3.5);
  EXPECT_THAT(r->step_seconds, ::testing::ElementsAre(3.4, 3.5, 3.9));
  EXPECT_THAT(r->step_user_seconds, ::testing::ElementsAre(6.1, 6.2, 6.3));
  EXPECT_THAT(r->step_system_seconds, ::testing::ElementsAre(0.5, 0.6, 0.7));
  EXPECT_THAT(r->step_minor_faults, ::testing::ElementsAre(100, 200, 300000000000LL));
  EXPECT_DOUBLE_EQ(r->tokens_per_second, 2340.5);
  EXPECT_EQ(r->num_params, 7340032);
  EXPECT_EQ(r->flops_per_token, 56623104);
  EXPECT_DOUBLE_EQ(r->gflops_per_second, 132.5);
  EXPECT_EQ(r->peak_rss_bytes, 5900000000LL);
  EXPECT_EQ(r->torch_version, "1.13.0a0");
  EXPECT_EQ(r->sgemm_library, "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3");
  EXPECT_THAT(r->blas, ::testing::ElementsAre(HasSubstr("openblas")));
  EXPECT_EQ(r->glibc_tunables, "glibc.malloc.mmap_max=0");
}

TEST(ParsePeerJsonTest, AnOlderLineIsEagerFloat32) {
  absl::StatusOr<PeerResult> r = ParsePeerJson(kGoodLine, "peer.py");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->mode, "eager");
  EXPECT_EQ(r->dtype, "float32");
  EXPECT_FALSE(r->compile_seconds.has_value());
  EXPECT_EQ(r->kernels, "");
}

TEST(ParsePeerJsonTest, ReadsTheModeTheCompileTimeAndTheKernels) {
  std::string line = kGoodLine;
  line.insert(line.size() - 1,
              R"(, "mode": "compile", "dtype": "bfloat16", "compile_seconds": 21.5,)"
              R"( "attention": "scaled_dot_product_attention", "kernels": {"cpu_capability": "AVX512",)"
              R"( "blas_info": "mkl", "mkldnn_available": true, "cpu_flags": {"avx512_bf16": true, "amx_tile": false},)"
              R"( "matmul": "oneDNN v3.13.3 matmul brg_matmul:avx10_1_512_amx"})");
  absl::StatusOr<PeerResult> r = ParsePeerJson(line, "peer.py");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->mode, "compile");
  EXPECT_EQ(r->dtype, "bfloat16");
  ASSERT_TRUE(r->compile_seconds.has_value());
  EXPECT_DOUBLE_EQ(*r->compile_seconds, 21.5);
  EXPECT_EQ(r->attention, "scaled_dot_product_attention");
  EXPECT_EQ(r->kernels,
            "matmul: oneDNN v3.13.3 matmul brg_matmul:avx10_1_512_amx; CPU capability AVX512 (amx_tile- "
            "avx512_bf16+); BLAS_INFO=mkl");
}

TEST(ParsePeerJsonTest, NoJsonLineNamesTheScript) {
  absl::StatusOr<PeerResult> r = ParsePeerJson("step 0 3.5 s\n", "/x/peer.py");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("/x/peer.py"));
  EXPECT_THAT(r.status().message(), HasSubstr("no JSON line"));
}

TEST(ParsePeerJsonTest, BadJsonIsAnError) {
  absl::StatusOr<PeerResult> r = ParsePeerJson("{\"threads\": 2,\n", "peer.py");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("bad JSON"));
}

TEST(ParsePeerJsonTest, MissingFieldIsNamed) {
  std::string line = kGoodLine;
  line.replace(line.find("\"peak_rss_bytes\""), std::string("\"peak_rss_bytes\"").size(), "\"rss\"");
  absl::StatusOr<PeerResult> r = ParsePeerJson(line, "peer.py");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("peak_rss_bytes"));
}

TEST(ParsePeerJsonTest, WrongTypeIsNamed) {
  std::string line = kGoodLine;
  line.replace(line.find("\"threads\": 2"), std::string("\"threads\": 2").size(), "\"threads\": \"two\"");
  absl::StatusOr<PeerResult> r = ParsePeerJson(line, "peer.py");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("threads"));
}

TEST(ParsePeerJsonTest, EveryPerStepListMustHoldStepsValues) {
  std::string line = kGoodLine;
  line.replace(line.find("[0.5, 0.6, 0.7]"), std::string("[0.5, 0.6, 0.7]").size(), "[0.5, 0.6]");
  absl::StatusOr<PeerResult> r = ParsePeerJson(line, "peer.py");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("step_system_seconds"));
}

TEST(ParsePeerJsonTest, StepCountMustMatchTheTimings) {
  std::string line = kGoodLine;
  line.replace(line.find("\"steps\": 3"), std::string("\"steps\": 3").size(), "\"steps\": 4");
  absl::StatusOr<PeerResult> r = ParsePeerJson(line, "peer.py");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("step_seconds"));
}

TEST(MallocConfigTest, TheTwoConfigurations) {
  std::vector<MallocConfig> configs = PeerMallocConfigs();
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].name, "glibc default");
  EXPECT_EQ(configs[0].glibc_tunables, "");
  EXPECT_EQ(configs[1].name, "no mmap/trim");
  EXPECT_EQ(configs[1].glibc_tunables, "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=34359738368");
}

TEST(RunPytorchPeerTest, ParsesTheOutputAndSetsGlibcTunables) {
  // The stand-in writes the JSON through a shell double-quoted string, so escape its quotes.
  std::string line = kGoodLine;
  std::string escaped;
  for (char c : line) escaped += (c == '"') ? std::string("\\\"") : std::string(1, c);
  const std::string tunables_field = "\\\"glibc.malloc.mmap_max=0\\\"";
  escaped.replace(escaped.find(tunables_field), tunables_field.size(), "\\\"${GLIBC_TUNABLES:-unset}\\\"");
  const std::string script =
      WriteScript("echoing_peer.sh", "echo \"flags: $*\" >&2\necho 'progress line'\necho \"" + escaped + "\"\n");

  setenv("GLIBC_TUNABLES", "inherited.from.caller=1", 1);
  PeerOptions o = ShellPeer(script);
  o.malloc = NoMmapNoTrimMalloc();
  absl::StatusOr<PeerResult> tuned = RunPytorchPeer(o);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ(tuned->glibc_tunables, NoMmapNoTrimMalloc().glibc_tunables);
  EXPECT_EQ(tuned->flops_per_token, 56623104);

  o.malloc = GlibcDefaultMalloc();
  absl::StatusOr<PeerResult> stock = RunPytorchPeer(o);
  ASSERT_TRUE(stock.ok()) << stock.status();
  EXPECT_EQ(stock->glibc_tunables, "unset");  // the caller's tuning does not leak into "default"
  unsetenv("GLIBC_TUNABLES");
}

TEST(RunPytorchPeerTest, PassesTheConfigAsFlags) {
  const std::string script = WriteScript("flags_peer.sh", "echo \"$*\" >&2\nexit 1\n");
  PeerOptions o = ShellPeer(script);
  o.depth = 6;
  o.seq = 512;
  o.steps = 7;
  absl::StatusOr<PeerResult> r = RunPytorchPeer(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("--depth=6 --n_embd=256 --n_head=2 --vocab=8192 --batch=4 "
                                              "--seq=512 --threads=2 --warmup=2 --steps=7"));
}

TEST(RunPytorchPeerTest, PassesTheModeTheDtypeAndTheBatchFile) {
  const std::string script = WriteScript("mode_peer.sh", "echo \"$*\" >&2\nexit 1\n");
  PeerOptions o = ShellPeer(script);
  o.mode = "compile";
  o.dtype = "bfloat16";
  o.batch_file = "/tmp/batch.bin";
  absl::StatusOr<PeerResult> r = RunPytorchPeer(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("--steps=3 --mode=compile --dtype=bfloat16 --batch_file=/tmp/batch.bin"));
}

TEST(RunPytorchPeerTest, SetsTheOpenMpWaitPolicyWhenAsked) {
  const std::string script = WriteScript("omp_peer.sh", "echo \"policy=${OMP_WAIT_POLICY:-unset}\" >&2\nexit 1\n");
  PeerOptions o = ShellPeer(script);
  unsetenv("OMP_WAIT_POLICY");
  EXPECT_THAT(RunPytorchPeer(o).status().message(), HasSubstr("policy=unset"));
  o.omp_wait_policy = "PASSIVE";
  EXPECT_THAT(RunPytorchPeer(o).status().message(), HasSubstr("policy=PASSIVE"));
}

TEST(RunPytorchPeerTest, AModeTheTorchLacksIsAFailedPrecondition) {
  const std::string script =
      WriteScript("old_torch_peer.sh", "echo '--mode compile needs torch.compile (torch 2)' >&2\nexit 5\n");
  absl::StatusOr<PeerResult> r = RunPytorchPeer(ShellPeer(script));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("not available with /bin/sh"));
  EXPECT_THAT(r.status().message(), HasSubstr("needs torch.compile"));
}

TEST(RunPytorchPeerTest, ScalarInductorCodeIsRefused) {
  const std::string script = WriteScript("scalar_peer.sh", "echo 'inductor found no usable vector ISA' >&2\nexit 6\n");
  absl::StatusOr<PeerResult> r = RunPytorchPeer(ShellPeer(script));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("torch.compile would generate scalar code here"));
  EXPECT_THAT(r.status().message(), HasSubstr("no usable vector ISA"));
}

TEST(RunPytorchPeerTest, NonZeroExitGivesTheStderrTail) {
  const std::string script = WriteScript("failing_peer.sh", "echo 'Traceback: boom' >&2\nexit 1\n");
  absl::StatusOr<PeerResult> r = RunPytorchPeer(ShellPeer(script));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr(script));
  EXPECT_THAT(r.status().message(), HasSubstr("exited with status 1"));
  EXPECT_THAT(r.status().message(), HasSubstr("Traceback: boom"));
}

TEST(RunPytorchPeerTest, NoTorchIsAFailedPrecondition) {
  const std::string script = WriteScript("no_torch_peer.sh", "echo 'No module named torch' >&2\nexit 3\n");
  absl::StatusOr<PeerResult> r = RunPytorchPeer(ShellPeer(script));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("torch is not importable"));
  EXPECT_THAT(r.status().message(), HasSubstr(script));
}

TEST(RunPytorchPeerTest, ReferenceBlasIsAFailedPrecondition) {
  const std::string script = WriteScript("refblas_peer.sh", "echo 'no OpenBLAS' >&2\nexit 4\n");
  absl::StatusOr<PeerResult> r = RunPytorchPeer(ShellPeer(script));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("reference BLAS"));
}

TEST(RunPytorchPeerTest, KilledBySignalIsReported) {
  const std::string script = WriteScript("killed_peer.sh", "echo 'about to die' >&2\nkill -9 $$\n");
  absl::StatusOr<PeerResult> r = RunPytorchPeer(ShellPeer(script));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("killed by signal 9"));
  EXPECT_THAT(r.status().message(), HasSubstr("about to die"));
}

TEST(RunPytorchPeerTest, GarbageOutputIsAnError) {
  const std::string script = WriteScript("garbage_peer.sh", "echo 'hello'\n");
  absl::StatusOr<PeerResult> r = RunPytorchPeer(ShellPeer(script));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("no JSON line"));
}

TEST(RunPytorchPeerTest, MissingScriptIsNamed) {
  const std::string script = TempDir() + "/no_such_dir/pytorch_peer.py";
  absl::StatusOr<PeerResult> r = RunPytorchPeer(ShellPeer(script));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr(script));
}

TEST(RunPytorchPeerTest, MissingPythonIsNamed) {
  PeerOptions o = ShellPeer(WriteScript("unused_peer.sh", "exit 0\n"));
  o.python = "/nonexistent/bin/python3";
  absl::StatusOr<PeerResult> r = RunPytorchPeer(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/bin/python3"));
}

TEST(WritePeerBatchTest, TheFourArraysInOrderAsInt32) {
  const PeerBatch b{1, 2, {10, 11}, {12, -1}, {0, 0}, {0, 1}};
  const std::string path = TempDir() + "/batch.bin";
  ASSERT_TRUE(WritePeerBatch(path, b).ok());
  std::ifstream in(path, std::ios::binary);
  std::vector<int32_t> read(9, 7);
  in.read(reinterpret_cast<char*>(read.data()), 9 * sizeof(int32_t));
  EXPECT_EQ(in.gcount(), 8 * static_cast<std::streamsize>(sizeof(int32_t)));  // 8 values, no more
  EXPECT_THAT(std::vector<int32_t>(read.begin(), read.begin() + 8), ::testing::ElementsAre(10, 11, 12, -1, 0, 0, 0, 1));
}

TEST(WritePeerBatchTest, AWrongSizeIsNamed) {
  const PeerBatch b{1, 2, {10, 11}, {12}, {0, 0}, {0, 1}};
  absl::Status s = WritePeerBatch(TempDir() + "/bad_batch.bin", b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("targets holds 1 values"));
}

TEST(FindPeerScriptTest, FindsTheScriptInTheRunfiles) {
  absl::StatusOr<std::string> path = FindPeerScript();
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_THAT(*path, HasSubstr("trainer/bench/pytorch_peer.py"));
}

// The real script rejects bad flags before importing torch, so this runs without torch.
TEST(RealScriptTest, BadFlagIsReportedWithItsName) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  PeerOptions o;
  o.steps = 0;
  absl::StatusOr<PeerResult> r = RunPytorchPeer(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("pytorch_peer.py"));
  EXPECT_THAT(r.status().message(), HasSubstr("--steps must be >= 1"));
}

// An untimed compile step is required: the script says so before it imports torch.
TEST(RealScriptTest, CompileWithoutWarmUpIsRefused) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  PeerOptions o;
  o.mode = "compile";
  o.warmup = 0;
  absl::StatusOr<PeerResult> r = RunPytorchPeer(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("--mode compile needs --warmup >= 1"));
}

}  // namespace
}  // namespace gpt_sft::bench

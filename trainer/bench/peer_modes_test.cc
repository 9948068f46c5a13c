// The peer's modes with a /bin/sh stand-in playing pytorch_peer.py (no torch): each mode and
// malloc configuration is one process run with its flags; a mode the torch lacks is a row that
// says so and no figure; a fallback interpreter is announced.
#include "trainer/bench/peer_modes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace gpt_sft::bench {
namespace {

using ::testing::HasSubstr;

TEST(ParsePeerModesTest, AllIsTheFourInOrder) {
  absl::StatusOr<std::vector<PeerMode>> m = ParsePeerModes("all");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, (std::vector<PeerMode>{
                    {"eager", "float32"}, {"compile", "float32"}, {"eager", "bfloat16"}, {"compile", "bfloat16"}}));
}

TEST(ParsePeerModesTest, AListAndABadEntry) {
  absl::StatusOr<std::vector<PeerMode>> m = ParsePeerModes("compile-bf16,eager-fp32");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, (std::vector<PeerMode>{{"compile", "bfloat16"}, {"eager", "float32"}}));
  absl::StatusOr<std::vector<PeerMode>> bad = ParsePeerModes("eager-fp32,jit-fp16");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'jit-fp16'"));
  EXPECT_FALSE(ParsePeerModes("").ok());
}

TEST(ParsePeerMallocTest, Names) {
  EXPECT_EQ(ParsePeerMalloc("both")->size(), 2u);
  EXPECT_EQ(ParsePeerMalloc("no-mmap-trim")->at(0).name, "no mmap/trim");
  EXPECT_EQ(ParsePeerMalloc("glibc-default")->at(0).name, "glibc default");
  EXPECT_THAT(ParsePeerMalloc("tcmalloc").status().message(), HasSubstr("'tcmalloc'"));
}

// Prints a result line for eager modes (its mode, dtype and step time from the flags) and
// exits 5, as torch 1.13 does, for compile.
constexpr char kStandIn[] = R"(
mode=eager; dtype=float32
for a in "$@"; do case "$a" in --mode=*) mode=${a#--mode=};; --dtype=*) dtype=${a#--dtype=};; esac; done
[ "$mode" = compile ] && { echo 'pytorch_peer.py: --mode compile needs torch.compile (torch 2)' >&2; exit 5; }
secs=2.0; [ "$dtype" = bfloat16 ] && secs=1.0
echo "{\"config\": {\"depth\": 4, \"n_embd\": 256, \"n_head\": 2, \"vocab\": 8192, \"batch\": 4, \"seq\": 2048}, \
\"mode\": \"$mode\", \"dtype\": \"$dtype\", \"threads\": 2, \"warmup\": 1, \"steps\": 1, \"step_seconds_median\": $secs, \
\"step_seconds\": [$secs], \"step_user_seconds\": [1], \"step_system_seconds\": [0], \"step_minor_faults\": [0], \
\"tokens_per_second\": 1, \"num_params\": 1, \"flops_per_token\": 1, \"gflops_per_second\": 1, \
\"peak_rss_bytes\": 1000000000, \"torch_version\": \"1.13.0a0\", \"sgemm_library\": \"x\", \"blas\": [], \
\"glibc_tunables\": \"${GLIBC_TUNABLES:-}\"}"
)";

TEST(RunPeerModesTest, OneRunPerModeAndMallocWithTheReasonWhenAModeCannotRun) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string script = std::string(tmp != nullptr ? tmp : "/tmp") + "/stand_in_peer.sh";
  std::ofstream(script) << kStandIn;
  PeerOptions base;
  base.script = script;
  base.warmup = 1;
  base.steps = 1;
  const PeerInterpreter interpreter{"/bin/sh", "FALLBACK: Debian's torch",
                                    "the pinned torch 2.15.0 could not be installed: offline"};
  std::ostringstream out;
  PeerModesResult r = RunPeerModes(base, interpreter, *ParsePeerModes("all"), PeerMallocConfigs(), 56623104, out);

  EXPECT_THAT(out.str(), HasSubstr("PEER FALLBACK: the pinned torch 2.15.0 could not be installed: offline"));
  EXPECT_THAT(out.str(), HasSubstr("torch compile float32, glibc default: not run"));
  EXPECT_THAT(out.str(), HasSubstr("needs torch.compile"));
  EXPECT_THAT(out.str(), HasSubstr("torch 1.13.0a0 eager bf16, no mmap/trim"));
  EXPECT_EQ(r.json["fallback_reason"], "the pinned torch 2.15.0 could not be installed: offline");
  ASSERT_EQ(r.json["runs"].size(), 8u);
  int not_run = 0;
  for (const auto& run : r.json["runs"]) not_run += run.contains("not_run") ? 1 : 0;
  EXPECT_EQ(not_run, 4);
  EXPECT_EQ(r.json["runs"][0]["mode"], "eager");
  EXPECT_EQ(r.json["runs"][0]["malloc"], "glibc default");
  EXPECT_EQ(r.json["runs"][0]["peak_rss_bytes"], 1000000000);
  ASSERT_EQ(r.seconds.size(), 4u);  // eager fp32 and bf16, under each malloc configuration
  EXPECT_EQ(r.seconds[0].mode, "eager");
  EXPECT_EQ(r.seconds[0].dtype, "float32");
  EXPECT_DOUBLE_EQ(r.seconds[0].step_seconds, 2.0);
  EXPECT_EQ(r.seconds[3].dtype, "bfloat16");
  EXPECT_DOUBLE_EQ(r.seconds[3].step_seconds, 1.0);
}

}  // namespace
}  // namespace gpt_sft::bench

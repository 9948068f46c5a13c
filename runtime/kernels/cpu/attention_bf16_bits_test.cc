// The bf16 attention's (AttentionBf16Inputs, AttentionGradBf16Inputs) exact bits, pinned per
// tile kernel: speed work on it must not move a single output bit. The expected hashes were
// recorded from the code as it stood before that work (main at 85d34f8), one set per kernel
// (each orders its f32 sums its own way). A run tests the kernel GPT_SFT_CPU_BF16_TILE asks
// for (BUILD has one target per kernel) and skips when this CPU lacks it, or lacks AVX2 (the
// portable exp gives other bits; AVX2 and AVX-512 give the same ones).
//
// A mismatch prints the hashes this build got: if a change is meant to move bits, say so in
// its commit and record the new ones here.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/cpu_isa.h"
#include "model/round_to_bf16.h"
#include "gtest/gtest.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/tile_gemm_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

// Inputs from a fixed integer generator (splitmix64), not <random>'s distributions, whose
// results the C++ standard leaves to the library: bf16 values in [-scale, scale).
std::vector<float> Bf16Values(int64_t n, uint64_t seed, float scale) {
  std::vector<float> x(n);
  uint64_t state = seed;
  for (float& v : x) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    v = compiler::RoundToBf16(scale * (float(z >> 40) / float(1 << 23) - 1.0f));
  }
  return x;
}

uint64_t Fnv1a(const std::vector<float>& x) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(x.data());
  for (size_t i = 0; i < x.size() * sizeof(float); ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}

struct Case {
  const char* name;
  AttentionShape s;
  bool segmented;
};

// Forward and backward of one case; the hashes of out, lse, dq, dk, dv as one string.
// `bf16`: the *Bf16Inputs kernels, else the float ones (on the same bf16-valued inputs).
std::string RunAndHash(const Case& c, AttentionGradSchedule schedule, bool bf16 = true) {
  const AttentionShape s = c.s;
  const int64_t nq = s.B * s.T * s.H * s.D, nkv = s.B * s.T * s.Hkv * s.D;
  const std::vector<float> q = Bf16Values(nq, 1, 2.f), k = Bf16Values(nkv, 2, 2.f), v = Bf16Values(nkv, 3, 1.f),
                           dout = Bf16Values(nq, 4, 1.f);
  std::vector<int32_t> seg(s.B * s.T);  // segments of 37 tokens in row 0, alternating ids in row 1
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t t = 0; t < s.T; ++t) seg[b * s.T + t] = int32_t(b % 2 == 0 ? t / 37 : t % 2);
  const int32_t* segp = c.segmented ? seg.data() : nullptr;
  std::vector<float> out(nq), lse(s.B * s.H * s.T), dq(nq), dk(nkv), dv(nkv);
  if (bf16) {
    AttentionBf16Inputs(q.data(), k.data(), v.data(), segp, s, out.data(), lse.data());
    AttentionGradBf16Inputs(q.data(), k.data(), v.data(), segp, s, out.data(), lse.data(), dout.data(), dq.data(),
                            dk.data(), dv.data(), schedule);
  } else {
    Attention(q.data(), k.data(), v.data(), segp, s, out.data(), lse.data());
    AttentionGrad(q.data(), k.data(), v.data(), segp, s, out.data(), lse.data(), dout.data(), dq.data(), dk.data(),
                  dv.data(), schedule);
  }
  std::string hashes;
  for (const std::vector<float>* x : {&out, &lse, &dq, &dk, &dv}) {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx ", static_cast<unsigned long long>(Fnv1a(*x)));
    hashes += buf;
  }
  hashes.pop_back();
  return hashes;
}

// Partial last blocks (T % 64 != 0), GQA, D = 64 and 128, plain causal and segmented.
constexpr Case kCases[] = {
    {"causal_gqa_d64", {2, 200, 4, 2, 64}, false},
    {"segmented_mqa_d128", {2, 150, 2, 1, 128}, true},
    {"causal_whole_blocks_d128", {1, 256, 2, 2, 128}, false},
    {"causal_many_blocks_mqa_d64", {1, 600, 2, 1, 64}, false},
};

struct Expected {
  Bf16TileKernel kernel;
  const char* hashes[4];  // per case of kCases
};

const Expected kExpected[] = {
    {Bf16TileKernel::kAmx,
     {"2b2992d570e677fa 401094fe26530fee 5c05c7dbe5017d5f 8be0654caad7d1a1 0e19903203f1df16",
      "20cbe8e259fddfd4 5ae3e25854099665 56870255105f1ff0 0180d3eb517c6c61 b2c9531fc0be1d96",
      "d72f2a30aa99273c bf27d38b431ef56f 0a2b4cd6706d7491 716e0df7dbf26eb3 21400645418cd85b",
      "4b371a6d7554d65e 55116d43783ec4e6 8d6e2ec905fd943f b1a7184c0ba248f3 4182ee007712a2e8"}},
    {Bf16TileKernel::kDpBf16,
     {"c9a61920ad4f8fb0 3ba5e67677623c10 58ce7ef50cd4871d dfd44e9d8fc05acd 7c2d723b9748d955",
      "6264feea0bb8563c dded7a069e639bb2 692978ba6111857f 592186c3f10548da d1173d6dafc53770",
      "2a4967e257e05659 ea080d326873b368 3cbc782a2f3ccc82 8a556c4eae4d56dd 4bef235ebc83ce32",
      "05e19054fc9162d7 a566efc7b0cc53db 641258370e9af99f 2837c4dc00ab749f 8e389e52585e2d56"}},
    {Bf16TileKernel::kFp32,
     {"097bba1c1bdd131f 89ed396907136c59 b4b3efe9217511fd b4b10b1e7a735708 51e9d509078909af",
      "7fcd4dc7c5fab06a 680467246298b6e4 d4416fb426b726fe 2c08e518f6e5c0b7 e0bb09ac289ac695",
      "3429be3380ba5ebe 85784c5391267db9 fc53a555e1011102 b14aaa34e1238177 21f39baaf4cb5202",
      "13487fbfa83fb207 c293281839063794 edb36a8531958e50 369ce9dd511a7fed bd1a778340df2d46"}},
};

// The kernel GPT_SFT_CPU_BF16_TILE asks for (the CPU's choice when unset).
Bf16TileKernel RequestedKernel() {
  const char* env = std::getenv("GPT_SFT_CPU_BF16_TILE");
  if (env == nullptr) return ActiveBf16TileKernel();
  if (std::strcmp(env, "amx") == 0) return Bf16TileKernel::kAmx;
  if (std::strcmp(env, "dpbf16") == 0) return Bf16TileKernel::kDpBf16;
  return Bf16TileKernel::kFp32;
}

TEST(AttentionBf16Bits, OutputsKeepTheirRecordedBits) {
  const Bf16TileKernel kernel = RequestedKernel();
  if (!Bf16TileKernelSupported(kernel)) GTEST_SKIP() << "this CPU lacks the requested bf16 tile kernel";
  if (!CpuIsaAtLeast(CpuIsa::kAvx2)) GTEST_SKIP() << "no AVX2: the portable exp's bits were not recorded";
  ASSERT_EQ(ActiveBf16TileKernel(), kernel);
  const Expected* want = nullptr;
  for (const Expected& e : kExpected)
    if (e.kernel == kernel) want = &e;
  ASSERT_NE(want, nullptr);
  for (size_t i = 0; i < std::size(kCases); ++i) {
    const std::string fused = RunAndHash(kCases[i], AttentionGradSchedule::kFused);
    EXPECT_EQ(fused, want->hashes[i]) << kCases[i].name << " on " << Bf16TileKernelName();
    EXPECT_EQ(RunAndHash(kCases[i], AttentionGradSchedule::kTwoPass), fused) << kCases[i].name << ", two-pass";
  }
}

// The float attention shares the schedule and row code: its bits are pinned too (the same on
// every tile kernel; recorded from the same commit).
const char* const kFloatHashes[] = {
    "5ae26002adea8605 89ed396907136c59 b88d733028c60d42 f331429a85b7b646 5a98997c5daf6b7f",
    "7246c99a341cd12a fc2d447459e40705 693435afc3ea01ed 2d90a9828caaca33 c5027a08986d8969",
    "09c2823f24911037 574f16caa90cc4e2 8b84a5dcca05a8d7 b7402325a0f30949 1d20f52e89f662b4",
    "924ab72c33108d67 c293281839063794 36972c420cc901c0 9cbd61e5439d05f6 7d932a6d17f24d05",
};

TEST(AttentionBf16Bits, FloatOutputsKeepTheirRecordedBits) {
  if (!CpuIsaAtLeast(CpuIsa::kAvx2)) GTEST_SKIP() << "no AVX2: the portable exp's bits were not recorded";
  for (size_t i = 0; i < std::size(kCases); ++i)
    EXPECT_EQ(RunAndHash(kCases[i], AttentionGradSchedule::kFused, false), kFloatHashes[i]) << kCases[i].name;
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels

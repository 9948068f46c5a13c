#include "runtime/params/param_store.h"

#include <cmath>

#include "gtest/gtest.h"

namespace gpt_sft::runtime {
namespace {

double Std(const Param& p) {
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < p.numel(); ++i) sum += p.data()[i], sq += double{p.data()[i]} * p.data()[i];
  const double mean = sum / p.numel();
  return std::sqrt(sq / p.numel() - mean * mean);
}

TEST(ParamStore, D20HasNanochatsNamesShapesAndCount) {
  ParamStore store = *ParamStore::Create(*compiler::ModelConfig::FromDepth(20, 65536));
  const auto& ps = store.params();
  ASSERT_EQ(ps.size(), 122u);
  EXPECT_EQ(ps[0].name, "transformer.wte.weight");
  EXPECT_EQ(ps[0].shape, (std::vector<int64_t>{65536, 1280}));
  EXPECT_EQ(ps[1].name, "transformer.h.0.attn.c_q.weight");
  EXPECT_EQ(ps[2].name, "transformer.h.0.attn.c_k.weight");
  EXPECT_EQ(ps[3].name, "transformer.h.0.attn.c_v.weight");
  EXPECT_EQ(ps[4].name, "transformer.h.0.attn.c_proj.weight");
  EXPECT_EQ(ps[5].name, "transformer.h.0.mlp.c_fc.weight");
  EXPECT_EQ(ps[5].shape, (std::vector<int64_t>{5120, 1280}));
  EXPECT_EQ(ps[6].name, "transformer.h.0.mlp.c_proj.weight");
  EXPECT_EQ(ps[6].shape, (std::vector<int64_t>{1280, 5120}));
  EXPECT_EQ(ps[120].name, "transformer.h.19.mlp.c_proj.weight");
  EXPECT_EQ(ps[121].name, "lm_head.weight");
  EXPECT_EQ(store.NumParams(), 560'988'160);
  EXPECT_EQ(store.NumParams(), store.config().NumParams());
  for (const Param& p : ps) EXPECT_EQ(reinterpret_cast<uintptr_t>(p.data()) % 64, 0u) << p.name;
}

TEST(ParamStore, GroupsFollowNanochat) {
  ParamStore store = *ParamStore::Create(*compiler::ModelConfig::FromDepth(2, 512, 64));
  for (const Param& p : store.params()) {
    const ParamGroup want = p.name == "transformer.wte.weight" ? ParamGroup::kEmbedding
                            : p.name == "lm_head.weight"       ? ParamGroup::kUnembedding
                                                               : ParamGroup::kMatrix;
    EXPECT_EQ(p.group, want) << p.name;
  }
}

TEST(ParamStore, InitLikeNanochat) {
  ParamStore store = *ParamStore::Create(*compiler::ModelConfig::FromDepth(2, 512, 64));
  store.InitNanochat(42);
  EXPECT_NEAR(Std(*store.Find("transformer.wte.weight")), 1.0, 0.02);
  // c_q: fan_in = fan_out = 128 -> 1/sqrt(128); c_fc: fan_out 512 > fan_in 128 -> still 1/sqrt(128).
  EXPECT_NEAR(Std(*store.Find("transformer.h.0.attn.c_q.weight")), 1 / std::sqrt(128.0), 0.002);
  EXPECT_NEAR(Std(*store.Find("transformer.h.1.mlp.c_fc.weight")), 1 / std::sqrt(128.0), 0.002);
  for (const char* zero : {"lm_head.weight", "transformer.h.0.attn.c_proj.weight", "transformer.h.1.mlp.c_proj.weight"}) {
    EXPECT_EQ(Std(*store.Find(zero)), 0.0) << zero;
    EXPECT_EQ(store.Find(zero)->data()[0], 0.0f) << zero;
  }
}

TEST(ParamStore, MatricesWithFewerOutputsThanInputsScaleDown) {
  // With n_kv_head < n_head, c_k is (kv = 128, C = 256): fan_out < fan_in, so
  // std = (1/sqrt(fan_in)) * sqrt(fan_out/fan_in) = (1/16) * sqrt(1/2).
  ParamStore store = *ParamStore::Create(*compiler::ModelConfig::FromDepth(2, 512, 64, 256, 2, 1));
  store.InitNanochat(1);
  EXPECT_NEAR(Std(*store.Find("transformer.h.0.attn.c_k.weight")), (1 / 16.0) * std::sqrt(128.0 / 256), 0.002);
}

TEST(ParamStore, InitIsDeterministicAndSeeded) {
  auto config = *compiler::ModelConfig::FromDepth(2, 512, 64);
  ParamStore a = *ParamStore::Create(config), b = *ParamStore::Create(config), c = *ParamStore::Create(config);
  a.InitNanochat(7);
  b.InitNanochat(7);
  c.InitNanochat(8);
  EXPECT_EQ(a.Checksum(), b.Checksum());
  EXPECT_NE(a.Checksum(), c.Checksum());
  EXPECT_EQ(a.Find("transformer.wte.weight")->data()[3], b.Find("transformer.wte.weight")->data()[3]);
  EXPECT_EQ(a.Find("nope"), nullptr);
}

}  // namespace
}  // namespace gpt_sft::runtime

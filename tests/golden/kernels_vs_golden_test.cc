// Crosses rooms on purpose: nanochat's forward pass composed by hand from the CPU kernels
// (float32), at the golden files' initial weights, must give the PyTorch reference's loss.
// The interpreter will run the same kernels from gpt IR; this pins the kernels' meaning
// (rotary convention, QK-norm order, segment masking, softcap, ignore -1) first.
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/embedding.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/rotary.h"
#include "runtime/params/param_store.h"
#include "tests/golden/golden_file.h"

namespace gpt_sft::tests {
namespace {

namespace k = runtime::kernels;
using Vec = std::vector<float>;

double ForwardLoss(const runtime::ParamStore& store, const GoldenFile& g) {
  const compiler::ModelConfig& c = store.config();
  const int64_t B = 2, T = 64, BT = B * T, C = c.n_embd, H = c.n_head, Hkv = c.n_kv_head, D = c.head_dim(),
                V = c.vocab_size, KV = Hkv * D;
  const auto& inputs = g.tensors.at("inputs").i32;
  const auto& targets = g.tensors.at("targets").i32;
  const auto& seg = g.tensors.at("segment_ids").i32;
  const auto& pos = g.tensors.at("positions").i32;
  auto W = [&](const std::string& name) { return store.Find(name)->data(); };

  Vec x(BT * C), h(BT * C), q(BT * C), kk(BT * KV), v(BT * KV), qr(BT * C), kr(BT * KV), y(BT * C),
      lse(B * H * T), proj(BT * C), fc(BT * 4 * C), act(BT * 4 * C), logits(BT * V), capped(BT * V);
  k::Embedding(W("transformer.wte.weight"), inputs.data(), h.data(), BT, C);
  k::RmsNorm(h.data(), x.data(), BT, C);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    k::RmsNorm(x.data(), h.data(), BT, C);
    k::Matmul(h.data(), W(p + "attn.c_q.weight"), q.data(), BT, C, C);
    k::Matmul(h.data(), W(p + "attn.c_k.weight"), kk.data(), BT, KV, C);
    k::Matmul(h.data(), W(p + "attn.c_v.weight"), v.data(), BT, KV, C);
    k::Rotary(q.data(), pos.data(), qr.data(), {B, T, H, D});
    k::Rotary(kk.data(), pos.data(), kr.data(), {B, T, Hkv, D});
    k::RmsNorm(qr.data(), q.data(), BT * H, D);  // QK-norm after rotary
    k::RmsNorm(kr.data(), kk.data(), BT * Hkv, D);
    k::Attention(q.data(), kk.data(), v.data(), seg.data(), {B, T, H, Hkv, D}, y.data(), lse.data());
    k::Matmul(y.data(), W(p + "attn.c_proj.weight"), proj.data(), BT, C, C);
    for (int64_t i = 0; i < BT * C; ++i) x[i] += proj[i];
    k::RmsNorm(x.data(), h.data(), BT, C);
    k::Matmul(h.data(), W(p + "mlp.c_fc.weight"), fc.data(), BT, 4 * C, C);
    k::ReluSquare(fc.data(), act.data(), BT * 4 * C);
    k::Matmul(act.data(), W(p + "mlp.c_proj.weight"), proj.data(), BT, C, 4 * C);
    for (int64_t i = 0; i < BT * C; ++i) x[i] += proj[i];
  }
  k::RmsNorm(x.data(), h.data(), BT, C);
  k::Matmul(h.data(), W("lm_head.weight"), logits.data(), BT, V, C);
  k::Softcap(logits.data(), capped.data(), BT * V, 15.0f);
  return k::CrossEntropy(capped.data(), targets.data(), BT, V).loss;
}

class KernelsVsGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelsVsGolden, ForwardLossAtTheInitialWeights) {
  absl::StatusOr<GoldenFile> g = LoadGoldenFile("tests/golden/" + GetParam() + ".gold");
  ASSERT_TRUE(g.ok()) << g.status();
  const nlohmann::json header = nlohmann::json::parse(g->header_json);
  runtime::ParamStore store = *runtime::ParamStore::Create(*compiler::ModelConfig::FromJson(g->config_json));
  store.InitNanochat(header.at("init_seed").get<uint64_t>(), header.at("zero_output_projections").get<bool>());
  const double want = g->tensors.at("loss").f32[0];
  const double got = ForwardLoss(store, *g);
  std::cout << GetParam() << ": kernels " << got << " vs reference " << want << "\n";
  EXPECT_LT(std::abs(got - want) / want, 1e-5) << "kernels " << got << " vs reference " << want;
}

INSTANTIATE_TEST_SUITE_P(Cases, KernelsVsGolden, ::testing::Values("padded", "packed"));

}  // namespace
}  // namespace gpt_sft::tests

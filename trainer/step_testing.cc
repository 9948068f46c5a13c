// Implements the step tests' helpers.
#include "trainer/step_testing.h"

#include "trainer/step_loop.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace gpt_sft::trainer::testing {

runtime::ParamStore RandomParams(const compiler::ModelConfig& model) {
  runtime::ParamStore params = *runtime::ParamStore::Create(model);
  params.InitNanochat(11, /*zero_output_projections=*/false);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 0.02f);
  for (runtime::Param& p : params.params()) {
    if (p.name == "lm_head.weight") {
      for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] = normal(rng);
    }
  }
  return params;
}

data::Batch TwoDocumentBatch(uint32_t seed, int B, int T, int vocab) { return SyntheticBatch(seed, B, T, vocab); }

double MaxRelDiff(const runtime::ParamStore& actual, const runtime::ParamStore& reference) {
  double worst = 0;
  for (size_t i = 0; i < actual.params().size(); ++i) {
    const runtime::Param& pa = actual.params()[i];
    const runtime::Param& pb = reference.params()[i];
    double diff = 0, scale = 1e-30;
    for (int64_t j = 0; j < pa.numel(); ++j) {
      diff = std::max(diff, double(std::abs(pa.data()[j] - pb.data()[j])));
      scale = std::max(scale, double(std::abs(pb.data()[j])));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

}  // namespace gpt_sft::trainer::testing

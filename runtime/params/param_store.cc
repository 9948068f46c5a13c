// Implements ParamStore.
#include "runtime/params/param_store.h"

#include <cmath>
#include <cstring>

#include "base/split_mix64.h"

namespace gpt_sft::runtime {
namespace {

// Uniform in (0, 1] from the top 53 bits of a word: never 0, so log() below is finite.
double UniformNonZero(base::SplitMix64& rng) {
  return (static_cast<double>(rng.Next() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

// Box-Muller over SplitMix64 (base/split_mix64.h): the same draws on every machine.
void FillNormal(float* out, int64_t n, double std, uint64_t seed) {
  base::SplitMix64 rng(seed);
  for (int64_t i = 0; i < n; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(UniformNonZero(rng))), theta = 2.0 * M_PI * UniformNonZero(rng);
    out[i] = static_cast<float>(std * r * std::cos(theta));
    if (i + 1 < n) out[i + 1] = static_cast<float>(std * r * std::sin(theta));
  }
}

}  // namespace

int64_t Param::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<ParamStore> ParamStore::Create(const compiler::ModelConfig& config) {
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  ParamStore store(config);
  for (compiler::ParamSpec& spec : compiler::ParamLayout(config)) {
    Param p;
    p.name = std::move(spec.name);
    p.shape = std::move(spec.shape);
    p.group = spec.group;
    const size_t bytes = ((p.numel() * sizeof(float) + 63) / 64) * 64;
    p.data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    std::memset(p.data_.get(), 0, bytes);
    store.params_.push_back(std::move(p));
  }
  return store;
}

void ParamStore::InitNanochat(uint64_t seed, bool zero_output_projections) {
  for (size_t k = 0; k < params_.size(); ++k) {
    Param& p = params_[k];
    const bool zero = zero_output_projections &&
                      (p.name == "lm_head.weight" || p.name.find("c_proj.weight") != std::string::npos);
    if (zero) {
      std::memset(p.data(), 0, p.numel() * sizeof(float));
      continue;
    }
    double std = 1.0;  // the embedding
    if (p.group != ParamGroup::kEmbedding) {
      const double fan_out = static_cast<double>(p.shape[0]), fan_in = static_cast<double>(p.shape[1]);
      std = (1.0 / std::sqrt(fan_in)) * std::min(1.0, std::sqrt(fan_out / fan_in));
    }
    FillNormal(p.data(), p.numel(), std, seed * 0x100000001b3ULL + k);
  }
}

const Param* ParamStore::Find(const std::string& name) const {
  for (const Param& p : params_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Param* ParamStore::Find(const std::string& name) {
  return const_cast<Param*>(static_cast<const ParamStore*>(this)->Find(name));
}

std::vector<OptimizerGroup> ParamStore::OptimizerGroups() const {
  using Opt = OptimizerGroup::Optimizer;
  std::vector<OptimizerGroup> groups = {{Opt::kAdamW, ParamGroup::kUnembedding, {}},
                                        {Opt::kAdamW, ParamGroup::kEmbedding, {}},
                                        {Opt::kMuon, ParamGroup::kMatrix, {}}};
  for (size_t k = 0; k < params_.size(); ++k) {
    for (OptimizerGroup& g : groups) {
      if (g.group == params_[k].group) g.params.push_back(k);
    }
  }
  return groups;
}

int64_t ParamStore::NumParams() const {
  int64_t n = 0;
  for (const Param& p : params_) n += p.numel();
  return n;
}

uint64_t ParamStore::Checksum() const {
  // FNV-1a's offset basis and prime, fed 8 bytes at a time (a byte at a time cost 4 s on d20's
  // 2.2 GB); the xor-shift after each multiply carries high bits down, and every step is a
  // bijection of h, so any single changed word changes the result.
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const Param& p : params_) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(p.data());
    const size_t n = static_cast<size_t>(p.numel()) * sizeof(float);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, bytes + i, 8);
      h = (h ^ w) * kPrime;
      h ^= h >> 32;
    }
    for (; i < n; ++i) h = (h ^ bytes[i]) * kPrime;
  }
  return h;
}

}  // namespace gpt_sft::runtime

// ParamStore: the one owner of a model's weights, under nanochat's state_dict names and
// shapes, in its order. Every path (interpreter, compiled step, checkpoints) reads and
// writes these buffers; none keeps a copy of its own.
#ifndef GPT_SFT_RUNTIME_PARAMS_PARAM_STORE_H_
#define GPT_SFT_RUNTIME_PARAMS_PARAM_STORE_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model_config.h"
#include "model/param_layout.h"

namespace gpt_sft::runtime {

/// Which optimizer and learning rate a parameter gets (NANOCHAT.md 4.1); the layout of
/// names, shapes and groups is model/param_layout.h's, shared with the step builder.
using ParamGroup = compiler::ParamGroup;

struct Param {
  std::string name;             // e.g. "transformer.h.3.attn.c_q.weight"
  std::vector<int64_t> shape;   // (out_features, in_features) for Linear weights
  ParamGroup group;
  int64_t numel() const;
  float* data() const { return data_.get(); }

 private:
  friend class ParamStore;
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;  // 64-byte aligned, float32
};

/// One optimizer group of nanochat's setup_optimizers (NANOCHAT.md 4.1).
struct OptimizerGroup {
  enum class Optimizer { kAdamW, kMuon };
  Optimizer optimizer;
  ParamGroup group;            // which learning rate: unembedding, embedding or matrix
  std::vector<size_t> params;  // indices into ParamStore::params(), in store order
};

class ParamStore {
 public:
  /// Allocates every parameter of `config`, zero-filled. Order: wte, then per layer
  /// c_q, c_k, c_v, c_proj, c_fc, mlp c_proj, then lm_head (2 + 6L tensors).
  static absl::StatusOr<ParamStore> Create(const compiler::ModelConfig& config);

  /// nanochat's init_weights, from `seed`: Linear N(0, (1/sqrt(fan_in)) min(1, sqrt(fan_out/fan_in))),
  /// embedding N(0, 1), then zeros for lm_head and both c_proj of every block. The normal
  /// draws are our own (SplitMix64 + Box-Muller, one stream per tensor), identical on every
  /// machine; they do not reproduce torch's generator (the golden files store torch's
  /// initial weights, and their tests copy those in instead of calling this).
  /// `zero_output_projections = false` keeps the normal draws for lm_head and c_proj too.
  void InitNanochat(uint64_t seed, bool zero_output_projections = true);

  const compiler::ModelConfig& config() const { return config_; }
  const std::vector<Param>& params() const { return params_; }
  std::vector<Param>& params() { return params_; }
  /// nullptr when no parameter has that name.
  const Param* Find(const std::string& name) const;
  Param* Find(const std::string& name);
  /// nanochat's groups in its order: AdamW {lm_head}, AdamW {wte}, Muon {every parameter in
  /// transformer.h}. Together they hold every parameter exactly once.
  std::vector<OptimizerGroup> OptimizerGroups() const;
  int64_t NumParams() const;
  /// A 64-bit hash of every tensor's bytes, in order (FNV-1a's constants over little-endian
  /// 8-byte words, h = ((h ^ w) * prime) ^ (h' >> 32), a tensor's last 4 bytes FNV-1a byte by
  /// byte): ranks compare it to check they hold bit-identical weights, and checkpoint metas
  /// record it. The algorithm is fixed: its value is the same on every machine.
  uint64_t Checksum() const;

 private:
  explicit ParamStore(const compiler::ModelConfig& config) : config_(config) {}
  compiler::ModelConfig config_;
  std::vector<Param> params_;
};

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_PARAMS_PARAM_STORE_H_

// Tests only: the smallest model the checkpoint and resume tests save and load (2 layers,
// vocab 16, width 8, one head: 14 tensors, 1792 floats, 7 KiB of data), with nanochat's init.
#ifndef GPT_SFT_RUNTIME_PARAMS_TINY_PARAM_STORE_H_
#define GPT_SFT_RUNTIME_PARAMS_TINY_PARAM_STORE_H_

#include <cstdint>

#include "model/model_config.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::runtime::testing {

inline compiler::ModelConfig Tiny() { return *compiler::ModelConfig::FromDepth(2, 16, 8, 8, 1); }

/// Tiny() initialised as nanochat does from `seed` (every tensor non-zero).
inline ParamStore TinyStore(uint64_t seed) {
  ParamStore s = *ParamStore::Create(Tiny());
  s.InitNanochat(seed, /*zero_output_projections=*/false);
  return s;
}

}  // namespace gpt_sft::runtime::testing

#endif  // GPT_SFT_RUNTIME_PARAMS_TINY_PARAM_STORE_H_

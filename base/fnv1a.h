// FNV-1a 64 over bytes, a byte at a time: the fingerprint of small byte strings (artifact blobs,
// the training data a resumable run records). Not for multi-GB tensors: ParamStore::Checksum
// takes 8 bytes a step for speed and so is a different function.
#ifndef GPT_SFT_BASE_FNV1A_H_
#define GPT_SFT_BASE_FNV1A_H_

#include <cstdint>
#include <string_view>

namespace gpt_sft::base {

inline uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_FNV1A_H_

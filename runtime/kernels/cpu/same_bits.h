// Test helper for fused kernels, which must give their unfused chain's exact bits: a gtest
// assertion that two vectors are equal byte for byte (so -0.0 vs 0.0 and NaN payloads count),
// naming the first element that differs.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_SAME_BITS_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_SAME_BITS_H_

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::kernels::testing {

template <typename T>
void ExpectSameBits(const std::vector<T>& want, const std::vector<T>& got, const char* what) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(std::memcmp(&want[i], &got[i], sizeof(T)), 0) << what << " element " << i << ": " << want[i] << " vs "
                                                            << got[i];
  }
}

}  // namespace gpt_sft::runtime::kernels::testing

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_SAME_BITS_H_

// NonFiniteScan: the first NaN or infinity in a float32 tensor, found at memory speed (the scan
// runs over every gradient before every update, and over every saved tensor).
#ifndef GPT_SFT_TRAINER_NON_FINITE_SCAN_H_
#define GPT_SFT_TRAINER_NON_FINITE_SCAN_H_

#include <cstdint>
#include <optional>
#include <string>

namespace gpt_sft::trainer {

/// A non-finite element: which tensor, where, and what it is (nan, inf, -inf).
struct NonFiniteValue {
  std::string tensor;
  int64_t element = 0;
  float value = 0;
};

/// The index of the first non-finite element of data[0, n), or -1.
int64_t FirstNonFiniteIndex(const float* data, int64_t n);

/// The first non-finite element of `tensor`'s data[0, n), or nullopt.
std::optional<NonFiniteValue> FindNonFinite(const std::string& tensor, const float* data, int64_t n);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_NON_FINITE_SCAN_H_

// The GPU kernel generators' test harness: one small gpt function compiled for the opencl
// target and run on the OpenCL device (PoCL on the CPU here), and the same IR run on the
// interpreter - the definition of every op - on the same inputs; every result is compared.
//
//   absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(R"(
//     func.func @f(%x: tensor<8x64xf32> {gpt.name = "x"}) -> (tensor<8x64xf32> {gpt.name = "y"}) {
//       %y = gpt.rms_norm %x : tensor<8x64xf32>
//       return %y : tensor<8x64xf32>
//     })", {});
//   for (auto& d : *diffs) EXPECT_LT(d.max_rel_error, 1e-5) << d.name;
//
// A machine with no OpenCL device gets Unavailable (tests GTEST_SKIP on it, saying why).
#ifndef GPT_SFT_TESTS_KERNELS_KERNEL_HARNESS_H_
#define GPT_SFT_TESTS_KERNELS_KERNEL_HARNESS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/base/tensor.h"

namespace gpt_sft::tests {

struct KernelRun {
  /// Arguments by gpt.name. Float arguments not given get uniform [-1, 1) values from `seed`;
  /// integer arguments must be given.
  std::map<std::string, runtime::Tensor> inputs;
  uint64_t seed = 1;
  /// The function to run.
  std::string function = "f";
  /// False: the IR already carries its placement (gpt.arena_bytes, gpt.offsets, as
  /// gpt-plan-buffers writes them) and is not planned again, so a test can give values
  /// overlapping bytes (the epilogue fusions' overlap rules).
  bool plan = true;
};

struct ResultComparison {
  std::string name;           // the result's gpt.name (or "result <i>")
  double max_abs_error = 0;   // max |opencl - interpreter|
  double max_rel_error = 0;   // max_abs_error / max |interpreter| (0 when the reference is all zero)
  double max_reference = 0;   // max |interpreter|
};

/// Compiles and runs `ir` both ways; one comparison per result of the function, in order.
absl::StatusOr<std::vector<ResultComparison>> CompareOpenClWithInterpreter(const std::string& ir,
                                                                           const KernelRun& run);

/// True when an OpenCL device opens here; else false and `why` says what was found.
bool OpenClAvailable(std::string* why);

}  // namespace gpt_sft::tests

#endif  // GPT_SFT_TESTS_KERNELS_KERNEL_HARNESS_H_

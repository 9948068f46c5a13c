// The optimizer generators (AdamW; Muon with its Newton-Schulz products on the tiled gemm)
// on OpenCL against the interpreter, for square, wide and tall matrices (also off the gemm's
// tiles), updating in place (the plan donates the state: results named like the arguments,
// which nothing reads afterwards) and not (the arguments read again after the update).
// Tolerances, relative to the largest reference value: 1e-6 for AdamW (the same f64
// arithmetic; pow and sqrt of the device's libm), 1e-4 for Muon (five Newton-Schulz
// iterations of fp32 products, whose rounding grows through the iterations: the CPU's BLAS
// sums in another order).
#include <gtest/gtest.h>

#include <iostream>

#include "absl/strings/str_replace.h"
#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

using runtime::Tensor;

void ExpectClose(const std::string& ir, double tolerance, float step = 3.f) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  KernelRun run;
  run.inputs["lr"] = Tensor::Scalar<float>(0.02f);
  run.inputs["step"] = Tensor::Scalar<float>(step);
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    std::cout << "  " << d.name << ": max rel error " << d.max_rel_error << "\n";
    EXPECT_GT(d.max_reference, 0) << d.name;
    EXPECT_LE(d.max_rel_error, tolerance) << d.name << ": max abs error " << d.max_abs_error << " of " << d.max_reference;
  }
}

TEST(OptimizerKernelsTest, AdamWInPlace) {
  ExpectClose(R"(
    func.func @f(%p: tensor<64x48xf32> {gpt.name = "p"}, %g: tensor<64x48xf32> {gpt.name = "g"},
                 %m: tensor<64x48xf32> {gpt.name = "m"}, %v: tensor<64x48xf32> {gpt.name = "v"},
                 %lr: tensor<f32> {gpt.name = "lr"}, %t: tensor<f32> {gpt.name = "step"})
        -> (tensor<64x48xf32> {gpt.name = "p"}, tensor<64x48xf32> {gpt.name = "m"}, tensor<64x48xf32> {gpt.name = "v"}) {
      %v2 = gpt.mul %v, %v : tensor<64x48xf32>, tensor<64x48xf32>
      %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %v2, %lr, %t {weight_decay = 0.1 : f64} : tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<f32>, tensor<f32>
      return %p1, %m1, %v1 : tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>
    })", 1e-6);
}

TEST(OptimizerKernelsTest, AdamWDonated) {
  ExpectClose(R"(
    func.func @f(%p: tensor<37x45xf32> {gpt.name = "p"}, %g: tensor<37x45xf32> {gpt.name = "g"},
                 %m: tensor<37x45xf32> {gpt.name = "m"}, %v: tensor<37x45xf32> {gpt.name = "v"},
                 %lr: tensor<f32> {gpt.name = "lr"}, %t: tensor<f32> {gpt.name = "step"})
        -> (tensor<37x45xf32> {gpt.name = "p"}, tensor<37x45xf32> {gpt.name = "m"}, tensor<37x45xf32> {gpt.name = "v"}) {
      %v2 = gpt.mul %v, %v : tensor<37x45xf32>, tensor<37x45xf32>
      %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %v2, %lr, %t : tensor<37x45xf32>, tensor<37x45xf32>, tensor<37x45xf32>, tensor<37x45xf32>, tensor<f32>, tensor<f32>
      return %p1, %m1, %v1 : tensor<37x45xf32>, tensor<37x45xf32>, tensor<37x45xf32>
    })", 1e-6, /*step=*/1.f);
}

// Not donated: p, g, m are read again after the update, so the results go elsewhere; the
// step 2.6 is rounded to 3 as the CPU's llround does.
TEST(OptimizerKernelsTest, AdamWNotDonated) {
  ExpectClose(R"(
    func.func @f(%p: tensor<64x48xf32> {gpt.name = "p"}, %g: tensor<64x48xf32> {gpt.name = "g"},
                 %m: tensor<64x48xf32> {gpt.name = "m"}, %v: tensor<64x48xf32> {gpt.name = "v"},
                 %lr: tensor<f32> {gpt.name = "lr"}, %t: tensor<f32> {gpt.name = "step"})
        -> (tensor<64x48xf32> {gpt.name = "p1"}, tensor<64x48xf32> {gpt.name = "m1"}, tensor<64x48xf32> {gpt.name = "v1"},
            tensor<64x48xf32> {gpt.name = "pg"}, tensor<64x48xf32> {gpt.name = "mv"}) {
      %vv = gpt.mul %v, %v : tensor<64x48xf32>, tensor<64x48xf32>
      %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %vv, %lr, %t {weight_decay = 0.1 : f64, beta1 = 0.9 : f64} : tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<f32>, tensor<f32>
      %pg = gpt.add %p, %g : tensor<64x48xf32>, tensor<64x48xf32>
      %mv = gpt.add %m, %vv : tensor<64x48xf32>, tensor<64x48xf32>
      return %p1, %m1, %v1, %pg, %mv : tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>
    })", 1e-6, /*step=*/2.6f);
}

std::string MuonIr(int R, int S) {
  return absl::StrReplaceAll(R"(
    func.func @f(%p: tensor<RxSxf32> {gpt.name = "p"}, %g: tensor<RxSxf32> {gpt.name = "g"},
                 %b: tensor<RxSxf32> {gpt.name = "buf"}, %lr: tensor<f32> {gpt.name = "lr"})
        -> (tensor<RxSxf32> {gpt.name = "p"}, tensor<RxSxf32> {gpt.name = "buf"}) {
      %p1, %b1 = gpt.muon_update %p, %g, %b, %lr : tensor<RxSxf32>, tensor<RxSxf32>, tensor<RxSxf32>, tensor<f32>
      return %p1, %b1 : tensor<RxSxf32>, tensor<RxSxf32>
    })", {{"R", std::to_string(R)}, {"S", std::to_string(S)}});
}

TEST(OptimizerKernelsTest, MuonSquare) { ExpectClose(MuonIr(64, 64), 1e-4); }
TEST(OptimizerKernelsTest, MuonWide) { ExpectClose(MuonIr(48, 96), 1e-4); }
TEST(OptimizerKernelsTest, MuonTall) { ExpectClose(MuonIr(96, 48), 1e-4); }
TEST(OptimizerKernelsTest, MuonTallOffTheTiles) { ExpectClose(MuonIr(70, 37), 1e-4); }

// Not donated: the parameter and the buffer are read again after the update.
TEST(OptimizerKernelsTest, MuonNotDonated) {
  ExpectClose(R"(
    func.func @f(%p: tensor<48x96xf32> {gpt.name = "p"}, %g: tensor<48x96xf32> {gpt.name = "g"},
                 %b: tensor<48x96xf32> {gpt.name = "buf"}, %lr: tensor<f32> {gpt.name = "lr"})
        -> (tensor<48x96xf32> {gpt.name = "p1"}, tensor<48x96xf32> {gpt.name = "b1"}, tensor<48x96xf32> {gpt.name = "pb"}) {
      %p1, %b1 = gpt.muon_update %p, %g, %b, %lr {momentum = 0.9 : f64} : tensor<48x96xf32>, tensor<48x96xf32>, tensor<48x96xf32>, tensor<f32>
      %pb = gpt.add %p, %b : tensor<48x96xf32>, tensor<48x96xf32>
      return %p1, %b1, %pb : tensor<48x96xf32>, tensor<48x96xf32>, tensor<48x96xf32>
    })", 1e-4);
}

}  // namespace
}  // namespace gpt_sft::tests

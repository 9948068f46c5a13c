// The kernels' Workspace overloads (the compiled step's, allocation-free) against their
// allocating signatures (the interpreter's): the same bits, with the workspace filled with
// NaN bytes first (a kernel that read scratch before writing it would show), at one and
// three threads, and with a workspace sized for fewer threads than run (it runs on as many
// as it has slices for).
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/optimizers.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/rotary.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {
namespace {

/// A workspace of `bytes` whose every byte is 0xFF (a NaN in float and double).
class NanWorkspace {
 public:
  explicit NanWorkspace(int64_t bytes) : buffer_(bytes) { std::memset(buffer_.get().data, 0xFF, buffer_.get().bytes); }
  Workspace get() const { return buffer_.get(); }

 private:
  ScratchBuffer buffer_;
};

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

template <typename T>
bool SameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

class WorkspaceOverloads : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    saved_ = NumThreads();
    SetNumThreads(GetParam());
  }
  void TearDown() override { SetNumThreads(saved_); }
  int saved_ = 1;
};

TEST_P(WorkspaceOverloads, AttentionForwardAndBackward) {
  const AttentionShape s{2, 150, 4, 2, 16};  // GQA, three blocks, the last one short
  const int64_t nq = s.B * s.T * s.H * s.D, nkv = s.B * s.T * s.Hkv * s.D, nl = s.B * s.H * s.T;
  const std::vector<float> q = Random(nq, 1), k = Random(nkv, 2), v = Random(nkv, 3), dout = Random(nq, 4);
  std::vector<int32_t> seg(s.B * s.T);
  for (int64_t i = 0; i < s.B * s.T; ++i) seg[i] = static_cast<int32_t>((i % s.T) / 50);
  for (const int32_t* segments : {static_cast<const int32_t*>(nullptr), static_cast<const int32_t*>(seg.data())}) {
    std::vector<float> out(nq), lse(nl), out_ws(nq), lse_ws(nl);
    Attention(q.data(), k.data(), v.data(), segments, s, out.data(), lse.data());
    const NanWorkspace forward(AttentionWorkspaceBytes<float>(s, segments != nullptr));
    Attention(q.data(), k.data(), v.data(), segments, s, out_ws.data(), lse_ws.data(), forward.get());
    EXPECT_TRUE(SameBits(out, out_ws)) << "segments " << (segments != nullptr);
    EXPECT_TRUE(SameBits(lse, lse_ws)) << "segments " << (segments != nullptr);
    for (AttentionGradSchedule schedule : {AttentionGradSchedule::kFused, AttentionGradSchedule::kTwoPass}) {
      std::vector<float> dq(nq), dk(nkv), dv(nkv), dq_ws(nq), dk_ws(nkv), dv_ws(nkv);
      AttentionGrad(q.data(), k.data(), v.data(), segments, s, out.data(), lse.data(), dout.data(), dq.data(),
                    dk.data(), dv.data(), schedule);
      const NanWorkspace backward(AttentionGradWorkspaceBytes<float>(s, segments != nullptr));
      AttentionGrad(q.data(), k.data(), v.data(), segments, s, out.data(), lse.data(), dout.data(), dq_ws.data(),
                    dk_ws.data(), dv_ws.data(), backward.get(), schedule);
      EXPECT_TRUE(SameBits(dq, dq_ws) && SameBits(dk, dk_ws) && SameBits(dv, dv_ws))
          << "segments " << (segments != nullptr) << " schedule " << static_cast<int>(schedule);
    }
  }
}

TEST_P(WorkspaceOverloads, CrossEntropy) {
  const int64_t N = 300, V = 37;
  const std::vector<float> logits = Random(N * V, 5);
  std::vector<int32_t> targets(N);
  for (int64_t n = 0; n < N; ++n) targets[n] = n % 7 == 3 ? -1 : static_cast<int32_t>(n * 13 % V);
  const CrossEntropyResult a = CrossEntropy(logits.data(), targets.data(), N, V);
  const NanWorkspace ws(CrossEntropyWorkspaceBytes(N));
  const CrossEntropyResult b = CrossEntropy(logits.data(), targets.data(), N, V, ws.get());
  EXPECT_EQ(std::memcmp(&a.loss, &b.loss, sizeof(double)), 0) << a.loss << " vs " << b.loss;
  EXPECT_EQ(a.count, b.count);
}

TEST_P(WorkspaceOverloads, RotaryAndItsGradient) {
  const RotaryShape s{2, 70, 3, 16};
  const int64_t n = s.B * s.T * s.H * s.D;
  const std::vector<float> x = Random(n, 6);
  std::vector<int32_t> positions(s.B * s.T);
  for (int64_t i = 0; i < s.B * s.T; ++i) positions[i] = static_cast<int32_t>(i % 41);
  std::vector<float> y(n), y_ws(n), dx(n), dx_ws(n);
  const NanWorkspace ws(RotaryWorkspaceBytes(s));
  Rotary(x.data(), positions.data(), y.data(), s, 10000.0);
  Rotary(x.data(), positions.data(), y_ws.data(), s, 10000.0, ws.get());
  RotaryGrad(x.data(), positions.data(), dx.data(), s, 10000.0);
  RotaryGrad(x.data(), positions.data(), dx_ws.data(), s, 10000.0, ws.get());
  EXPECT_TRUE(SameBits(y, y_ws));
  EXPECT_TRUE(SameBits(dx, dx_ws));
}

// Muon always took its scratch from the caller; the executable now hands it a slice of the
// shared workspace, whatever an earlier launch left there.
TEST_P(WorkspaceOverloads, MuonWithGarbageScratch) {
  const int64_t rows = 48, cols = 80;
  const std::vector<float> g = Random(rows * cols, 7);
  std::vector<float> p = Random(rows * cols, 8), buf = Random(rows * cols, 9);
  std::vector<float> p_ws = p, buf_ws = buf;
  const MuonHyper hyper{0.02, 0.95};
  std::vector<float> zeros(MuonScratchSize(rows, cols), 0.f);
  MuonUpdate(p.data(), buf.data(), g.data(), rows, cols, hyper, zeros.data());
  const NanWorkspace ws(MuonScratchSize(rows, cols) * static_cast<int64_t>(sizeof(float)));
  MuonUpdate(p_ws.data(), buf_ws.data(), g.data(), rows, cols, hyper, reinterpret_cast<float*>(ws.get().data));
  EXPECT_TRUE(SameBits(p, p_ws));
  EXPECT_TRUE(SameBits(buf, buf_ws));
}

INSTANTIATE_TEST_SUITE_P(Threads, WorkspaceOverloads, ::testing::Values(1, 3));

// Sized at one thread, run at three: the kernel runs on the one slice it has, same bits.
TEST(Workspace, AttentionSizedForFewerThreadsThanRun) {
  const int saved = NumThreads();
  const AttentionShape s{1, 200, 2, 2, 8};
  const int64_t nq = s.B * s.T * s.H * s.D, nl = s.B * s.H * s.T;
  const std::vector<float> q = Random(nq, 10), k = Random(nq, 11), v = Random(nq, 12);
  SetNumThreads(1);
  const NanWorkspace ws(AttentionWorkspaceBytes<float>(s, false));
  std::vector<float> out(nq), lse(nl), out_ws(nq), lse_ws(nl);
  Attention(q.data(), k.data(), v.data(), nullptr, s, out.data(), lse.data());
  SetNumThreads(3);
  EXPECT_LT(ws.get().bytes, AttentionWorkspaceBytes<float>(s, false));
  Attention(q.data(), k.data(), v.data(), nullptr, s, out_ws.data(), lse_ws.data(), ws.get());
  EXPECT_TRUE(SameBits(out, out_ws));
  EXPECT_TRUE(SameBits(lse, lse_ws));
  SetNumThreads(saved);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels

// all_reduce_benchmark: MpiCommunicator::AllReduce (f32, sum) bandwidth for the gradient
// buffers of the benchmark config (depth 4, n_embd 256, vocab 8192), each on its own and all of
// them as one buffer. Run as ranks, e.g.
//   runtime/collectives/run_ranks.sh -np 2 bazel-bin/runtime/collectives/all_reduce_benchmark
// Rank 0 prints one row per buffer: time per call (the slowest rank's mean), algorithm
// bandwidth (bytes / time) and bus bandwidth (2(n-1)/n * bytes / time, nccl-tests' measure of
// what each link carries in a ring all-reduce).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/collectives/mpi_communicator.h"

namespace gpt_sft::runtime::collectives {
namespace {

struct Buffer {
  std::string name;
  int64_t elements;
};

std::vector<Buffer> GradientBuffers() {
  constexpr int64_t kDepth = 4, kEmbd = 256, kVocab = 8192, kMlp = 4 * kEmbd;
  std::vector<Buffer> buffers = {
      {"wte 8192x256", kVocab * kEmbd},
      {"lm_head 8192x256", kVocab * kEmbd},
      {"attn q|k|v|o 256x256", kEmbd * kEmbd},
      {"mlp c_fc 1024x256", kMlp * kEmbd},
      {"mlp c_proj 256x1024", kEmbd * kMlp},
  };
  const int64_t total = 2 * kVocab * kEmbd + kDepth * (4 * kEmbd * kEmbd + 2 * kMlp * kEmbd);
  buffers.push_back({"all gradients (one buffer)", total});
  return buffers;
}

int Main() {
  auto made = MakeMpiCommunicator();
  if (!made.ok()) {
    std::fprintf(stderr, "all_reduce_benchmark: %s\n", made.status().ToString().c_str());
    return 1;
  }
  Communicator& world = **made;
  const int n = world.world_size();
  if (world.rank() == 0) {
    std::printf("all_reduce f32 sum, %d ranks, backend %s\n", n, std::string(world.backend()).c_str());
    std::printf("%-28s %10s %10s %8s %12s %12s %12s\n", "buffer", "elements", "MiB", "iters", "us/call",
                "algbw GB/s", "busbw GB/s");
  }
  for (const Buffer& buffer : GradientBuffers()) {
    std::vector<float> data(static_cast<size_t>(buffer.elements), 1.0f);
    auto all_reduce = [&] {
      if (absl::Status s = world.AllReduce(data.data(), buffer.elements, DataType::kFloat32, ReduceOp::kSum);
          !s.ok()) {
        std::fprintf(stderr, "all_reduce_benchmark: %s\n", s.ToString().c_str());
        std::exit(1);
      }
    };
    for (int i = 0; i < 3; ++i) all_reduce();  // warm up: connections, pages
    // About 0.5 s per buffer, the same count on every rank (rank 0's estimate, broadcast).
    const auto probe_start = std::chrono::steady_clock::now();
    all_reduce();
    double probe = std::chrono::duration<double>(std::chrono::steady_clock::now() - probe_start).count();
    int32_t iters = static_cast<int32_t>(0.5 / (probe > 1e-6 ? probe : 1e-6));
    iters = iters < 5 ? 5 : iters > 2000 ? 2000 : iters;
    if (!world.Broadcast(&iters, 1, DataType::kInt32, 0).ok() || !world.Barrier().ok()) return 1;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) all_reduce();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
    if (!world.AllReduce(&seconds, 1, DataType::kFloat64, ReduceOp::kMax).ok()) return 1;
    if (world.rank() == 0) {
      const double bytes = static_cast<double>(buffer.elements) * sizeof(float);
      const double algbw = bytes / seconds / 1e9;
      std::printf("%-28s %10lld %10.2f %8d %12.1f %12.2f %12.2f\n", buffer.name.c_str(),
                  static_cast<long long>(buffer.elements), bytes / (1 << 20), iters, seconds * 1e6, algbw,
                  algbw * 2.0 * (n - 1) / n);
    }
  }
  return 0;
}

}  // namespace
}  // namespace gpt_sft::runtime::collectives

int main() { return gpt_sft::runtime::collectives::Main(); }

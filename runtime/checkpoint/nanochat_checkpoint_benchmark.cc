// Times one save and one load of a nanochat model_%06d.pt at a given depth (default d20:
// 561M params, 2.1 GB with wte in bf16) into --dir, and checks the load gives back what was
// saved (wte as rounded to bf16). Depth 28 and up writes more than 4 GiB: the zip64 records.
// The files are left in --dir, so PyTorch can be pointed at them. One run: an order of
// magnitude, not a figure to compare to the third digit.
// --load=DIR_OR_PT only times loading an existing checkpoint (one torch.save wrote, say).
//   ./bazelw run -c opt //runtime/checkpoint:nanochat_checkpoint_benchmark -- --depth=20 --dir=/tmp/nc
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "runtime/checkpoint/nanochat_checkpoint.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpt_sft;
  int depth = 20;
  std::string dir = "/tmp/gpt_sft_nanochat_checkpoint_benchmark", load;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--depth=", 8) == 0) depth = std::atoi(argv[i] + 8);
    else if (std::strncmp(argv[i], "--load=", 7) == 0) load = argv[i] + 7;
    else if (std::strncmp(argv[i], "--dir=", 6) == 0) dir = argv[i] + 6;
    else {
      std::fprintf(stderr, "unknown flag %s (flags: --depth=N --dir=PATH --load=PATH)\n", argv[i]);
      return 2;
    }
  }
  if (!load.empty()) {
    const auto t = std::chrono::steady_clock::now();
    absl::StatusOr<runtime::LoadedCheckpoint> c = runtime::LoadNanochatCheckpoint(load);
    if (!c.ok()) {
      std::fprintf(stderr, "%s\n", std::string(c.status().message()).c_str());
      return 1;
    }
    std::printf("loaded %s: %lld params in %.2f s\n", load.c_str(), static_cast<long long>(c->params.NumParams()),
                Seconds(t));
    return 0;
  }
  absl::StatusOr<compiler::ModelConfig> config = compiler::ModelConfig::FromDepth(depth, 65536);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  runtime::ParamStore store = *runtime::ParamStore::Create(*config);
  // A cheap pattern that differs per element and per tensor (the values do not affect timing).
  for (size_t k = 0; k < store.params().size(); ++k) {
    const runtime::Param& p = store.params()[k];
    for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] = float((uint32_t(i + k) * 2654435761u) >> 12) * 1e-6f - 1.0f;
  }
  auto t = std::chrono::steady_clock::now();
  absl::StatusOr<runtime::NanochatCheckpointFiles> w = runtime::SaveNanochatCheckpoint(dir, store, {1, 3.0, {}});
  if (!w.ok()) {
    std::fprintf(stderr, "%s\n", std::string(w.status().message()).c_str());
    return 1;
  }
  const double bytes = static_cast<double>(std::filesystem::file_size(w->model_path));
  double s = Seconds(t);
  std::printf("d%d: %lld params; save %s: %.2f GB in %.2f s (%.0f MB/s, fsync and CRC-32 included)\n", depth,
              static_cast<long long>(store.NumParams()), w->model_path.c_str(), bytes / 1e9, s, bytes / s / 1e6);
  t = std::chrono::steady_clock::now();
  absl::StatusOr<runtime::LoadedCheckpoint> c = runtime::LoadNanochatCheckpoint(dir);
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", std::string(c.status().message()).c_str());
    return 1;
  }
  s = Seconds(t);
  std::printf("load %.2f s (%.0f MB/s, checks and CRC-32 included)\n", s, bytes / s / 1e6);
  for (size_t k = 0; k < store.params().size(); ++k) {
    const runtime::Param& p = store.params()[k];
    const float* q = c->params.params()[k].data();
    for (int64_t i = 0; i < p.numel(); ++i) {
      float expected = p.data()[i];
      if (k == 0) {
        const uint32_t bits = uint32_t{runtime::RoundToBfloat16(expected)} << 16;
        std::memcpy(&expected, &bits, 4);
      }
      if (std::memcmp(&expected, q + i, 4) != 0) {
        std::fprintf(stderr, "%s[%lld] differs after the round trip\n", p.name.c_str(), static_cast<long long>(i));
        return 1;
      }
    }
  }
  std::printf("round trip exact\n");
  return 0;
}

// Times one save and one load of a checkpoint at a given depth (default d20: 561M params,
// 2.24 GB of F32), into --dir (default $TEST_TMPDIR or /tmp). One run: read it as an order of
// magnitude, not a figure to compare to the third digit.
//   ./bazelw run //runtime/checkpoint:checkpoint_benchmark -- --depth=20 --dir=/tmp/ck
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "runtime/checkpoint/checkpoint.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpt_sft;
  int depth = 20;
  std::string dir = "/tmp/gpt_sft_checkpoint_benchmark";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--depth=", 8) == 0) depth = std::atoi(argv[i] + 8);
    else if (std::strncmp(argv[i], "--dir=", 6) == 0) dir = argv[i] + 6;
    else {
      std::fprintf(stderr, "unknown flag %s (flags: --depth=N --dir=PATH)\n", argv[i]);
      return 2;
    }
  }
  absl::StatusOr<compiler::ModelConfig> config = compiler::ModelConfig::FromDepth(depth, 65536);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  runtime::ParamStore store = *runtime::ParamStore::Create(*config);
  auto t = std::chrono::steady_clock::now();
  store.InitNanochat(42);
  std::printf("d%d: %lld params, init %.2f s\n", depth, static_cast<long long>(store.NumParams()), Seconds(t));
  t = std::chrono::steady_clock::now();
  const uint64_t sum = store.Checksum();
  std::printf("checksum %016llx in %.2f s\n", static_cast<unsigned long long>(sum), Seconds(t));
  t = std::chrono::steady_clock::now();
  absl::StatusOr<runtime::ResolvedCheckpoint> w = runtime::SaveCheckpoint(dir, store, {1, 3.0, {}});
  if (!w.ok()) {
    std::fprintf(stderr, "%s\n", std::string(w.status().message()).c_str());
    return 1;
  }
  const double bytes = static_cast<double>(std::filesystem::file_size(w->model_path));
  const double save_s = Seconds(t);
  std::printf("save %.2f s (%.0f MB/s, fsync included; the checksum is part of it)\n", save_s, bytes / save_s / 1e6);
  t = std::chrono::steady_clock::now();
  absl::StatusOr<runtime::LoadedCheckpoint> c = runtime::LoadCheckpoint(dir, 1);
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", std::string(c.status().message()).c_str());
    return 1;
  }
  const double load_s = Seconds(t);
  std::printf("load %.2f s (%.0f MB/s, page cache warm, checksum verified)\n", load_s, bytes / load_s / 1e6);
  std::filesystem::remove_all(dir);
  return c->params.Checksum() == sum ? 0 : 1;
}

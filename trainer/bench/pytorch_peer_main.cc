// Runs the PyTorch eager peer (trainer/bench/pytorch_peer.py) at the CPU benchmark config under
// both malloc configurations and prints a table; the full-step bench binary will print the same
// rows beside our interpreter's.
//
//   ./bazelw run //trainer/bench:pytorch_peer_main -- --warmup=2 --steps=3
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "trainer/bench/pytorch_peer.h"

ABSL_FLAG(int, depth, 4, "n_layer");
ABSL_FLAG(int, n_embd, 256, "model width C");
ABSL_FLAG(int, n_head, 2, "attention heads (n_kv_head = n_head)");
ABSL_FLAG(int, vocab, 8192, "vocabulary size V");
ABSL_FLAG(int, batch, 4, "B: rows per step");
ABSL_FLAG(int, seq, 2048, "T: positions per row");
ABSL_FLAG(int, threads, 2, "torch.set_num_threads and OPENBLAS_NUM_THREADS");
ABSL_FLAG(int, warmup, 2, "untimed steps first");
ABSL_FLAG(int, steps, 3, "timed steps");
ABSL_FLAG(std::string, python, "/usr/bin/python3", "the python with torch (Debian's python3-torch)");

namespace gpt_sft::bench {
namespace {

PeerOptions OptionsFromFlags() {
  PeerOptions o;
  o.python = absl::GetFlag(FLAGS_python);
  o.depth = absl::GetFlag(FLAGS_depth);
  o.n_embd = absl::GetFlag(FLAGS_n_embd);
  o.n_head = absl::GetFlag(FLAGS_n_head);
  o.vocab = absl::GetFlag(FLAGS_vocab);
  o.batch = absl::GetFlag(FLAGS_batch);
  o.seq = absl::GetFlag(FLAGS_seq);
  o.threads = absl::GetFlag(FLAGS_threads);
  o.warmup = absl::GetFlag(FLAGS_warmup);
  o.steps = absl::GetFlag(FLAGS_steps);
  return o;
}

std::string Seconds(const std::vector<double>& s) {
  return absl::StrJoin(s, " ", [](std::string* out, double v) { absl::StrAppendFormat(out, "%.2f", v); });
}

int Run() {
  const PeerOptions base = OptionsFromFlags();
  std::printf("PyTorch eager peer: depth %d, n_embd %d, n_head %d, vocab %d, [%d,%d], float32, %d threads, "
              "%d warm-up + %d timed steps\n",
              base.depth, base.n_embd, base.n_head, base.vocab, base.batch, base.seq, base.threads, base.warmup,
              base.steps);
  std::vector<PeerResult> results;
  for (const MallocConfig& malloc : PeerMallocConfigs()) {
    PeerOptions o = base;
    o.malloc = malloc;
    std::fprintf(stderr, "running the peer with %s malloc...\n", malloc.name.c_str());
    absl::StatusOr<PeerResult> r = RunPytorchPeer(o);
    if (!r.ok()) {
      std::fprintf(stderr, "pytorch_peer_main (%s): %s\n", malloc.name.c_str(), r.status().ToString().c_str());
      return 1;
    }
    results.push_back(*r);
  }
  std::printf("%-14s %12s %10s %9s %9s  %s\n", "malloc", "step s (med)", "tokens/s", "GFLOP/s", "peak RSS",
              "timed steps s");
  const std::vector<MallocConfig> configs = PeerMallocConfigs();
  for (size_t i = 0; i < results.size(); ++i) {
    const PeerResult& r = results[i];
    std::printf("%-14s %12.2f %10.0f %9.1f %7.2f GB  %s\n", configs[i].name.c_str(), r.step_seconds_median,
                r.tokens_per_second, r.gflops_per_second, r.peak_rss_bytes / 1e9, Seconds(r.step_seconds).c_str());
  }
  std::printf("speed-up of no mmap/trim over glibc default: %.2fx\n",
              results[0].step_seconds_median / results[1].step_seconds_median);
  std::printf("torch %s; sgemm_ from %s (mapped: %s)\n", results[0].torch_version.c_str(),
              results[0].sgemm_library.c_str(), absl::StrJoin(results[0].blas, ", ").c_str());
  return 0;
}

}  // namespace
}  // namespace gpt_sft::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return gpt_sft::bench::Run();
}

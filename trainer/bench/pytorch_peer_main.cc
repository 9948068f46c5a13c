// Runs the PyTorch eager peer (trainer/bench/pytorch_peer.py) at the CPU benchmark config under
// both malloc configurations and prints a table; the full-step bench binary will print the same
// rows beside our interpreter's.
//
//   ./bazelw run //trainer/bench:pytorch_peer_main -- --warmup=2 --steps=3
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
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
ABSL_FLAG(int, rounds, 1, "runs of each malloc configuration, alternating (the machine is shared and noisy)");
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

double Min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void PrintRow(const std::string& label, const PeerResult& r) {
  std::printf("%-22s %8.2f %8.2f %10.0f %9.1f %7.2f GB %8.2f %8.2f %9.2f  %s\n", label.c_str(), r.step_seconds_median,
              Min(r.step_seconds), r.tokens_per_second, r.gflops_per_second, r.peak_rss_bytes / 1e9,
              Median(r.step_user_seconds), Median(r.step_system_seconds),
              Median(std::vector<double>(r.step_minor_faults.begin(), r.step_minor_faults.end())) / 1e6,
              Seconds(r.step_seconds).c_str());
}

int Run() {
  const PeerOptions base = OptionsFromFlags();
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  std::printf("PyTorch eager peer: depth %d, n_embd %d, n_head %d, vocab %d, [%d,%d], float32, %d threads, "
              "%d warm-up + %d timed steps, %d round(s)\n",
              base.depth, base.n_embd, base.n_head, base.vocab, base.batch, base.seq, base.threads, base.warmup,
              base.steps, rounds);
  const std::vector<MallocConfig> configs = PeerMallocConfigs();
  std::vector<std::vector<double>> timed(configs.size());  // every timed step of every round
  std::printf("%-22s %8s %8s %10s %9s %10s %8s %8s %9s  %s\n", "malloc (round)", "median s", "min s", "tokens/s",
              "GFLOP/s", "peak RSS", "user s", "sys s", "Mfaults", "timed steps s (wall)");
  PeerResult last;
  for (int round = 0; round < rounds; ++round) {
    for (size_t c = 0; c < configs.size(); ++c) {
      PeerOptions o = base;
      o.malloc = configs[c];
      std::fprintf(stderr, "round %d: running the peer with %s malloc...\n", round + 1, configs[c].name.c_str());
      absl::StatusOr<PeerResult> r = RunPytorchPeer(o);
      if (!r.ok()) {
        std::fprintf(stderr, "pytorch_peer_main (%s): %s\n", configs[c].name.c_str(), r.status().ToString().c_str());
        return 1;
      }
      PrintRow(absl::StrFormat("%s (%d)", configs[c].name, round + 1), *r);
      std::fflush(stdout);
      timed[c].insert(timed[c].end(), r->step_seconds.begin(), r->step_seconds.end());
      last = *r;
    }
  }
  std::printf("all rounds: median step %.2f s (glibc default) vs %.2f s (no mmap/trim): %.2fx; min %.2f vs %.2f s: %.2fx\n",
              Median(timed[0]), Median(timed[1]), Median(timed[0]) / Median(timed[1]), Min(timed[0]), Min(timed[1]),
              Min(timed[0]) / Min(timed[1]));
  std::printf("flops/token %lld (nanochat's formula), %lld params; torch %s; sgemm_ from %s (mapped: %s)\n",
              static_cast<long long>(last.flops_per_token), static_cast<long long>(last.num_params),
              last.torch_version.c_str(), last.sgemm_library.c_str(), absl::StrJoin(last.blas, ", ").c_str());
  return 0;
}

}  // namespace
}  // namespace gpt_sft::bench

int main(int argc, char** argv) {
  gpt_sft::base::ParseCommandLine(argc, argv);
  return gpt_sft::bench::Run();
}

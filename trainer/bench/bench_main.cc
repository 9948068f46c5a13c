// //trainer:bench (//trainer/bench): the full training step (forward, loss, backward, optimizer update) on the
// CPU benchmark config, ours beside current PyTorch in the same run.
//
//   ./bazelw run //trainer:bench                   # depth 4, width 256, 2 heads, vocab 8192, [4,2048]
//   ./bazelw run //trainer:bench -- --peer=none    # ours only
//
// Ours: the interpreted step (trainer/eager_step) and the compiled step (a child process). The
// peer (trainer/bench/README.md): nanochat's model in a pinned torch from PyPI, eager and
// torch.compile, fp32 and bf16 autocast, each in its own process, on our batch, under stock
// glibc malloc and under glibc told not to mmap/trim (PyTorch's step depends on it); each is
// reported, and the ratios are taken against a mode's faster. Warm-up steps are excluded; the
// figure of merit is the median step. The machine is shared and noisy: trust ratios measured
// in one run, not absolute times.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "base/cpu_isa.h"
#include <nlohmann/json.hpp>
#include "base/command_line.h"
#include "runtime/kernels/cpu/tile_gemm.h"
#include "runtime/kernels/cpu/tile_gemm_bf16.h"
#include "trainer/bench/cpu_kernels_report.h"
#include "trainer/bench/mixture_batches.h"
#include "trainer/bench/peer_interpreter.h"
#include "trainer/bench/peer_modes.h"
#include "trainer/bench/peer_speedups.h"
#include "trainer/bench/pytorch_peer.h"
#include "trainer/bench/subprocess.h"
#include "trainer/device_step.h"
#include "trainer/eager_step.h"
#include "trainer/step_compile.h"

ABSL_FLAG(int, depth, 4, "model depth");
ABSL_FLAG(int, n_embd, 256, "model width");
ABSL_FLAG(int, n_head, 2, "query heads (kv heads = heads)");
ABSL_FLAG(int, vocab, 8192, "vocabulary size");
ABSL_FLAG(int, batch, 4, "rows per step (B)");
ABSL_FLAG(int, seq, 2048, "positions per row (T)");
ABSL_FLAG(int, threads, 2, "threads, ours and the peer's");
ABSL_FLAG(int, warmup, 1, "untimed steps first");
ABSL_FLAG(int, steps, 3, "timed steps");
ABSL_FLAG(std::string, dtype, "float32",
          "our step's numerics: float32, or bfloat16 (nanochat's autocast rounding on f32 storage); the peer runs "
          "the modes of --peer_modes whatever this is");
ABSL_FLAG(bool, packed, false, "our step on packed rows (segment ids, positions); the peer is always padded");
ABSL_FLAG(bool, json, false, "also print one JSON object with every figure (last line)");
ABSL_FLAG(bool, profile, false, "print our step's time per op (timed steps only)");
ABSL_FLAG(std::string, device, "cpu", "the compiled step's device: cpu, opencl or opencl:<n>, cuda or cuda:<n>");
ABSL_FLAG(std::string, path, "both",
          "both: the interpreter here and the compiled step in a child process (each its own peak memory); "
          "interpreter or compiled: that one only");
ABSL_FLAG(bool, mixture, true,
          "also time each path on real SFT-mixture batches, --packing=pad and bestfit, and report supervised "
          "tokens/sec (the tokens that carry a target)");
ABSL_FLAG(std::string, peer, "torch",
          "torch: also run the PyTorch peer with the pinned torch from PyPI (a venv the bench makes on first use "
          "under ~/.cache/gpt-sft; Debian's torch 1.13 as a labelled fallback if that fails); torch-debian: Debian's "
          "torch 1.13 (/usr/bin/python3, no torch.compile); none: ours only");
ABSL_FLAG(std::string, peer_python, "", "with --peer=torch: this python (with torch) instead of the bench's venv");
ABSL_FLAG(std::string, peer_base_python, "",
          "the python that makes the peer's venv (-m venv); empty: the first python3 on PATH, else /usr/bin/python3 "
          "(not a python whose LIBDIR holds Debian's python3-torch: torch.compile's inductor would link against it)");
ABSL_FLAG(std::string, peer_modes, "all",
          "the peer's modes, each its own process: all, or a comma list of eager-fp32, compile-fp32, eager-bf16, "
          "compile-bf16 (torch.compile(dynamic=False); bf16 = nanochat's autocast)");
ABSL_FLAG(std::string, peer_omp_wait_policy, "PASSIVE",
          "the peer's OMP_WAIT_POLICY: PASSIVE (default: OpenMP workers sleep between parallel regions, as our "
          "thread pool does; on a shared machine GNU OpenMP's spinning makes torch several times slower), ACTIVE, "
          "or inherit (this process's environment, usually unset: GNU OpenMP's stock spin-then-sleep)");
ABSL_FLAG(std::string, peer_malloc, "both",
          "the peer's glibc malloc: both (each mode under each; ratios against the faster), glibc-default, no-mmap-trim");

namespace gpt_sft::trainer {
namespace {

// The bench's scratch (a compile cache, a batch file) removed; a failure to remove it is said,
// never thrown (the figures already taken stay valid).
void RemoveScratch(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) std::cerr << "bench: note: cannot remove " << path << ": " << ec.message() << std::endl;
}

using runtime::Tensor;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// This process's peak resident set (VmHWM). Not getrusage's ru_maxrss: Linux carries that
/// over fork and exec, so the compiled child would report the interpreter parent's peak.
int64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // "VmHWM:  123 kB"
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return int64_t{usage.ru_maxrss} * 1024;
}

// Random tokens; targets are the next token with the last 10% of each row ignored (-1), so
// the loss counts what a padded SFT row counts. Packed: four conversations a row.
bench::PeerBatch RandomBatchArrays(int64_t B, int64_t T, int vocab, bool packed, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> token(0, vocab - 1);
  bench::PeerBatch a{static_cast<int>(B), static_cast<int>(T), std::vector<int32_t>(B * T), std::vector<int32_t>(B * T),
                     std::vector<int32_t>(B * T), std::vector<int32_t>(B * T)};
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      a.inputs[b * T + t] = token(rng);
      a.targets[b * T + t] = t < T * 9 / 10 ? token(rng) : -1;
      a.segment_ids[b * T + t] = packed ? static_cast<int32_t>(t / 512) : 0;
      a.positions[b * T + t] = packed ? static_cast<int32_t>(t % 512) : static_cast<int32_t>(t);
    }
  }
  return a;
}

StepBatch RandomBatch(int64_t B, int64_t T, int vocab, bool packed, uint32_t seed) {
  const bench::PeerBatch a = RandomBatchArrays(B, T, vocab, packed, seed);
  StepBatch batch{Tensor::FromVector<int32_t>({B, T}, a.inputs), Tensor::FromVector<int32_t>({B, T}, a.targets)};
  if (packed) {
    batch.segment_ids = Tensor::FromVector<int32_t>({B, T}, a.segment_ids);
    batch.positions = Tensor::FromVector<int32_t>({B, T}, a.positions);
  }
  return batch;
}

// The batch every timed step of ours runs (seed 7), and the peer's too.
bench::PeerBatch BenchBatch(const compiler::StepConfig& config) {
  return RandomBatchArrays(config.batch_size, config.seq_len, config.model.vocab_size, config.packed, 7);
}

struct OursResult {
  std::vector<double> forward_seconds;           // @loss
  std::vector<double> forward_backward_seconds;  // @micro_step
  std::vector<double> step_seconds;              // @micro_step + @optimizer_step
  double loss = 0;
  int64_t peak_rss = 0, peak_live = 0;
  int64_t fresh_allocations = 0;  // during the timed steps: blocks the cache could not serve
  std::vector<runtime::OpProfileEntry> profile;
};

absl::StatusOr<OursResult> RunOurs(const compiler::StepConfig& config, int threads, int warmup, int steps) {
  absl::StatusOr<runtime::ParamStore> store = runtime::ParamStore::Create(config.model);
  if (!store.ok()) return store.status();
  store->InitNanochat(/*seed=*/1234);
  runtime::InterpreterOptions options;
  options.num_threads = threads;
  options.profile = absl::GetFlag(FLAGS_profile);
  absl::StatusOr<std::unique_ptr<EagerStep>> step = EagerStep::Create(config, &*store, options);
  if (!step.ok()) return step.status();
  const StepBatch batch = RandomBatch(config.batch_size, config.seq_len, config.model.vocab_size, config.packed, 7);
  OursResult result;
  // Forward alone and forward+backward first (their own warm-up), then full steps.
  for (int i = 0; i < warmup + steps; ++i) {
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<double> loss = (*step)->Loss(batch);
    if (!loss.ok()) return loss.status();
    const double forward = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    start = std::chrono::steady_clock::now();
    loss = (*step)->MicroStep(batch);
    if (!loss.ok()) return loss.status();
    const double forward_backward = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i >= warmup) {
      result.forward_seconds.push_back(forward);
      result.forward_backward_seconds.push_back(forward_backward);
    }
  }
  if (absl::Status s = (*step)->ResetGradients(); !s.ok()) return s;
  for (int i = 0; i < warmup + steps; ++i) {
    if (i == warmup) {
      (*step)->allocator().ResetPeak();
      result.fresh_allocations = -(*step)->allocator_stats().allocations_fresh;
      (*step)->ResetProfile();
    }
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<double> loss = (*step)->MicroStep(batch);
    if (!loss.ok()) return loss.status();
    if (absl::Status s = (*step)->OptimizerStep(1.0); !s.ok()) return s;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i >= warmup) result.step_seconds.push_back(seconds);
    result.loss = *loss;
  }
  result.peak_rss = PeakRssBytes();
  result.peak_live = (*step)->allocator_stats().peak_bytes_live;
  result.fresh_allocations += (*step)->allocator_stats().allocations_fresh;
  result.profile = (*step)->profile();
  return result;
}

struct CompiledResult {
  std::vector<double> forward_backward_seconds, step_seconds;
  double loss = 0;
  double cold_compile_seconds = 0, warm_load_seconds = 0;
  int64_t peak_rss = 0, arena_bytes = 0, device_bytes = 0, launches = 0;
  int kernels = 0;
  std::string device;
  std::vector<runtime::device::ProfileEntry> profile;
};

absl::StatusOr<std::unique_ptr<DeviceStep>> MakeDeviceStep(const compiler::StepConfig& config,
                                                          runtime::ParamStore* store, const std::string& cache,
                                                          int threads, bool profile) {
  DeviceStepOptions options;
  options.device = absl::GetFlag(FLAGS_device);
  options.num_threads = threads;
  options.profile = profile;
  return CompileDeviceStep(config, store, cache, options);
}

/// The compiled step: a cold compile into an empty cache, then a warm start from it (the
/// executable that runs), then the same warm-up and timed steps as the interpreter.
absl::StatusOr<CompiledResult> RunCompiled(const compiler::StepConfig& config, int threads, int warmup, int steps) {
  absl::StatusOr<runtime::ParamStore> store = runtime::ParamStore::Create(config.model);
  if (!store.ok()) return store.status();
  store->InitNanochat(/*seed=*/1234);
  const std::string cache = absl::StrFormat("/tmp/gpt-sft-bench-cache-%d", getpid());
  RemoveScratch(cache);
  CompiledResult result;
  const bool profile = absl::GetFlag(FLAGS_profile);
  {
    absl::StatusOr<std::unique_ptr<DeviceStep>> cold = MakeDeviceStep(config, &*store, cache, threads, false);
    if (!cold.ok()) return cold.status();
    result.cold_compile_seconds = (*cold)->compile_report().compile_seconds;
  }
  absl::StatusOr<std::unique_ptr<DeviceStep>> step = MakeDeviceStep(config, &*store, cache, threads, profile);
  RemoveScratch(cache);
  if (!step.ok()) return step.status();
  if (!(*step)->compile_report().cache_hit) return absl::InternalError("the second compile missed the cache");
  result.warm_load_seconds = (*step)->compile_report().seconds;
  result.arena_bytes = (*step)->compile_report().arena_bytes;
  result.device_bytes = (*step)->executable().allocated_bytes();
  result.device = (*step)->compile_report().device;
  result.launches = (*step)->compile_report().launches;
  result.kernels = (*step)->compile_report().kernels;
  const StepBatch batch = RandomBatch(config.batch_size, config.seq_len, config.model.vocab_size, config.packed, 7);
  for (int i = 0; i < warmup + steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<double> loss = (*step)->MicroStep(batch);
    if (!loss.ok()) return loss.status();
    const double fb = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (absl::Status s = (*step)->OptimizerStep(1.0); !s.ok()) return s;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i + 1 == warmup) (*step)->device().TakeProfile();
    if (i >= warmup) {
      result.forward_backward_seconds.push_back(fb);
      result.step_seconds.push_back(seconds);
    }
    result.loss = *loss;
  }
  result.peak_rss = PeakRssBytes();
  result.profile = (*step)->device().TakeProfile();
  return result;
}

nlohmann::ordered_json CompiledJson(const CompiledResult& c, int64_t tokens, int64_t flops_per_token) {
  const double median = Median(c.step_seconds);
  return {{"forward_backward_seconds", Median(c.forward_backward_seconds)},
          {"step_seconds", median},
          {"tokens_per_second", tokens / median},
          {"gflops_per_second", double(flops_per_token) * tokens / median / 1e9},
          {"peak_rss_bytes", c.peak_rss},
          {"arena_bytes", c.arena_bytes},
          {"device", c.device},
          {"device_bytes", c.device_bytes},
          {"cold_compile_seconds", c.cold_compile_seconds},
          {"warm_start_seconds", c.warm_load_seconds},
          {"launches_per_micro_step", c.launches},
          {"distinct_kernels", c.kernels},
          {"loss", c.loss}};
}

// Supervised tokens/sec on the SFT mixture: warm-up steps on the first batches, then one
// full step (micro-step + optimizer update) per batch, timed.
template <typename Step>
absl::StatusOr<nlohmann::ordered_json> TimeMixture(Step& step, const bench::MixtureBatches& mix, int warmup) {
  double seconds = 0;
  int64_t supervised = 0;
  std::vector<double> step_seconds;
  for (size_t i = 0; i < mix.batches.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<double> loss = step.MicroStep(mix.batches[i]);
    if (!loss.ok()) return loss.status();
    if (absl::Status s = step.OptimizerStep(1.0); !s.ok()) return s;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (static_cast<int>(i) < warmup) continue;
    seconds += t;
    supervised += mix.supervised_tokens[i];
    step_seconds.push_back(t);
  }
  const double timed = static_cast<double>(step_seconds.size());
  return nlohmann::ordered_json{{"step_seconds", Median(step_seconds)},
                                {"supervised_tokens_per_batch", supervised / timed},
                                {"padding_fraction", mix.padding_fraction},
                                {"supervised_tokens_per_second", supervised / seconds}};
}

/// Both packings on one path ("interpreter" or "compiled"), each with the step built for it.
absl::StatusOr<nlohmann::ordered_json> RunMixture(const std::string& path, compiler::StepConfig config, int threads,
                                                  int warmup, int steps) {
  nlohmann::ordered_json out;
  for (const data::Packing packing : {data::Packing::kPad, data::Packing::kBestFit}) {
    const char* name = packing == data::Packing::kPad ? "pad" : "bestfit";
    config.packed = packing == data::Packing::kBestFit;
    absl::StatusOr<bench::MixtureBatches> mix =
        bench::SftMixtureBatches(config.model.vocab_size, static_cast<int>(config.batch_size),
                                 static_cast<int>(config.seq_len), packing, warmup + steps);
    if (!mix.ok()) return mix.status();
    absl::StatusOr<runtime::ParamStore> store = runtime::ParamStore::Create(config.model);
    if (!store.ok()) return store.status();
    store->InitNanochat(/*seed=*/1234);
    absl::StatusOr<nlohmann::ordered_json> timed;
    if (path == "interpreter") {
      runtime::InterpreterOptions options;
      options.num_threads = threads;
      absl::StatusOr<std::unique_ptr<EagerStep>> step = EagerStep::Create(config, &*store, options);
      if (!step.ok()) return step.status();
      timed = TimeMixture(**step, *mix, warmup);
    } else {
      const std::string cache = absl::StrFormat("/tmp/gpt-sft-bench-mixture-cache-%d", getpid());
      absl::StatusOr<std::unique_ptr<DeviceStep>> step = MakeDeviceStep(config, &*store, cache, threads, false);
      RemoveScratch(cache);
      if (!step.ok()) return step.status();
      timed = TimeMixture(**step, *mix, warmup);
    }
    if (!timed.ok()) return timed.status();
    out[name] = *timed;
  }
  return out;
}

void PrintMixture(const std::string& path, const nlohmann::json& mixture) {
  std::cout << "\n" << path << " on the SFT mixture (supervised tokens: targets that carry loss):\n";
  for (const char* name : {"pad", "bestfit"}) {
    const nlohmann::json& m = mixture[name];
    std::cout << absl::StrFormat("  --packing=%-8s %8.3f s/step %8.0f supervised tok/batch %9.1f supervised tok/s  (%.1f%% padding)\n",
                                 name, m["step_seconds"].get<double>(), m["supervised_tokens_per_batch"].get<double>(),
                                 m["supervised_tokens_per_second"].get<double>(), 100 * m["padding_fraction"].get<double>());
  }
  std::cout << absl::StrFormat("  bestfit / pad: %.1fx the supervised tokens/sec\n",
                               mixture["bestfit"]["supervised_tokens_per_second"].get<double>() /
                                   mixture["pad"]["supervised_tokens_per_second"].get<double>());
}

/// The compiled run in a child process of this binary, so its peak memory is its own.
absl::StatusOr<nlohmann::json> RunCompiledInChild(int argc, char** argv) {
  std::vector<std::string> args = {"/proc/self/exe"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--path", 0) == 0 || a.rfind("--peer", 0) == 0 || a.rfind("--json", 0) == 0) continue;
    args.push_back(a);
  }
  args.insert(args.end(), {"--path=compiled", "--peer=none", "--json"});
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return absl::InternalError("cannot find this binary (/proc/self/exe)");
  args[0] = std::string(exe, n);
  absl::StatusOr<bench::ProcessResult> child = bench::RunProcess(args, bench::CurrentEnvironment());
  if (!child.ok()) return child.status();
  if (child->exit_code != 0) {
    return absl::InternalError("the compiled run failed: " + bench::Tail(child->stderr_text + child->stdout_text, 2000));
  }
  const std::string& out = child->stdout_text;
  const size_t last = out.rfind('\n', out.size() - 2);
  try {
    nlohmann::json report = nlohmann::json::parse(out.substr(last == std::string::npos ? 0 : last + 1));
    report["text"] = out.substr(0, last == std::string::npos ? 0 : last);
    return report;
  } catch (const nlohmann::json::exception& e) {
    return absl::InternalError(std::string("the compiled run printed no JSON report: ") + e.what());
  }
}

void PrintRow(const std::string& name, double median, int64_t tokens, int64_t flops_per_token, int64_t peak_bytes,
              const std::string& note) {
  std::cout << absl::StrFormat("%-34s %9.3f s %10.0f tok/s %8.1f GFLOP/s %8.2f GB  %s\n", name, median,
                               tokens / median, double(flops_per_token) * tokens / median / 1e9, peak_bytes / 1e9,
                               note);
}

/// The peer's flags, checked before our step runs (minutes) rather than after.
absl::Status CheckPeerFlags() {
  if (absl::StatusOr<std::vector<bench::PeerMode>> m = bench::ParsePeerModes(absl::GetFlag(FLAGS_peer_modes)); !m.ok()) {
    return m.status();
  }
  if (absl::StatusOr<std::vector<bench::MallocConfig>> m = bench::ParsePeerMalloc(absl::GetFlag(FLAGS_peer_malloc));
      !m.ok()) {
    return m.status();
  }
  const std::string wait_policy = absl::GetFlag(FLAGS_peer_omp_wait_policy);
  if (wait_policy != "PASSIVE" && wait_policy != "ACTIVE" && wait_policy != "inherit") {
    return absl::InvalidArgumentError("--peer_omp_wait_policy must be PASSIVE, ACTIVE or inherit, got '" + wait_policy + "'");
  }
  return absl::OkStatus();
}

/// The PyTorch peer in each of its modes on our batch, its rows, and every ratio in the report.
absl::Status RunPeer(const compiler::StepConfig& config, int threads, int warmup, int steps, const bench::OurSeconds& ours,
                     nlohmann::ordered_json& report) {
  absl::StatusOr<std::vector<bench::PeerMode>> modes = bench::ParsePeerModes(absl::GetFlag(FLAGS_peer_modes));
  if (!modes.ok()) return modes.status();
  absl::StatusOr<std::vector<bench::MallocConfig>> mallocs = bench::ParsePeerMalloc(absl::GetFlag(FLAGS_peer_malloc));
  if (!mallocs.ok()) return mallocs.status();
  bench::PeerVenvOptions venv;
  venv.base_python = absl::GetFlag(FLAGS_peer_base_python);
  absl::StatusOr<bench::PeerInterpreter> interpreter =
      bench::ChoosePeerInterpreter(absl::GetFlag(FLAGS_peer), absl::GetFlag(FLAGS_peer_python), venv);
  if (!interpreter.ok()) return interpreter.status();
  bench::PeerOptions options;
  options.depth = config.model.n_layer;
  options.n_embd = config.model.n_embd;
  options.n_head = config.model.n_head;
  options.vocab = config.model.vocab_size;
  options.batch = static_cast<int>(config.batch_size);
  options.seq = static_cast<int>(config.seq_len);
  options.threads = threads;
  options.warmup = std::max(1, warmup);  // torch.compile's first step compiles: never timed
  options.steps = steps;
  options.batch_file = absl::StrFormat("/tmp/gpt-sft-bench-batch-%d.bin", getpid());
  const std::string wait_policy = absl::GetFlag(FLAGS_peer_omp_wait_policy);
  options.omp_wait_policy = wait_policy == "inherit" ? "" : wait_policy;
  if (absl::Status s = bench::WritePeerBatch(options.batch_file, BenchBatch(config)); !s.ok()) return s;
  std::cout << "\npeer OMP_WAIT_POLICY: " << wait_policy << " (--peer_omp_wait_policy)";
  bench::PeerModesResult peer = bench::RunPeerModes(options, *interpreter, *modes, *mallocs,
                                                    config.model.FlopsPerToken(), std::cout);
  RemoveScratch(options.batch_file);
  report["torch"] = peer.json;
  report["torch"]["omp_wait_policy"] = wait_policy;
  const std::vector<std::pair<std::string, double>> speedups = bench::PeerSpeedups(ours, peer.seconds);
  std::cout << "\nratios (the other's median s/step / ours; ours at --dtype=" << compiler::DtypeName(config.dtype)
            << "):\n";
  for (const auto& [name, ratio] : speedups) {
    std::cout << absl::StrFormat("  %-44s %6.2fx\n", name, ratio);
    report[name] = ratio;
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  const std::string path = absl::GetFlag(FLAGS_path);
  if (path != "both" && path != "interpreter" && path != "compiled") {
    std::cerr << "bench: --path must be both, interpreter or compiled, got '" << path << "'\n";
    return 1;
  }
  if (const std::string peer = absl::GetFlag(FLAGS_peer); peer != "torch" && peer != "torch-debian" && peer != "none") {
    std::cerr << "bench: --peer must be torch, torch-debian or none, got '" << peer << "'\n";
    return 1;
  }
  if (absl::Status s = CheckPeerFlags(); !s.ok()) {
    std::cerr << "bench: " << s.message() << "\n";
    return 1;
  }
  absl::StatusOr<compiler::ModelConfig> model =
      compiler::ModelConfig::FromDepth(absl::GetFlag(FLAGS_depth), absl::GetFlag(FLAGS_vocab),
                                       absl::GetFlag(FLAGS_seq), absl::GetFlag(FLAGS_n_embd),
                                       absl::GetFlag(FLAGS_n_head));
  if (!model.ok()) {
    std::cerr << "bench: " << model.status().message() << "\n";
    return 1;
  }
  compiler::StepConfig config;
  config.model = *model;
  if (const std::string dtype = absl::GetFlag(FLAGS_dtype); dtype == "float32" || dtype == "bfloat16") {
    config.dtype = dtype == "bfloat16" ? compiler::ElementType::kBF16 : compiler::ElementType::kF32;
  } else {
    std::cerr << "bench: --dtype must be float32 or bfloat16, got '" << dtype << "'\n";
    return 1;
  }
  config.batch_size = absl::GetFlag(FLAGS_batch);
  config.seq_len = absl::GetFlag(FLAGS_seq);
  config.packed = absl::GetFlag(FLAGS_packed);
  const int threads = absl::GetFlag(FLAGS_threads), warmup = absl::GetFlag(FLAGS_warmup);
  const int steps = absl::GetFlag(FLAGS_steps);
  const int64_t tokens = config.batch_size * config.seq_len;
  std::cout << "config: " << config.model.ToJson() << " batch [" << config.batch_size << "," << config.seq_len
            << "] " << (config.dtype == compiler::ElementType::kBF16 ? "bfloat16 (autocast rounding)" : "float32")
            << ", " << threads << " threads, " << warmup << " warm-up + " << steps << " timed steps\n"
            << "params " << config.model.NumParams() << ", flops/token " << config.model.FlopsPerToken()
            << " (nanochat's formula); tile GEMM " << runtime::kernels::TileGemmKernelName()
            << " (bf16: " << runtime::kernels::Bf16TileKernelName() << "); CPU ISA " << CpuIsaDescription()
            << "; OPENBLAS_CORETYPE=" << (std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "(unset)")
            << "\n\n";
  nlohmann::ordered_json report;
  report["config"] = nlohmann::json::parse(config.model.ToJson());
  report["batch"] = {config.batch_size, config.seq_len};
  report["packed"] = config.packed;
  report["dtype"] = compiler::DtypeName(config.dtype);
  report["threads"] = threads;
  report["cpu_isa"] = CpuIsaDescription();
  const int64_t flops = config.model.FlopsPerToken();
  double ours_median = 0, compiled_median = 0;
  if (path != "compiled") {
    absl::StatusOr<OursResult> ours = RunOurs(config, threads, warmup, steps);
    if (!ours.ok()) {
      std::cerr << "bench: our step failed: " << ours.status().message() << "\n";
      return 1;
    }
    ours_median = Median(ours->step_seconds);
    std::cout << absl::StrFormat("%-34s %11s %16s %16s %11s\n", "ours, median of the timed steps", "time", "tokens/s",
                                 "", "peak");
    // nanochat's formula counts forward + backward (6N); the forward is a third of it.
    PrintRow("  forward (@loss)", Median(ours->forward_seconds), tokens, config.model.FlopsPerToken() / 3, ours->peak_rss,
             "RSS (FLOPs: a third of the step's)");
    PrintRow("  forward+backward (@micro_step)", Median(ours->forward_backward_seconds), tokens,
             config.model.FlopsPerToken(), ours->peak_rss, "RSS");
    PrintRow(std::string("  full step: interpreter") + (config.packed ? " (packed)" : ""), ours_median, tokens,
             config.model.FlopsPerToken(), ours->peak_rss,
             absl::StrFormat("RSS; tensors %.2f GB; %d fresh allocations; loss %.4f", ours->peak_live / 1e9,
                             ours->fresh_allocations, ours->loss));
    if (!ours->profile.empty()) {
      std::cout << "\nour step by op (per step, timed steps):\n";
      double total = 0;
      for (const runtime::OpProfileEntry& e : ours->profile) total += e.seconds;
      for (const runtime::OpProfileEntry& e : ours->profile) {
        std::cout << absl::StrFormat("  %-26s %5d calls %8.1f ms %5.1f%%\n", e.op, e.calls / steps, 1e3 * e.seconds / steps,
                                     100 * e.seconds / total);
      }
    }
    report["interpreter"] = {{"forward_seconds", Median(ours->forward_seconds)},
                             {"forward_backward_seconds", Median(ours->forward_backward_seconds)},
                             {"step_seconds", ours_median},
                             {"tokens_per_second", tokens / ours_median},
                             {"gflops_per_second", double(config.model.FlopsPerToken()) * tokens / ours_median / 1e9},
                             {"peak_rss_bytes", ours->peak_rss},
                             {"peak_tensor_bytes", ours->peak_live}};
    report["interpreter"]["matmul_kernels"] = bench::CpuMatmulKernels(config.dtype == compiler::ElementType::kBF16);
    std::cout << "  matmuls: " << report["interpreter"]["matmul_kernels"].get<std::string>() << "\n";
    if (absl::GetFlag(FLAGS_mixture)) {
      absl::StatusOr<nlohmann::ordered_json> mixture = RunMixture("interpreter", config, threads, warmup, steps);
      if (!mixture.ok()) {
        std::cerr << "bench: the interpreter on the SFT mixture failed: " << mixture.status().message() << "\n";
        return 1;
      }
      PrintMixture("interpreter", *mixture);
      report["interpreter"]["mixture"] = *mixture;
    }
  }
  if (path != "interpreter") {
    nlohmann::json compiled;
    std::string profile_text;
    if (path == "compiled") {
      absl::StatusOr<CompiledResult> c = RunCompiled(config, threads, warmup, steps);
      if (!c.ok()) {
        std::cerr << "bench: the compiled step failed: " << c.status().message() << "\n";
        return 1;
      }
      compiled = CompiledJson(*c, tokens, flops);
      if (c->device.rfind("cpu", 0) == 0) {
        compiled["matmul_kernels"] = bench::CpuMatmulKernels(config.dtype == compiler::ElementType::kBF16);
      }
      if (absl::GetFlag(FLAGS_mixture)) {
        absl::StatusOr<nlohmann::ordered_json> mixture = RunMixture("compiled", config, threads, warmup, steps);
        if (!mixture.ok()) {
          std::cerr << "bench: the compiled step on the SFT mixture failed: " << mixture.status().message() << "\n";
          return 1;
        }
        compiled["mixture"] = *mixture;
      }
      for (const runtime::device::ProfileEntry& e : c->profile) {
        profile_text += absl::StrFormat("  %-40s %5d calls %8.1f ms\n", e.label, e.calls / steps, 1e3 * e.seconds / steps);
      }
    } else {
      absl::StatusOr<nlohmann::json> child = RunCompiledInChild(argc, argv);
      if (!child.ok()) {
        std::cerr << "bench: " << child.status().message() << "\n";
        return 1;
      }
      compiled = (*child)["compiled"];
      const std::string text = (*child)["text"].get<std::string>();
      if (const size_t at = text.find("compiled step by launch"); at != std::string::npos) profile_text = text.substr(text.find('\n', at) + 1);
    }
    compiled_median = compiled["step_seconds"].get<double>();
    std::cout << "\ncompiled on " << compiled["device"].get<std::string>() << " (a child process: its own peak memory):\n";
    PrintRow("  forward+backward (@micro_step)", compiled["forward_backward_seconds"].get<double>(), tokens, flops,
             compiled["peak_rss_bytes"].get<int64_t>(), "RSS");
    PrintRow("  full step: compiled", compiled_median, tokens, flops, compiled["peak_rss_bytes"].get<int64_t>(),
             absl::StrFormat("RSS; device memory %.2f GB (arena %.2f GB); %d launches, %d distinct kernels; loss %.4f",
                             compiled["device_bytes"].get<int64_t>() / 1e9, compiled["arena_bytes"].get<int64_t>() / 1e9,
                             compiled["launches_per_micro_step"].get<int>(), compiled["distinct_kernels"].get<int>(),
                             compiled["loss"].get<double>()));
    if (compiled.contains("matmul_kernels")) {
      std::cout << "  matmuls: " << compiled["matmul_kernels"].get<std::string>() << "\n";
    }
    std::cout << absl::StrFormat("  compile: cold %.2f s, warm start (cache hit) %.3f s\n",
                                 compiled["cold_compile_seconds"].get<double>(), compiled["warm_start_seconds"].get<double>());
    if (!profile_text.empty()) std::cout << "\ncompiled step by launch (per step, timed steps):\n" << profile_text;
    if (compiled.contains("mixture")) PrintMixture("compiled", compiled["mixture"]);
    report["compiled"] = compiled;
    if (ours_median > 0) {
      std::cout << absl::StrFormat("\ncompiled vs interpreter: %.2fx faster\n", ours_median / compiled_median);
      report["speedup_compiled_vs_interpreter"] = ours_median / compiled_median;  // PeerSpeedups's too
    }
  }
  auto finish = [&]() {
    if (absl::GetFlag(FLAGS_json)) std::cout << report.dump() << "\n";
    return 0;
  };
  const std::string peer_flag = absl::GetFlag(FLAGS_peer);
  if (peer_flag == "none") return finish();
  bench::OurSeconds ours;
  if (ours_median > 0) ours.interpreter = ours_median;
  if (compiled_median > 0) ours.compiled = compiled_median;
  if (absl::Status s = RunPeer(config, threads, warmup, steps, ours, report); !s.ok()) {
    std::cerr << "bench: " << s.message() << "\n";
    return 1;
  }
  return finish();
}

}  // namespace
}  // namespace gpt_sft::trainer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "bench: the full training step, ours (interpreter and compiled) beside current PyTorch (eager and "
      "torch.compile, fp32 and bf16 autocast)");
  gpt_sft::base::ParseCommandLine(argc, argv);
  return gpt_sft::trainer::Main(argc, argv);
}

// The PyTorch peer of our full-step benchmark: runs trainer/bench/pytorch_peer.py (nanochat's GPT
// in PyTorch, eager or torch.compile, fp32 or bf16 autocast; timed full training steps) as a
// subprocess, one mode per process, and parses the one JSON line it prints. MLIR-free and
// torch-free at build time: torch is needed only when the peer runs.
#ifndef GPT_SFT_TRAINER_BENCH_PYTORCH_PEER_H_
#define GPT_SFT_TRAINER_BENCH_PYTORCH_PEER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::bench {

/// How glibc's malloc is tuned for the peer process. PyTorch's step time depends on it: with
/// stock glibc every large buffer (the [B,H,T,T] attention scores) is a fresh mmap whose pages
/// fault in again each step.
struct MallocConfig {
  std::string name;            ///< shown in tables, e.g. "glibc default"
  std::string glibc_tunables;  ///< GLIBC_TUNABLES of the child; empty: unset in the child
};

/// Stock glibc malloc (GLIBC_TUNABLES removed from the child's environment).
MallocConfig GlibcDefaultMalloc();
/// glibc told never to mmap large buffers and never to trim the heap:
/// GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=34359738368.
MallocConfig NoMmapNoTrimMalloc();
/// Both, in that order: the two configurations the benchmark reports.
std::vector<MallocConfig> PeerMallocConfigs();

/// Debian's python3, whose python3-torch (1.13) is the labelled fallback peer.
inline constexpr char kDebianPython[] = "/usr/bin/python3";

struct PeerOptions {
  std::string python = kDebianPython;  ///< a python with torch (peer_interpreter.h picks one)
  std::string script;                  ///< pytorch_peer.py; empty: FindPeerScript()
  std::string mode = "eager";          ///< eager, or compile: torch.compile(dynamic=False)
  std::string dtype = "float32";       ///< float32, or bfloat16: nanochat's bf16 autocast
  std::string batch_file;              ///< the batch to time (pytorch_peer.py's format); "": random
  int depth = 4;
  int n_embd = 256;
  int n_head = 2;
  int vocab = 8192;
  int batch = 4;
  int seq = 2048;
  int threads = 2;
  int warmup = 2;
  int steps = 3;
  int grad_accum = 1;  ///< micro-batches (forward+backward) per optimizer step
  MallocConfig malloc = GlibcDefaultMalloc();
  /// OMP_WAIT_POLICY of the child ("PASSIVE", "ACTIVE"); empty: this process's (or unset).
  /// GNU OpenMP's default spins between parallel regions; on a machine shared with other work
  /// those spinning workers make torch's step several times slower than passive waiting.
  std::string omp_wait_policy;
};

/// What one peer run measured (the script's JSON line).
struct PeerResult {
  int depth = 0, n_embd = 0, n_head = 0, vocab = 0, batch = 0, seq = 0;
  int threads = 0, warmup = 0, steps = 0;
  double step_seconds_median = 0;
  std::vector<double> step_seconds;  ///< wall seconds of the timed steps, warm-up excluded
  /// Per timed step: the process's user and system CPU seconds and minor page faults. Less
  /// noisy than wall time on a shared machine; system time is where fresh mmaps cost.
  std::vector<double> step_user_seconds;
  std::vector<double> step_system_seconds;
  std::vector<int64_t> step_minor_faults;
  double tokens_per_second = 0;
  int64_t num_params = 0;
  int64_t flops_per_token = 0;  ///< nanochat's formula, as ModelConfig::FlopsPerToken
  double gflops_per_second = 0;
  int64_t peak_rss_bytes = 0;  ///< ru_maxrss of the peer process
  std::string mode = "eager", dtype = "float32";  ///< as run (older scripts: eager float32)
  /// torch.compile's cold compile: the first step's time minus the median timed step; only in
  /// compile mode.
  std::optional<double> compile_seconds;
  std::string torch_version;
  std::string attention;  ///< "scaled_dot_product_attention", or the explicit one (torch 1.13)
  /// What torch ran on, one line: CPU capability, BLAS, and the matmul kernel of this dtype
  /// (MKL's or oneDNN's own verbose report, e.g. "oneDNN v3.13.3 ... brg_matmul:avx10_1_512_amx").
  std::string kernels;
  std::string sgemm_library;      ///< real path of the file defining the sgemm_ torch calls
  std::vector<std::string> blas;  ///< every BLAS/LAPACK file mapped into the peer, real paths
  std::string glibc_tunables;     ///< as the peer saw it
};

/// One [batch, seq] batch for the peer's --batch_file: the tokens our side times, so both run
/// the same batch. Each vector holds batch*seq values, row-major.
struct PeerBatch {
  int batch = 0, seq = 0;
  std::vector<int32_t> inputs, targets, segment_ids, positions;
};

/// Writes `b` in pytorch_peer.py's --batch_file format: int32 little-endian, the four arrays one
/// after another (inputs, targets, segment ids, positions). InvalidArgument naming the array
/// whose size is not batch*seq; an I/O error names `path`.
absl::Status WritePeerBatch(const std::string& path, const PeerBatch& b);

/// The script's exit statuses that mean a missing precondition rather than a failure.
inline constexpr int kPeerExitNoTorch = 3;
inline constexpr int kPeerExitReferenceBlas = 4;
inline constexpr int kPeerExitModeUnsupported = 5;  ///< torch.compile asked of torch 1.x
/// torch.compile's inductor found no usable vector ISA: it would generate scalar code.
inline constexpr int kPeerExitInductorScalar = 6;

/// Parses the last line of `stdout_text` that starts with '{'. `script` names the source in
/// errors. Fails (naming the script and the field) on no JSON line, bad JSON or a missing field.
absl::StatusOr<PeerResult> ParsePeerJson(const std::string& stdout_text, const std::string& script);

/// pytorch_peer.py in the runfiles of the running binary (RUNFILES_DIR, TEST_SRCDIR,
/// /proc/self/exe.runfiles, then the working directory, which `bazel run` sets to the
/// runfiles). NotFound naming every place tried.
absl::StatusOr<std::string> FindPeerScript();

/// The peer's argv: python, script, then every option as --name=value.
std::vector<std::string> PeerArgv(const PeerOptions& options, const std::string& script);

/// Runs the peer once. Errors name the script and say what failed: python missing, script
/// missing, torch missing, torch on the reference BLAS, a non-zero exit or a signal (with the
/// tail of its stderr), unparsable output. Blocks for the whole run (seconds to minutes).
absl::StatusOr<PeerResult> RunPytorchPeer(const PeerOptions& options);

}  // namespace gpt_sft::bench

#endif  // GPT_SFT_TRAINER_BENCH_PYTORCH_PEER_H_

#include "trainer/validation/torch_eager_baseline.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpt_sft::trainer::validation {
namespace {

absl::Status Missing(const std::string& what) {
  return absl::FailedPreconditionError(absl::StrCat("Test 2 has no ", what));
}

absl::StatusOr<int> ConfigInt(const base::Json& config, const char* key) {
  if (!config.is_object() || !config.contains(key) || !config[key].is_number_integer()) {
    return absl::FailedPreconditionError(absl::StrCat("the checkpoint's model_config has no integer \"", key, "\""));
  }
  return config[key].get<int>();
}

// How the python is chosen: (python, source), or why there is none.
absl::StatusOr<std::pair<std::string, std::string>> ChoosePython(const TorchEagerRequest& r, std::ostream& console) {
  if (r.python_flag == "none") return absl::FailedPreconditionError("--torch_eager=none");
  if (r.python_flag == "auto") {
    const std::string dir = bench::PeerVenvDir(r.venv);
    if (!std::filesystem::exists(dir + "/" + bench::kPeerVenvCompleteMarker)) {
      return absl::FailedPreconditionError(
          absl::StrCat("no PyTorch peer venv at ", dir,
                       " (`./bazelw run //trainer:bench` makes it once; or pass "
                       "--torch_eager=venv to make it now, or --torch_eager=PATH for a python with torch)"));
    }
    return std::pair{dir + "/bin/python", absl::StrCat("the bench's torch ", r.venv.torch_version, " venv")};
  }
  if (r.python_flag == "venv") {
    bench::PeerVenvOptions venv = r.venv;
    venv.progress = &console;
    absl::StatusOr<std::string> python = bench::EnsurePeerVenv(venv);
    if (!python.ok()) return python.status();
    return std::pair{*python, absl::StrCat("the bench's torch ", r.venv.torch_version, " venv")};
  }
  return std::pair{r.python_flag, "--torch_eager=" + r.python_flag};
}

}  // namespace

absl::StatusOr<bench::PeerOptions> TorchEagerPeerOptions(const base::Json& model_config, const TestRun& compiled,
                                                         const std::string& dtype) {
  bench::PeerOptions o;
  for (auto [key, out] : {std::pair{"n_layer", &o.depth}, std::pair{"n_embd", &o.n_embd},
                          std::pair{"n_head", &o.n_head}, std::pair{"vocab_size", &o.vocab}}) {
    absl::StatusOr<int> v = ConfigInt(model_config, key);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  absl::StatusOr<int> kv = ConfigInt(model_config, "n_kv_head");
  if (kv.ok() && *kv != o.n_head) {
    return absl::FailedPreconditionError(
        absl::StrCat("the peer runs n_kv_head = n_head, the model has ", *kv, " kv heads for ", o.n_head));
  }
  if (compiled.figures.batch_shapes.size() != 1) return Missing("single micro-batch shape");
  o.batch = static_cast<int>(compiled.figures.batch_shapes[0][0]);
  o.seq = static_cast<int>(compiled.figures.batch_shapes[0][1]);
  if (compiled.steps.empty() || compiled.steps.back().tokens <= 0) return Missing("tokens per step");
  const int64_t per_micro = int64_t{o.batch} * o.seq;
  const int64_t tokens = compiled.steps.back().tokens;
  if (per_micro <= 0 || tokens % per_micro != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Test 2's ", tokens, " tokens per step are not a whole number of [", o.batch, ", ", o.seq, "] micro-batches"));
  }
  o.grad_accum = static_cast<int>(tokens / per_micro);
  if (!compiled.summary || !compiled.summary->num_threads) return Missing("thread count in its run summary");
  o.threads = *compiled.summary->num_threads;
  o.dtype = dtype.rfind("bfloat16", 0) == 0 ? "bfloat16" : "float32";
  o.mode = "eager";
  return o;
}

TorchEagerBaseline MeasureTorchEager(const TorchEagerRequest& request, const base::Json& model_config,
                                     const TestRun* compiled, const std::string& dtype, std::ostream& console) {
  TorchEagerBaseline b;
  auto not_measured = [&](const absl::Status& why) {
    b.measured = false;
    b.why_not = std::string(why.message());
    console << "validate: PyTorch eager baseline not measured: " << b.why_not << std::endl;
    return b;
  };
  if (request.python_flag == "none") return not_measured(absl::FailedPreconditionError("--torch_eager=none"));
  if (compiled == nullptr) return not_measured(absl::FailedPreconditionError("Test 2 did not run"));
  absl::StatusOr<bench::PeerOptions> options = TorchEagerPeerOptions(model_config, *compiled, dtype);
  if (!options.ok()) return not_measured(options.status());
  absl::StatusOr<std::pair<std::string, std::string>> python = ChoosePython(request, console);
  if (!python.ok()) return not_measured(python.status());
  options->python = python->first;
  options->script = request.script;
  options->warmup = request.warmup;
  options->steps = request.steps;
  options->omp_wait_policy = "PASSIVE";  // as the bench: spinning OpenMP workers distort a shared machine
  b.python = python->first;
  b.source = python->second;
  b.dtype = options->dtype;
  b.batch = options->batch;
  b.seq = options->seq;
  b.grad_accum = options->grad_accum;
  b.threads = options->threads;
  b.warmup = options->warmup;
  b.steps = options->steps;
  console
      << absl::StrFormat(
             "\n=== PyTorch eager baseline (nanochat's model): [%d, %d] x %d micro-batches, %d threads, %s, %s ===\n",
             b.batch, b.seq, b.grad_accum, b.threads, b.dtype, b.python)
      << std::flush;
  if (options->script.empty()) {
    absl::StatusOr<std::string> script = bench::FindPeerScript();
    if (!script.ok()) return not_measured(script.status());
    options->script = *script;
  }
  b.command = bench::PeerArgv(*options, options->script);
  absl::StatusOr<bench::PeerResult> r = bench::RunPytorchPeer(*options);
  if (!r.ok()) return not_measured(r.status());
  b.measured = true;
  b.torch_version = r->torch_version;
  b.attention = r->attention;
  b.kernels = r->kernels;
  b.seconds_per_step = r->step_seconds_median;
  b.peak_rss_bytes = r->peak_rss_bytes;
  console << absl::StrFormat("validate: PyTorch %s eager: %.1f ms/step (median of %d)\n", b.torch_version,
                             1e3 * *b.seconds_per_step, b.steps)
          << std::flush;
  return b;
}

}  // namespace gpt_sft::trainer::validation

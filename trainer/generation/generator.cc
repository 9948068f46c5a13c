// Implements Generator: the decoder module is built once; each call binds the ParamStore's
// weights as views, and the caches returned by one call are the arguments of the next
// (moved in, so the interpreter holds their only reference).
#include "trainer/generation/generator.h"

#include <chrono>
#include <string>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "compiler/builder/decode_builder.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/interpreter/interpreter.h"

namespace gpt_sft::trainer {

using runtime::DType;
using runtime::Tensor;

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

struct Generator::Impl {
  const runtime::ParamStore* params = nullptr;
  compiler::ModelConfig model;
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<runtime::Interpreter> interpreter;
  std::vector<Tensor> cache;  // k_cache/0, v_cache/0, ... [1, length, Hkv, D]
  int64_t length = 0;
  GenerateStats stats;

  std::vector<Tensor> Args() const {
    std::vector<Tensor> args;
    for (const runtime::Param& p : params->params()) args.push_back(Tensor::View(DType::kF32, p.shape, p.data()));
    return args;
  }

  absl::Status CheckTokens(absl::Span<const int32_t> tokens, const char* what) const {
    if (tokens.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": no tokens"));
    for (int32_t t : tokens) {
      if (t < 0 || t >= model.vocab_size) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": token id ", t, " is outside the model's vocabulary [0, ", model.vocab_size, ")"));
      }
    }
    const int64_t limit = 10LL * model.sequence_len;
    if (length + static_cast<int64_t>(tokens.size()) > limit) {
      return absl::OutOfRangeError(absl::StrCat(what, ": the sequence would hold ", length + tokens.size(),
                                                " positions, more than 10 x sequence_len = ", limit));
    }
    return absl::OkStatus();
  }

  /// Logits out, caches kept.
  absl::StatusOr<Tensor> Keep(absl::StatusOr<std::vector<Tensor>> results, int64_t new_length) {
    if (!results.ok()) return results.status();
    Tensor logits = (*results)[0];
    cache.assign(std::make_move_iterator(results->begin() + 1), std::make_move_iterator(results->end()));
    length = new_length;
    return logits;
  }
};

Generator::Generator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Generator::~Generator() = default;

absl::StatusOr<std::unique_ptr<Generator>> Generator::Create(const runtime::ParamStore& params,
                                                             const GeneratorOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->params = &params;
  impl->model = params.config();
  impl->context = std::make_unique<mlir::MLIRContext>();
  compiler::DecodeConfig config;
  config.model = params.config();
  auto module = compiler::BuildDecodeModule(*impl->context, config);
  if (!module.ok()) return module.status();
  impl->module = *std::move(module);
  runtime::InterpreterOptions interpreter_options;
  interpreter_options.num_threads = options.num_threads;
  impl->interpreter = std::make_unique<runtime::Interpreter>(*impl->module, interpreter_options);
  return std::unique_ptr<Generator>(new Generator(std::move(impl)));
}

int64_t Generator::length() const { return impl_->length; }
const GenerateStats& Generator::last_stats() const { return impl_->stats; }

absl::StatusOr<Tensor> Generator::Prefill(absl::Span<const int32_t> tokens) {
  impl_->cache.clear();
  impl_->length = 0;
  if (absl::Status s = impl_->CheckTokens(tokens, "prefill"); !s.ok()) return s;
  const int64_t T = static_cast<int64_t>(tokens.size());
  std::vector<Tensor> args = impl_->Args();
  args.push_back(Tensor::FromVector<int32_t>({1, T}, std::vector<int32_t>(tokens.begin(), tokens.end())));
  return impl_->Keep(impl_->interpreter->Run(compiler::kPrefillFunction, std::move(args)), T);
}

absl::StatusOr<Tensor> Generator::Extend(absl::Span<const int32_t> tokens) {
  if (impl_->length == 0) return absl::FailedPreconditionError("extend: no sequence yet (call Prefill first)");
  if (absl::Status s = impl_->CheckTokens(tokens, "extend"); !s.ok()) return s;
  const int64_t T = static_cast<int64_t>(tokens.size()), start = impl_->length;
  std::vector<int32_t> positions(T);
  for (int64_t i = 0; i < T; ++i) positions[i] = static_cast<int32_t>(start + i);
  std::vector<Tensor> args = impl_->Args();
  args.push_back(Tensor::FromVector<int32_t>({1, T}, std::vector<int32_t>(tokens.begin(), tokens.end())));
  args.push_back(Tensor::FromVector<int32_t>({1, T}, positions));
  for (Tensor& c : impl_->cache) args.push_back(std::move(c));
  impl_->cache.clear();
  impl_->length = 0;  // restored by Keep; a failed call leaves no sequence
  return impl_->Keep(impl_->interpreter->Run(compiler::kDecodeFunction, std::move(args)), start + T);
}

absl::StatusOr<std::vector<int32_t>> Generator::Generate(absl::Span<const int32_t> prompt,
                                                         const GenerateOptions& options) {
  if (absl::Status s = options.sampling.Validate(); !s.ok()) return s;
  if (options.max_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--max_tokens must be >= 0, got ", options.max_tokens));
  }
  GenerateStats& stats = impl_->stats;
  stats = GenerateStats{static_cast<int64_t>(prompt.size())};
  auto start = std::chrono::steady_clock::now();
  auto logits = Prefill(prompt);
  if (!logits.ok()) return logits.status();
  stats.prefill_seconds = SecondsSince(start);
  start = std::chrono::steady_clock::now();
  Sampler sampler(options.sampling);
  const int64_t V = impl_->model.vocab_size;
  std::vector<int32_t> generated, code;  // code: the tokens of an open python block
  bool in_python = false;
  while (static_cast<int>(generated.size()) < options.max_tokens) {
    const float* last = logits->data<float>() + (logits->dim(1) - 1) * V;
    const int32_t token = sampler.Next(absl::MakeConstSpan(last, V));
    if (absl::c_linear_search(options.stop_tokens, token)) break;
    std::vector<int32_t> next = {token};
    if (options.tool) {
      const ToolUse& tool = *options.tool;
      if (token == tool.python_start) {
        in_python = true;
        code.clear();
      } else if (token == tool.python_end && in_python) {
        in_python = false;
        if (std::optional<std::vector<int32_t>> output = tool.run(code)) {
          next.push_back(tool.output_start);
          next.insert(next.end(), output->begin(), output->end());
          next.push_back(tool.output_end);
        }
      } else if (in_python) {
        code.push_back(token);
      }
    }
    const size_t room = options.max_tokens - generated.size();
    if (next.size() > room) next.resize(room);
    generated.insert(generated.end(), next.begin(), next.end());
    if (static_cast<int>(generated.size()) == options.max_tokens) break;  // no logits needed
    logits = Extend(next);  // a forced tool output goes in as one chunk
    if (!logits.ok()) return logits.status();
    ++stats.decoded_tokens;
  }
  stats.decode_seconds = SecondsSince(start);
  return generated;
}

}  // namespace gpt_sft::trainer

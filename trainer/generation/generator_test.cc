// The KV-cache decoder against the full forward: the logits of @prefill, of one-token
// @decode steps and of a chunked @decode all equal @logits of the builder over the whole
// sequence (1e-5 relative) at every position; greedy generation equals nanochat's naive
// GPT.generate (argmax of a full forward per token); determinism of greedy, top_k = 1 ==
// greedy, same seed same tokens; stop tokens and max_tokens; errors.
#include "trainer/generation/generator.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "compiler/builder/step_builder.h"
#include "gtest/gtest.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/interpreter/interpreter.h"

namespace gpt_sft::trainer {
namespace {

using runtime::DType;
using runtime::Tensor;

compiler::ModelConfig TinyModel() {
  // 2 layers, width 64, 4 query heads over 2 kv heads (GQA), vocabulary 97.
  return *compiler::ModelConfig::FromDepth(2, 97, 32, 64, 4, 2);
}

runtime::ParamStore RandomStore() {
  auto store = runtime::ParamStore::Create(TinyModel());
  EXPECT_TRUE(store.ok()) << store.status();
  store->InitNanochat(7, /*zero_output_projections=*/false);  // non-trivial logits
  return *std::move(store);
}

/// @logits of the training step's builder over the whole sequence: [T, V].
class FullForward {
 public:
  explicit FullForward(const runtime::ParamStore& store) : store_(store) {
    compiler::StepConfig config;
    config.model = store.config();
    config.batch_size = 1;
    config.seq_len = compiler::kDynamicDim;
    auto module = compiler::BuildStepModule(context_, config);
    EXPECT_TRUE(module.ok()) << module.status();
    module_ = *std::move(module);
    interpreter_ = std::make_unique<runtime::Interpreter>(*module_);
  }

  std::vector<float> Logits(const std::vector<int32_t>& tokens) {
    std::vector<Tensor> args;
    for (const runtime::Param& p : store_.params()) args.push_back(Tensor::View(DType::kF32, p.shape, p.data()));
    args.push_back(Tensor::FromVector<int32_t>({1, static_cast<int64_t>(tokens.size())}, tokens));
    auto results = interpreter_->Run(compiler::kLogitsFunction, std::move(args));
    EXPECT_TRUE(results.ok()) << results.status();
    return results.ok() ? (*results)[0].ToVector<float>() : std::vector<float>{};
  }

 private:
  const runtime::ParamStore& store_;
  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::unique_ptr<runtime::Interpreter> interpreter_;
};

/// max |a - b| / max(1, max |b|) over row `row` of both.
double RowError(const float* a, const float* b, int64_t V) {
  double err = 0, scale = 1;
  for (int64_t v = 0; v < V; ++v) {
    err = std::max(err, std::abs(double(a[v]) - double(b[v])));
    scale = std::max(scale, std::abs(double(b[v])));
  }
  return err / scale;
}

std::vector<int32_t> Sequence() {
  std::vector<int32_t> tokens;
  for (int i = 0; i < 20; ++i) tokens.push_back((i * 37 + 11) % 97);
  return tokens;
}

TEST(Generator, CachedLogitsEqualTheFullForwardAtEveryPosition) {
  const runtime::ParamStore store = RandomStore();
  const std::vector<int32_t> tokens = Sequence();
  const int64_t V = store.config().vocab_size, T = tokens.size();
  const std::vector<float> full = FullForward(store).Logits(tokens);
  ASSERT_EQ(static_cast<int64_t>(full.size()), T * V);

  auto gen = Generator::Create(store);
  ASSERT_TRUE(gen.ok()) << gen.status();
  // 6 prompt tokens, 3 single steps, a chunk of 4 (chunked prefill), then single steps.
  std::vector<std::vector<int32_t>> pieces = {{tokens.begin(), tokens.begin() + 6}};
  for (int i = 6; i < 9; ++i) pieces.push_back({tokens[i]});
  pieces.push_back({tokens.begin() + 9, tokens.begin() + 13});
  for (int i = 13; i < T; ++i) pieces.push_back({tokens[i]});
  int64_t position = 0;
  for (size_t p = 0; p < pieces.size(); ++p) {
    auto logits = p == 0 ? (*gen)->Prefill(pieces[p]) : (*gen)->Extend(pieces[p]);
    ASSERT_TRUE(logits.ok()) << logits.status();
    ASSERT_EQ(logits->shape(), (runtime::Shape{1, static_cast<int64_t>(pieces[p].size()), V}));
    for (size_t i = 0; i < pieces[p].size(); ++i, ++position) {
      EXPECT_LT(RowError(logits->data<float>() + i * V, full.data() + position * V, V), 1e-5)
          << "position " << position << " (piece " << p << ")";
    }
    EXPECT_EQ((*gen)->length(), position);
  }
  // The prefill's logits are the full forward's bit for bit (same kernels, same order).
  auto prefill = (*gen)->Prefill(tokens);
  ASSERT_TRUE(prefill.ok());
  EXPECT_EQ(prefill->ToVector<float>(), full);
}

TEST(Generator, GreedyEqualsTheNaiveSamplerAndIsDeterministic) {
  const runtime::ParamStore store = RandomStore();
  auto gen = Generator::Create(store);
  ASSERT_TRUE(gen.ok()) << gen.status();
  const std::vector<int32_t> prompt = {3, 14, 15, 92, 65};
  GenerateOptions options;
  options.max_tokens = 12;
  auto greedy = (*gen)->Generate(prompt, options);
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  ASSERT_EQ(greedy->size(), 12u);
  EXPECT_EQ((*gen)->last_stats().prompt_tokens, 5);
  EXPECT_EQ((*gen)->last_stats().decoded_tokens, 11);

  // nanochat's GPT.generate: a full forward of the whole sequence per token, argmax.
  FullForward full(store);
  std::vector<int32_t> sequence = prompt;
  const int64_t V = store.config().vocab_size;
  for (int i = 0; i < 12; ++i) {
    const std::vector<float> logits = full.Logits(sequence);
    sequence.push_back(Argmax(absl::MakeConstSpan(logits.data() + (sequence.size() - 1) * V, V)));
  }
  EXPECT_EQ(*greedy, std::vector<int32_t>(sequence.begin() + prompt.size(), sequence.end()));

  auto again = (*gen)->Generate(prompt, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *greedy);

  options.sampling.temperature = 1.0;
  options.sampling.top_k = 1;
  auto top1 = (*gen)->Generate(prompt, options);
  ASSERT_TRUE(top1.ok());
  EXPECT_EQ(*top1, *greedy);
}

TEST(Generator, SameSeedSameTokensOtherSeedOtherTokens) {
  const runtime::ParamStore store = RandomStore();
  auto gen = Generator::Create(store);
  ASSERT_TRUE(gen.ok()) << gen.status();
  GenerateOptions options;
  options.max_tokens = 24;
  options.sampling = {1.0, 0, 123};
  auto a = (*gen)->Generate({1, 2, 3}, options);
  auto b = (*gen)->Generate({1, 2, 3}, options);
  options.sampling.seed = 124;
  auto c = (*gen)->Generate({1, 2, 3}, options);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);  // 24 draws over 97 tokens: a collision is (practically) impossible
  options.sampling.top_k = 5;
  auto d = (*gen)->Generate({1, 2, 3}, options);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->size(), 24u);
}

TEST(Generator, StopsAtAStopTokenAndAtMaxTokens) {
  const runtime::ParamStore store = RandomStore();
  auto gen = Generator::Create(store);
  ASSERT_TRUE(gen.ok()) << gen.status();
  GenerateOptions options;
  options.max_tokens = 8;
  auto greedy = (*gen)->Generate({5, 6}, options);
  ASSERT_TRUE(greedy.ok());
  options.stop_tokens = {(*greedy)[3]};
  auto stopped = (*gen)->Generate({5, 6}, options);
  ASSERT_TRUE(stopped.ok());
  const size_t first = std::find(greedy->begin(), greedy->end(), (*greedy)[3]) - greedy->begin();
  EXPECT_EQ(*stopped, std::vector<int32_t>(greedy->begin(), greedy->begin() + first));
  options.stop_tokens.clear();
  options.max_tokens = 0;
  auto none = (*gen)->Generate({5, 6}, options);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(Generator, AToolForcesItsOutputAfterAPythonBlock) {
  const runtime::ParamStore store = RandomStore();
  auto gen = Generator::Create(store);
  ASSERT_TRUE(gen.ok()) << gen.status();
  const std::vector<int32_t> prompt = {9, 8, 7};
  GenerateOptions options;
  options.max_tokens = 16;
  auto greedy = (*gen)->Generate(prompt, options);
  ASSERT_TRUE(greedy.ok());
  // Pretend greedy[i] opens a python block and greedy[i + 2] closes it.
  size_t i = 0;
  while (i + 2 < greedy->size() &&
         ((*greedy)[i] == (*greedy)[i + 2] || (*greedy)[i + 1] == (*greedy)[i] || (*greedy)[i + 1] == (*greedy)[i + 2]))
    ++i;
  ASSERT_LT(i + 2, greedy->size()) << "the random model's greedy reply has no usable three tokens";
  std::vector<int32_t> seen_code;
  ToolUse tool;
  tool.python_start = (*greedy)[i];
  tool.python_end = (*greedy)[i + 2];
  tool.output_start = 90;
  tool.output_end = 91;
  tool.run = [&](const std::vector<int32_t>& code) -> std::optional<std::vector<int32_t>> {
    seen_code = code;
    return std::vector<int32_t>{70, 71};
  };
  options.tool = tool;
  auto with_tool = (*gen)->Generate(prompt, options);
  ASSERT_TRUE(with_tool.ok()) << with_tool.status();
  ASSERT_GE(with_tool->size(), i + 7);
  EXPECT_EQ(std::vector<int32_t>(with_tool->begin(), with_tool->begin() + i + 3),
            std::vector<int32_t>(greedy->begin(), greedy->begin() + i + 3));
  EXPECT_EQ(seen_code, std::vector<int32_t>{(*greedy)[i + 1]});
  EXPECT_EQ(std::vector<int32_t>(with_tool->begin() + i + 3, with_tool->begin() + i + 7),
            (std::vector<int32_t>{90, 70, 71, 91}));
  // What follows is the greedy continuation (the tool still on) of the sequence with the
  // forced tokens in it.
  std::vector<int32_t> sequence = prompt;
  sequence.insert(sequence.end(), with_tool->begin(), with_tool->begin() + i + 7);
  GenerateOptions plain = options;
  plain.max_tokens = static_cast<int>(with_tool->size() - (i + 7));
  auto continuation = (*gen)->Generate(sequence, plain);
  ASSERT_TRUE(continuation.ok());
  EXPECT_EQ(*continuation, std::vector<int32_t>(with_tool->begin() + i + 7, with_tool->end()));
  EXPECT_EQ(with_tool->size(), 16u);  // forced tokens count toward max_tokens
}

TEST(Generator, ErrorsNameTheProblem) {
  const runtime::ParamStore store = RandomStore();
  auto gen = Generator::Create(store);
  ASSERT_TRUE(gen.ok()) << gen.status();
  EXPECT_EQ((*gen)->Extend({1}).status().code(), absl::StatusCode::kFailedPrecondition);
  auto bad = (*gen)->Prefill({1, 97});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("token id 97"), std::string::npos) << bad.status();
  GenerateOptions options;
  options.sampling.temperature = -1;
  auto negative = (*gen)->Generate({1}, options);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(std::string(negative.status().message()).find("--temperature"), std::string::npos);
  options.sampling.temperature = 0;
  options.max_tokens = 1000;  // 10 x sequence_len = 320 positions
  auto too_long = (*gen)->Generate({1}, options);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(std::string(too_long.status().message()).find("10 x sequence_len"), std::string::npos);
}

}  // namespace
}  // namespace gpt_sft::trainer

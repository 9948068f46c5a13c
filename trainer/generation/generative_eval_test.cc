// RunGenerativeEval on a tiny random model and tokenizer: it counts the first N problems,
// scores with the task's Evaluate on the decoded reply (a task that accepts the greedy
// reply itself passes every problem; SimpleSpelling on a random model passes none), and
// errors name the task and problem.
#include "trainer/generation/generative_eval.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "data/conversation/render.h"
#include "data/tasks/spelling_tasks.h"
#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

data::Tokenizer TinyTokenizer() {
  auto tok = data::Tokenizer::Train({"spell the word: apple banana cherry", "a:p,p,l,e b:a,n,a,n,a"}, 300);
  EXPECT_TRUE(tok.ok()) << tok.status();
  return *std::move(tok);
}

runtime::ParamStore RandomStore(int vocab_size) {
  auto store = runtime::ParamStore::Create(*compiler::ModelConfig::FromDepth(1, vocab_size, 64, 32, 2));
  EXPECT_TRUE(store.ok()) << store.status();
  store->InitNanochat(3, /*zero_output_projections=*/false);
  return *std::move(store);
}

/// Problem i asks "q<i>"; Evaluate passes when the reply is what greedy decoding writes.
class EchoTask : public data::Task {
 public:
  EchoTask(const data::Tokenizer& tok, Generator& gen, int64_t n) : tok_(tok), gen_(gen), n_(n) {}
  std::string name() const override { return "Echo"; }
  data::EvalType eval_type() const override { return data::EvalType::kGenerative; }
  int64_t num_examples() const override { return n_; }
  absl::StatusOr<data::Example> GetExample(int64_t i) const override {
    data::Example ex;
    ex.conversation.messages = {data::Message::User(absl::StrCat("q", i)), data::Message::Assistant("?")};
    return ex;
  }
  bool Evaluate(const data::Example& ex, std::string_view completion) const override {
    // Recompute here with an independent Generate call: the eval must pass exactly this.
    auto prompt = data::RenderForCompletion(ex.conversation, tok_);
    GenerateOptions options;
    options.max_tokens = 6;
    options.stop_tokens = {tok_.SpecialId(data::SpecialToken::kAssistantEnd), tok_.SpecialId(data::SpecialToken::kBos)};
    auto reply = gen_.Generate(*prompt, options);
    return reply.ok() && completion == tok_.Decode(*reply);
  }

 private:
  const data::Tokenizer& tok_;
  Generator& gen_;
  int64_t n_;
};

TEST(GenerativeEval, ScoresTheDecodedReplyOfTheFirstNProblems) {
  const data::Tokenizer tok = TinyTokenizer();
  const runtime::ParamStore store = RandomStore(tok.vocab_size());
  auto gen = Generator::Create(store);
  ASSERT_TRUE(gen.ok()) << gen.status();
  EchoTask task(tok, **gen, 10);
  GenerativeEvalOptions options;
  options.max_problems = 4;
  options.max_tokens = 6;
  options.use_calculator = false;  // EchoTask regenerates without the tool
  auto result = RunGenerativeEval(task, tok, **gen, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->task, "Echo");
  EXPECT_EQ(result->total, 4);
  EXPECT_EQ(result->passed, 4);
  EXPECT_DOUBLE_EQ(result->accuracy(), 1.0);
  EXPECT_NE(FormatGenerativeEval(*result).find("Echo: 4/4 = 100.00% exact match"), std::string::npos);
}

TEST(GenerativeEval, ARandomModelCannotSpell) {
  const data::Tokenizer tok = TinyTokenizer();
  const runtime::ParamStore store = RandomStore(tok.vocab_size());
  auto gen = Generator::Create(store);
  ASSERT_TRUE(gen.ok()) << gen.status();
  auto words = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"apple", "banana", "kiwi"});
  data::SimpleSpellingTask spelling(words, 50, data::Split::kTest);
  GenerativeEvalOptions options;
  options.max_problems = 3;
  options.max_tokens = 8;
  auto result = RunGenerativeEval(spelling, tok, **gen, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->total, 3);
  EXPECT_EQ(result->passed, 0);
  data::SpellingBeeTask bee(words, 50, data::Split::kTest);
  result = RunGenerativeEval(bee, tok, **gen, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->total, 3);
}

TEST(GenerativeEval, ErrorsNameTheTaskAndProblem) {
  const data::Tokenizer tok = TinyTokenizer();
  // A model whose vocabulary is smaller than the tokenizer's: the prompt's special ids do not fit.
  const runtime::ParamStore store = RandomStore(100);
  auto gen = Generator::Create(store);
  ASSERT_TRUE(gen.ok()) << gen.status();
  auto words = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"apple"});
  data::SimpleSpellingTask spelling(words, 5, data::Split::kTest);
  auto result = RunGenerativeEval(spelling, tok, **gen, {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(std::string(result.status().message()).find("SimpleSpelling problem 0"), std::string::npos)
      << result.status();
  EXPECT_FALSE(RunGenerativeEval(spelling, tok, **gen, {0}).ok());
}

}  // namespace
}  // namespace gpt_sft::trainer

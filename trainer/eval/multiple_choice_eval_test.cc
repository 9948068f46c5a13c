#include "trainer/eval/multiple_choice_eval.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "data/conversation/render.h"
#include "data/tasks/multiple_choice_task.h"
#include "data/tasks/synthetic_multiple_choice.h"
#include "gtest/gtest.h"
#include "runtime/params/param_store.h"
#include "trainer/batch_tensors.h"
#include "trainer/eager_step.h"
#include "trainer/eval/logits_evaluator.h"

namespace gpt_sft::trainer {
namespace {

const data::Tokenizer& TestTokenizer() {
  static const data::Tokenizer* tok = [] {
    const std::string text =
        "Multiple Choice question: What is 12 + 30? Which of these numbers is the largest? "
        "Respond only with the letter of the correct answer. The quick brown fox jumps over the lazy dog. "
        "0123456789 A B C D = - + * ";
    return new data::Tokenizer(*data::Tokenizer::Train({text, text}, 300));
  }();
  return *tok;
}

runtime::ParamStore TinyModel(bool zero_output_projections, uint64_t seed = 3) {
  compiler::ModelConfig config = *compiler::ModelConfig::FromDepth(1, TestTokenizer().vocab_size(), 256, 32, 2);
  runtime::ParamStore params = *runtime::ParamStore::Create(config);
  params.InitNanochat(seed, zero_output_projections);
  return params;
}

TEST(PickLetter, ArgmaxOverLettersOnlyFirstWinsTies) {
  std::vector<float> logits = {9, 1, 5, 3, 5, 0};
  EXPECT_EQ(PickLetter(logits, {1, 2, 3}), 1);  // id 0 has the largest logit but is no letter
  EXPECT_EQ(PickLetter(logits, {3, 4, 2}), 1);  // 5 at ids 4 and 2: the first listed wins
  EXPECT_EQ(PickLetter(logits, {5, 1}), 1);
  EXPECT_EQ(PickLetter(logits, {0}), 0);
}

TEST(LetterTokenIds, OneTokenPerLetterElseNamed) {
  absl::StatusOr<std::vector<int32_t>> ids = LetterTokenIds(TestTokenizer(), {"A", "B", "C", "D"});
  ASSERT_TRUE(ids.ok()) << ids.status();
  for (size_t k = 0; k < ids->size(); ++k) EXPECT_EQ(TestTokenizer().Decode({(*ids)[k]}), std::string(1, 'A' + k));
  ids = LetterTokenIds(TestTokenizer(), {"A", "q~Z!"});
  ASSERT_FALSE(ids.ok());
  EXPECT_NE(ids.status().message().find("\"q~Z!\""), absl::string_view::npos) << ids.status();
}

TEST(LogitsEvaluator, MatchesTheLossPathAndIsCausal) {
  runtime::ParamStore params = TinyModel(/*zero_output_projections=*/false);
  absl::StatusOr<std::unique_ptr<LogitsEvaluator>> eval = LogitsEvaluator::Create(&params);
  ASSERT_TRUE(eval.ok()) << eval.status();
  const std::vector<int32_t> ids = TestTokenizer().Encode("What is 12 + 30? The quick brown fox.");
  const int64_t T = static_cast<int64_t>(ids.size()) - 1;
  const int V = params.config().vocab_size;
  std::vector<int32_t> inputs(ids.begin(), ids.end() - 1);
  absl::StatusOr<runtime::Tensor> logits = (*eval)->Logits(inputs);
  ASSERT_TRUE(logits.ok()) << logits.status();
  ASSERT_EQ(logits->shape(), (runtime::Shape{T, V}));

  // Cross entropy of these logits, by hand, equals the step's @loss on the same row.
  double ce = 0;
  for (int64_t t = 0; t < T; ++t) {
    const float* row = logits->data<float>() + t * V;
    double max = *std::max_element(row, row + V), sum = 0;
    for (int v = 0; v < V; ++v) sum += std::exp(double(row[v]) - max);
    ce += max + std::log(sum) - row[ids[t + 1]];
    for (int v = 0; v < V; ++v) ASSERT_LE(std::abs(row[v]), 15.0f);  // softcapped
  }
  ce /= T;
  compiler::StepConfig config;
  config.model = params.config();
  config.batch_size = 1;
  config.seq_len = T;
  absl::StatusOr<std::unique_ptr<EagerStep>> step = EagerStep::Create(config, &params);
  ASSERT_TRUE(step.ok()) << step.status();
  data::Batch batch = data::NewBatch(1, static_cast<int>(T));
  for (int64_t t = 0; t < T; ++t) batch.inputs[t] = ids[t], batch.targets[t] = ids[t + 1], batch.positions[t] = t;
  absl::StatusOr<double> loss = (*step)->Loss(ToStepBatch(batch, false));
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_NEAR(ce, *loss, 1e-5 * *loss);
  EXPECT_GT(std::abs(*loss - std::log(double(V))), 1e-3);  // not the trivial uniform model

  // A prefix of another length runs through the same module and sees only its past.
  std::vector<int32_t> prefix(inputs.begin(), inputs.begin() + 5);
  absl::StatusOr<runtime::Tensor> short_logits = (*eval)->Logits(prefix);
  ASSERT_TRUE(short_logits.ok()) << short_logits.status();
  for (int64_t i = 0; i < 5 * V; ++i) ASSERT_NEAR(short_logits->data<float>()[i], logits->data<float>()[i], 1e-4) << i;

  EXPECT_FALSE((*eval)->Logits({}).ok());
  absl::StatusOr<runtime::Tensor> bad = (*eval)->Logits({1, V});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("at position 1"), absl::string_view::npos) << bad.status();
}

TEST(EvaluateMultipleChoice, ZeroLmHeadTiesPickTheFirstLetter) {
  runtime::ParamStore params = TinyModel(/*zero_output_projections=*/true);
  auto eval = *LogitsEvaluator::Create(&params);
  data::SyntheticMultipleChoiceTask task(60, 11);
  int64_t first_is_answer = 0;
  for (int64_t i = 0; i < 40; ++i) {
    data::Example ex = *task.Get(i);
    first_is_answer += ex.answer == ex.letters[0];
  }
  int64_t calls = 0, last_correct = -1;
  absl::StatusOr<MultipleChoiceResult> r =
      EvaluateMultipleChoice(*eval, task, TestTokenizer(), 40, [&](int64_t done, int64_t total, int64_t correct) {
        EXPECT_EQ(done, ++calls);
        EXPECT_EQ(total, 40);
        last_correct = correct;
      });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(calls, 40);
  EXPECT_EQ(last_correct, r->correct);
  EXPECT_EQ(r->problems, 40);
  EXPECT_GT(first_is_answer, 0);  // the case tells ties-pick-first apart from always-right/wrong
  EXPECT_LT(first_is_answer, 40);
  EXPECT_EQ(r->correct, first_is_answer);
  EXPECT_DOUBLE_EQ(r->accuracy, first_is_answer / 40.0);
}

TEST(EvaluateMultipleChoice, RandomModelAgreesWithTheLettersArgmaxAndIsNearChance) {
  runtime::ParamStore params = TinyModel(/*zero_output_projections=*/false);
  auto eval = *LogitsEvaluator::Create(&params);
  data::SyntheticMultipleChoiceTask task(100, 5);
  absl::StatusOr<MultipleChoiceResult> r = EvaluateMultipleChoice(*eval, task, TestTokenizer(), -1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->problems, 100);
  // The same scoring, written out: the last position's logits of the letter tokens.
  int64_t correct = 0;
  for (int64_t i = 0; i < 100; ++i) {
    data::Example ex = *task.Get(i);
    std::vector<int32_t> prompt = *data::RenderForCompletion(ex.conversation, TestTokenizer());
    ASSERT_EQ(prompt.back(), TestTokenizer().SpecialId(data::SpecialToken::kAssistantStart));
    runtime::Tensor logits = *eval->Logits(prompt);
    const float* last = logits.data<float>() + (logits.dim(0) - 1) * logits.dim(1);
    size_t best = 0;
    for (size_t k = 1; k < ex.letters.size(); ++k) {
      if (last[TestTokenizer().Encode(ex.letters[k])[0]] > last[TestTokenizer().Encode(ex.letters[best])[0]]) best = k;
    }
    correct += ex.letters[best] == ex.answer;
  }
  EXPECT_EQ(r->correct, correct);
  // Four choices, answers shuffled: an untrained model is near 1/4.
  EXPECT_GT(r->accuracy, 0.08);
  EXPECT_LT(r->accuracy, 0.45);
  std::cout << "random tiny model: " << r->correct << "/" << r->problems << " = " << r->accuracy << "\n";
}

TEST(EvaluateMultipleChoice, SliceLettersAndErrors) {
  runtime::ParamStore params = TinyModel(true);
  auto eval = *LogitsEvaluator::Create(&params);
  // Tied logits pick the first letter: question 0 answers it, question 1 does not.
  std::vector<data::MultipleChoiceQuestion> qs = {
      {"Which is 2?", {"two", "three"}, {"1", "2"}, "1"},
      {"Which is 3?", {"two", "three"}, {"1", "2"}, "2"},
      {"Which is 4?", {"four", "five", "six"}, {"A", "B", "C"}, "A"},
  };
  data::MultipleChoiceTask task("Tiny", qs);
  absl::StatusOr<MultipleChoiceResult> r = EvaluateMultipleChoice(*eval, task, TestTokenizer(), 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->problems, 2);
  EXPECT_EQ(r->correct, 1);
  r = EvaluateMultipleChoice(*eval, task, TestTokenizer(), 100);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->problems, 3);
  EXPECT_EQ(r->correct, 2);
  ASSERT_TRUE(task.SetSlice(1).ok());  // the logical slice is what counts
  r = EvaluateMultipleChoice(*eval, task, TestTokenizer(), -1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->problems, 2);
  EXPECT_EQ(r->correct, 1);

  data::MultipleChoiceTask multi("Multi", {{"Which?", {"x", "y"}, {"A", "q~Z!"}, "A"}});
  r = EvaluateMultipleChoice(*eval, multi, TestTokenizer(), -1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("task Multi problem 0"), absl::string_view::npos) << r.status();
}

// The offline JSONL format (ARC-style digit letters included): both reference answers are
// a later letter than the first, so the tied zero-lm_head model gets neither.
TEST(EvaluateMultipleChoice, JsonlTaskFromTheDataRoom) {
  absl::StatusOr<std::unique_ptr<data::MultipleChoiceTask>> task =
      data::MultipleChoiceTask::Load("data/testdata/questions.jsonl");
  ASSERT_TRUE(task.ok()) << task.status();
  runtime::ParamStore params = TinyModel(true);
  auto eval = *LogitsEvaluator::Create(&params);
  absl::StatusOr<MultipleChoiceResult> r = EvaluateMultipleChoice(*eval, **task, TestTokenizer(), -1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->problems, 2);
  EXPECT_EQ(r->correct, 0);
  EXPECT_EQ(r->accuracy, 0.0);
}

}  // namespace
}  // namespace gpt_sft::trainer

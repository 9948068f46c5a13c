#include <filesystem>
#include <fstream>

#include "data/tasks/custom_json_task.h"
#include "data/tasks/multiple_choice_task.h"
#include "data/tasks/spelling_tasks.h"
#include "data/tasks/task_mixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& contents) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

// A task of n numbered one-turn conversations, for checking the mixture's order.
class Numbered : public Task {
 public:
  Numbered(int id, int n) : id_(id), n_(n) {}
  std::string name() const override { return "Numbered"; }
  EvalType eval_type() const override { return EvalType::kGenerative; }
  int64_t num_examples() const override { return n_; }
  absl::StatusOr<Example> GetExample(int64_t i) const override {
    Example ex;
    ex.answer = std::to_string(id_) + ":" + std::to_string(i);
    return ex;
  }

 private:
  int id_, n_;
};

TEST(TaskMixture, ShufflesLikeNanochat) {
  // python3: pairs=[(t,l) for t,n in enumerate([3,2,4]) for l in range(n)];
  //          random.Random(42).shuffle(pairs)
  TaskMixture mix({std::make_shared<Numbered>(0, 3), std::make_shared<Numbered>(1, 2),
                   std::make_shared<Numbered>(2, 4)});
  std::vector<std::pair<int, int64_t>> expected = {{1, 0}, {2, 1}, {2, 2}, {1, 1}, {2, 3},
                                                   {0, 2}, {2, 0}, {0, 0}, {0, 1}};
  ASSERT_EQ(mix.size(), 9);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(mix.Locate(i), expected[i]) << i;
  EXPECT_EQ(mix.Get(0)->answer, "1:0");
}

TEST(Task, SlicesAsNanochat) {
  Numbered t(0, 10);
  t.SetSlice(1, 8, 3);  // 1, 4, 7
  EXPECT_EQ(t.size(), 3);
  EXPECT_EQ(t.Get(2)->answer, "0:7");
}

TEST(CustomJsonTask, ReadsConversationsSkippingBlankLines) {
  const std::string path = WriteTemp("ok.jsonl",
                                     "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"yo\"}]\n"
                                     "\n"
                                     "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":\"b\"}]\n");
  auto task = CustomJsonTask::Load(path);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->size(), 2);
  EXPECT_EQ((*task)->Get(1)->conversation.messages[1].content, "b");
}

struct BadJsonl {
  std::string name, contents, message;
};
class CustomJsonTaskErrors : public ::testing::TestWithParam<BadJsonl> {};

TEST_P(CustomJsonTaskErrors, NameTheFileAndLine) {
  const std::string path = WriteTemp(GetParam().name, GetParam().contents);
  auto task = CustomJsonTask::Load(path);
  ASSERT_FALSE(task.ok());
  EXPECT_THAT(task.status().message(), HasSubstr(path + ":2: "));
  EXPECT_THAT(task.status().message(), HasSubstr(GetParam().message));
}

const char kGood[] = "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"yo\"}]\n";

INSTANTIATE_TEST_SUITE_P(
    All, CustomJsonTaskErrors,
    ::testing::Values(BadJsonl{"malformed", std::string(kGood) + "[{\"role\":\n", "malformed JSON"},
                      BadJsonl{"role", std::string(kGood) + "[{\"role\":\"bot\",\"content\":\"x\"}]\n", "unknown role"},
                      BadJsonl{"empty", std::string(kGood) + "[]\n", "empty conversation"},
                      BadJsonl{"short", std::string(kGood) + "[{\"role\":\"user\",\"content\":\"x\"}]\n",
                               "at least 2 messages"},
                      BadJsonl{"utf8", std::string(kGood) + "[{\"role\":\"user\",\"content\":\"\xc3\x28\"}]\n",
                               "not valid UTF-8"}),
    [](const auto& info) { return info.param.name; });

TEST(CustomJsonTask, MissingFileIsAnError) {
  auto task = CustomJsonTask::Load("/nonexistent/chats.jsonl");
  ASSERT_FALSE(task.ok());
  EXPECT_THAT(task.status().message(), HasSubstr("/nonexistent/chats.jsonl"));
}

TEST(MultipleChoice, RendersLikeNanochatByteForByte) {
  MultipleChoiceQuestion q{"Which is red?", {"sky", "rose"}, {"A", "B"}, "B"};
  EXPECT_EQ(RenderMultipleChoice(q),
            "Multiple Choice question: Which is red?\n- sky=A\n- rose=B\n\n"
            "Respond only with the letter of the correct answer.");
  Example ex = MultipleChoiceExample(q);
  EXPECT_EQ(ex.conversation.messages[1].content, "B");
  EXPECT_EQ(ex.letters, (std::vector<std::string>{"A", "B"}));
}

TEST(MultipleChoice, LoadsJsonlWithDefaultLetters) {
  const std::string path = WriteTemp("mc.jsonl", "{\"question\":\"q\",\"choices\":[\"x\",\"y\",\"z\"],\"answer\":\"C\"}\n"
                                                  "{\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"letters\":[\"1\",\"2\"],\"answer\":\"2\"}\n");
  auto task = MultipleChoiceTask::Load(path);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->Get(0)->letters, (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_EQ((*task)->Get(1)->answer, "2");
  auto bad = MultipleChoiceTask::Load(WriteTemp("mcbad.jsonl", "{\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"answer\":\"E\"}\n"));
  EXPECT_THAT(bad.status().message(), HasSubstr("mcbad.jsonl:1: answer \"E\" is not one of the letters"));
}

TEST(SyntheticMultipleChoice, IsDeterministicAndAnswerable) {
  SyntheticMultipleChoiceTask task(50, 7);
  for (int i = 0; i < 50; ++i) {
    Example a = *task.Get(i), b = *task.Get(i);
    EXPECT_EQ(a.conversation.messages[0].content, b.conversation.messages[0].content);
    // The right choice is the sum in the question.
    const std::string& user = a.conversation.messages[0].content;
    int x, y;
    ASSERT_EQ(sscanf(user.c_str(), "Multiple Choice question: What is %d + %d?", &x, &y), 2);
    EXPECT_THAT(user, HasSubstr("- " + std::to_string(x + y) + "=" + a.answer + "\n"));
  }
}

std::shared_ptr<const std::vector<std::string>> Words() {
  static auto words = *LoadWordList("external/wordlist/words");
  return words;
}

TEST(Spelling, WordListKeepsLowercaseAsciiWords) {
  EXPECT_GT(Words()->size(), 10000u);
  for (const std::string& w : *Words()) ASSERT_EQ(w.find_first_not_of("abcdefghijklmnopqrstuvwxyz"), std::string::npos);
  EXPECT_FALSE(LoadWordList("/nonexistent/words").ok());
}

TEST(Spelling, SimpleSpellingSpellsTheWord) {
  SimpleSpellingTask task(Words(), 100, Split::kTrain);
  Example ex = *task.Get(3);
  const std::string& user = ex.conversation.messages[0].content;
  ASSERT_THAT(user, HasSubstr("Spell the word: "));
  const std::string word = user.substr(16);
  std::string expected = word + ":";
  for (size_t i = 0; i < word.size(); ++i) expected += (i ? "," : "") + std::string(1, word[i]);
  EXPECT_EQ(ex.answer, expected);
  EXPECT_TRUE(task.Evaluate(ex, expected));
  // Train and test draw different words for the same index.
  SimpleSpellingTask test(Words(), 100, Split::kTest);
  EXPECT_NE(test.Get(3)->answer, ex.answer);
}

TEST(Spelling, SpellingBeeCountsAndChecksWithPython) {
  SpellingBeeTask task(Words(), 200, Split::kTrain);
  for (int i = 0; i < 200; ++i) {
    Example ex = *task.Get(i);
    const Message& reply = ex.conversation.messages[1];
    ASSERT_EQ(reply.parts.size(), 5u);
    EXPECT_EQ(reply.parts[2].kind, Part::Kind::kPython);
    EXPECT_EQ(reply.parts[3].kind, Part::Kind::kPythonOutput);
    EXPECT_EQ(reply.parts[3].text, ex.answer);
    // python: '<word>'.count('<l>') -- recount it here.
    const std::string& code = reply.parts[2].text;
    const std::string word = code.substr(1, code.find("'.count") - 1);
    const char letter = code[code.size() - 3];
    EXPECT_EQ(std::to_string(std::count(word.begin(), word.end(), letter)), ex.answer);
    EXPECT_TRUE(task.Evaluate(ex, reply.parts[4].text));
    EXPECT_FALSE(task.Evaluate(ex, "#### 99"));
  }
  EXPECT_EQ(task.Get(5)->conversation.messages[0].content, task.Get(5)->conversation.messages[0].content);
}

TEST(ExtractHashAnswer, FollowsGsm8k) {
  EXPECT_EQ(ExtractHashAnswer("so #### 1,234 done"), "1234");
  EXPECT_EQ(ExtractHashAnswer("#### -3.5"), "-3.5");
  EXPECT_EQ(ExtractHashAnswer("#### x then #### 7"), "7");
  EXPECT_EQ(ExtractHashAnswer("no answer"), "");
}

}  // namespace
}  // namespace gpt_sft::data

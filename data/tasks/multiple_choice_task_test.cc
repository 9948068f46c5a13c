#include "data/tasks/multiple_choice_task.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "data/tasks/test_tasks.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

TEST(RenderMultipleChoice, MatchesNanochatByteForByte) {
  // python3, nanochat's render_mc: "Multiple Choice question: " + q + "\n"
  //   + "".join(f"- {c}={l}\n" for l, c in zip(letters, choices))
  //   + "\nRespond only with the letter of the correct answer."
  MultipleChoiceQuestion q{"Which is red?", {"sky", "rose", "grass"}, {"A", "B", "C"}, "B"};
  EXPECT_EQ(RenderMultipleChoice(q),
            "Multiple Choice question: Which is red?\n- sky=A\n- rose=B\n- grass=C\n\n"
            "Respond only with the letter of the correct answer.");
}

TEST(MultipleChoiceExample, IsAUserQuestionAndALetterReply) {
  MultipleChoiceQuestion q{"2+2?", {"3", "4"}, {"1", "2"}, "2"};
  Example ex = MultipleChoiceExample(q);
  ASSERT_EQ(ex.conversation.messages.size(), 2u);
  EXPECT_EQ(ex.conversation.messages[0].role, Role::kUser);
  EXPECT_EQ(ex.conversation.messages[0].text(), RenderMultipleChoice(q));
  EXPECT_EQ(ex.conversation.messages[1].role, Role::kAssistant);
  EXPECT_EQ(ex.conversation.messages[1].text(), "2");
  EXPECT_EQ(ex.letters, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(ex.answer, "2");
  EXPECT_TRUE(ValidateConversation(ex.conversation).ok());
}

TEST(MultipleChoiceTask, LoadsJsonlWithDefaultLetters) {
  auto task = MultipleChoiceTask::Load("data/testdata/questions.jsonl");
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->eval_type(), EvalType::kCategorical);
  ASSERT_EQ((*task)->size(), 2);
  Example mars = *(*task)->Get(0);
  EXPECT_EQ(mars.letters, (std::vector<std::string>{"A", "B", "C", "D"}));
  EXPECT_EQ(mars.answer, "B");
  EXPECT_EQ(mars.conversation.messages[0].text(),
            "Multiple Choice question: Which planet is known as the red planet?\n"
            "- Venus=A\n- Mars=B\n- Jupiter=C\n- Saturn=D\n\n"
            "Respond only with the letter of the correct answer.");
  EXPECT_TRUE((*task)->Evaluate(mars, "B"));
  EXPECT_FALSE((*task)->Evaluate(mars, "A"));
  Example spider = *(*task)->Get(1);
  EXPECT_EQ(spider.letters, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(spider.conversation.messages[1].text(), "2");
}

struct BadLine {
  std::string name, line, message;
};

class MultipleChoiceTaskErrors : public ::testing::TestWithParam<BadLine> {};

TEST_P(MultipleChoiceTaskErrors, NameTheFileAndLine) {
  const std::string path = WriteTemp(GetParam().name + ".jsonl",
                                     "{\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"answer\":\"A\"}\n" +
                                         GetParam().line + "\n");
  auto task = MultipleChoiceTask::Load(path);
  ASSERT_FALSE(task.ok());
  EXPECT_THAT(task.status().message(), HasSubstr(path + ":2: " + GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    All, MultipleChoiceTaskErrors,
    ::testing::Values(
        BadLine{"malformed", "{\"question\":", "malformed JSON"},
        BadLine{"array", "[1]", "expected a JSON object"},
        BadLine{"no_question", "{\"choices\":[\"x\",\"y\"],\"answer\":\"A\"}", "\"question\" must be a string"},
        BadLine{"choices", "{\"question\":\"q\",\"choices\":[\"x\",2],\"answer\":\"A\"}",
                "\"choices\" must be a list of strings"},
        BadLine{"one_choice", "{\"question\":\"q\",\"choices\":[\"x\"],\"answer\":\"A\"}",
                "a question needs at least 2 choices, got 1"},
        BadLine{"answer", "{\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"answer\":\"E\"}",
                "answer \"E\" is not one of the letters"},
        BadLine{"letters", "{\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"letters\":[\"A\"],\"answer\":\"A\"}",
                "1 letters for 2 choices"},
        BadLine{"twice", "{\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"letters\":[\"A\",\"A\"],\"answer\":\"A\"}",
                "letter \"A\" appears twice"},
        BadLine{"utf8", "{\"question\":\"\xe2\x82\"}", "not valid UTF-8"}),
    [](const auto& info) { return info.param.name; });

TEST(MultipleChoiceTask, MissingFileIsAnError) {
  auto task = MultipleChoiceTask::Load("/nonexistent/mc.jsonl");
  EXPECT_EQ(task.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(task.status().message(), HasSubstr("/nonexistent/mc.jsonl"));
}

}  // namespace
}  // namespace gpt_sft::data

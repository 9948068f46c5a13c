#include "data/tasks/synthetic_multiple_choice.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

constexpr char kTail[] = "\nRespond only with the letter of the correct answer.";

// Expected questions from a python3 transcription of the generator described in the
// header (random.Random(i + (seed << 64)), _randbelow, shuffle).
TEST(SyntheticMultipleChoice, MatchesAPythonTranscription) {
  SyntheticMultipleChoiceTask task(10, 7);
  struct Want {
    int64_t index;
    std::string user, answer;
  };
  for (const Want& w : {Want{0, "What is 83 - 2?\n- 88=A\n- 81=B\n- 75=C\n- 71=D\n", "B"},
                        Want{1, "What is 9 * 12?\n- 104=A\n- 112=B\n- 105=C\n- 108=D\n", "D"},
                        Want{2, "Which of these numbers is the largest?\n- 37=A\n- 13=B\n- 35=C\n- 52=D\n", "D"},
                        Want{6, "What is 5 + 15?\n- 20=A\n- 10=B\n- 24=C\n- 19=D\n", "A"}}) {
    Example ex = *task.Get(w.index);
    EXPECT_EQ(ex.conversation.messages[0].text(), "Multiple Choice question: " + w.user + kTail) << w.index;
    EXPECT_EQ(ex.answer, w.answer) << w.index;
    EXPECT_EQ(ex.conversation.messages[1].text(), w.answer);
  }
  EXPECT_EQ(SyntheticMultipleChoiceTask(10, 0).Get(5)->conversation.messages[0].text(),
            std::string("Multiple Choice question: What is 7 * 12?\n- 88=A\n- 84=B\n- 74=C\n- 90=D\n") + kTail);
  EXPECT_EQ(SyntheticMultipleChoiceTask(10, 123456789012).Get(3)->answer, "C");  // "What is 70 - 56?"
}

TEST(SyntheticMultipleChoice, EveryQuestionIsAnswerable) {
  SyntheticMultipleChoiceTask task(500, 42);
  for (int64_t i = 0; i < task.size(); ++i) {
    const MultipleChoiceQuestion q = task.Question(i);
    ASSERT_TRUE(ValidateMultipleChoice(q).ok()) << i;
    ASSERT_EQ(q.choices.size(), 4u);
    EXPECT_EQ(q.letters, (std::vector<std::string>{"A", "B", "C", "D"}));
    const int right_index = q.answer[0] - 'A';
    long right = std::stol(q.choices[right_index]);
    int a, b;
    char op;
    if (std::sscanf(q.question.c_str(), "What is %d %c %d?", &a, &op, &b) == 3) {
      EXPECT_EQ(right, op == '+' ? a + b : op == '-' ? a - b : a * b) << q.question;
      EXPECT_GE(right, 0);
    } else {
      ASSERT_EQ(q.question, "Which of these numbers is the largest?");
      for (const std::string& c : q.choices) EXPECT_LE(std::stol(c), right);
    }
    for (size_t k = 0; k < q.choices.size(); ++k) {  // the choices are distinct
      for (size_t m = k + 1; m < q.choices.size(); ++m) EXPECT_NE(q.choices[k], q.choices[m]);
    }
  }
}

TEST(SyntheticMultipleChoice, SeedsGiveDifferentQuestionsAndIndexIsChecked) {
  int same = 0;
  for (int64_t i = 0; i < 50; ++i) {
    same += SyntheticMultipleChoiceTask(50, 1).Question(i).question == SyntheticMultipleChoiceTask(50, 2).Question(i).question;
  }
  EXPECT_LT(same, 10);
  SyntheticMultipleChoiceTask task(3, 1);
  EXPECT_THAT(task.Get(3).status().message(), HasSubstr("example 3 is outside [0, 3)"));
}

}  // namespace
}  // namespace gpt_sft::data

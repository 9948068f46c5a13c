#include "data/tasks/spelling_tasks.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "data/conversation/conversation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const std::vector<std::string>> TestWords() {
  static auto words = *LoadWordList("data/testdata/words.txt");
  return words;
}

std::shared_ptr<const std::vector<std::string>> DebianWords() {
  static auto words = *LoadWordList("external/wordlist/words");
  return words;
}

TEST(LoadWordList, KeepsOnlyLowercaseAsciiWords) {
  // words.txt also holds "Banana", "cherry's", "über", a blank line, "date\r" and "fig ".
  EXPECT_EQ(*TestWords(), (std::vector<std::string>{"apple", "date", "elderberry", "fig", "grape", "kiwi", "lemon",
                                                    "mango", "nectarine", "olive", "papaya", "quince"}));
  EXPECT_GT(DebianWords()->size(), 10000u);
  for (const std::string& w : *DebianWords()) {
    ASSERT_EQ(w.find_first_not_of("abcdefghijklmnopqrstuvwxyz"), std::string::npos) << w;
  }
}

TEST(LoadWordList, ErrorsNameTheFile) {
  EXPECT_THAT(LoadWordList("/nonexistent/words").status().message(), HasSubstr("/nonexistent/words: cannot open"));
  EXPECT_THAT(LoadWordList("data/testdata/identity.jsonl").status().message(),
              HasSubstr("data/testdata/identity.jsonl: no lowercase a-z words"));
}

TEST(SpellingSeed, IsNanochats) {
  EXPECT_EQ(SpellingSeed(Split::kTrain, 5), 5);
  EXPECT_EQ(SpellingSeed(Split::kTest, 5), 10'000'005);
}

// Expected words and prompts: python3 data/tasks/spelling_golden.py

TEST(SimpleSpelling, MatchesPythonDraws) {
  SimpleSpellingTask train(TestWords(), 5, Split::kTrain);
  const std::vector<std::string> want_train = {"quince", "elderberry", "mango", "nectarine", "nectarine"};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(train.Get(i)->conversation.messages[0].text(), "Spell the word: " + want_train[i]);
  SimpleSpellingTask test(TestWords(), 3, Split::kTest);
  const std::vector<std::string> want_test = {"lemon", "mango", "elderberry"};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(test.Get(i)->conversation.messages[0].text(), "Spell the word: " + want_test[i]);
}

TEST(SimpleSpelling, SpellsTheWordWithoutSpaces) {
  SimpleSpellingTask task(TestWords(), 5, Split::kTrain);
  Example ex = *task.Get(1);  // elderberry
  EXPECT_EQ(ex.conversation.messages[1].role, Role::kAssistant);
  EXPECT_EQ(ex.conversation.messages[1].text(), "elderberry:e,l,d,e,r,b,e,r,r,y");
  EXPECT_TRUE(task.Evaluate(ex, "elderberry:e,l,d,e,r,b,e,r,r,y"));
  EXPECT_FALSE(task.Evaluate(ex, "elderberry: e,l,d,e,r,b,e,r,r,y"));
  EXPECT_EQ(task.Get(5).status().code(), absl::StatusCode::kOutOfRange);
}

struct BeeCase {
  int64_t index;
  Split split;
  std::string word;
  char letter;
  int count;
  std::string user;
};

TEST(SpellingBee, MatchesPythonDraws) {
  const std::vector<BeeCase> cases = {
      {0, Split::kTrain, "lemon", 'o', 1, "count how many times the letter \"o\" shows up in 'lemon'?"},
      {1, Split::kTrain, "elderberry", 'l', 1, "compte les 'l' dans le mot 'elderberry'"},
      {2, Split::kTrain, "apple", 'p', 2, "Dime cuántas veces sale la \"p\" en la palabra 'apple'?"},
      {3, Split::kTrain, "fig", 'f', 1, "Zähle die Buchstaben 'f' in \"fig\""},
      {4, Split::kTrain, "fig", 'g', 1, "Wie häufig findet man g in fig?"},
      {5, Split::kTrain, "olive", 'i', 1, "\"olive\"라는 단어 속 \"i\"의 개수를 세어 주세요"},
      {7, Split::kTrain, "kiwi", 'm', 0, "kiwiに含まれる\"m\"の数を数えてください?"},  // a letter not in the word
      {8, Split::kTrain, "fig", 'i', 1, "¿cuántas letras i tiene fig?"},
      {0, Split::kTest, "kiwi", 'w', 1, "How many 'w' are there in kiwi?"},
      {1, Split::kTest, "apple", 'l', 1, "\"apple\"に含まれる\"l\"の数を数えてください?"},
  };
  SpellingBeeTask train(TestWords(), 10, Split::kTrain), test(TestWords(), 10, Split::kTest);
  for (const BeeCase& c : cases) {
    Example ex = *(c.split == Split::kTrain ? train : test).Get(c.index);
    EXPECT_EQ(ex.conversation.messages[0].text(), c.user) << c.index;
    const std::vector<Part>& parts = ex.conversation.messages[1].parts();
    ASSERT_EQ(parts.size(), 5u);
    EXPECT_EQ(parts[2].text, absl::StrCat("'", c.word, "'.count('", std::string(1, c.letter), "')")) << c.index;
    EXPECT_EQ(parts[3].text, absl::StrCat(c.count));
    EXPECT_EQ(ex.answer, absl::StrCat(c.count));
  }
}

TEST(SpellingBee, ReplyHasNanochatsFiveParts) {
  SpellingBeeTask task(TestWords(), 10, Split::kTrain);
  Example ex = *task.Get(2);  // count 'p' in apple
  ASSERT_TRUE(ValidateConversation(ex.conversation).ok());
  const std::vector<Part>& p = ex.conversation.messages[1].parts();
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].kind, Part::Kind::kText);
  EXPECT_THAT(p[0].text, HasSubstr("apple:a,p,p,l,e\n"));
  EXPECT_THAT(p[0].text, HasSubstr("\n1:a\n2:p hit! count=1\n3:p hit! count=2\n4:l\n5:e\nThis gives us 2."));
  EXPECT_TRUE(absl::EndsWith(p[0].text, "This gives us 2."));
  EXPECT_EQ(p[1].kind, Part::Kind::kText);
  EXPECT_THAT(p[1].text, HasSubstr("Let me double check this using Python:"));
  EXPECT_EQ(p[2].kind, Part::Kind::kPython);
  EXPECT_EQ(p[2].text, "'apple'.count('p')");
  EXPECT_EQ(p[3].kind, Part::Kind::kPythonOutput);
  EXPECT_EQ(p[3].text, "2");
  EXPECT_EQ(p[4].kind, Part::Kind::kText);
  EXPECT_THAT(p[4].text, HasSubstr("Python gives us 2"));
  EXPECT_TRUE(absl::EndsWith(p[4].text, "#### 2"));
}

TEST(SpellingBee, CountsAreRightOverTheDebianList) {
  SpellingBeeTask task(DebianWords(), 300, Split::kTrain);
  int absent = 0;
  for (int i = 0; i < 300; ++i) {
    Example ex = *task.Get(i);
    const std::vector<Part>& p = ex.conversation.messages[1].parts();
    // Recount from the python call '<word>'.count('<l>').
    const std::string& code = p[2].text;
    const std::string word = code.substr(1, code.find("'.count") - 1);
    const char letter = code[code.size() - 3];
    const auto count = std::count(word.begin(), word.end(), letter);
    EXPECT_EQ(p[3].text, absl::StrCat(count)) << code;
    absent += count == 0;
    EXPECT_TRUE(task.Evaluate(ex, p[4].text));
    EXPECT_TRUE(task.Evaluate(ex, absl::StrCat("so... #### ", count, " done")));
    EXPECT_FALSE(task.Evaluate(ex, absl::StrCat("#### ", count + 1)));
    EXPECT_FALSE(task.Evaluate(ex, absl::StrCat(count)));  // no "####", no answer
  }
  EXPECT_GT(absent, 0);  // the 10% random letters sometimes miss
  EXPECT_LT(absent, 60);
}

TEST(SpellingBee, TemplatesAreOursAndWellFormed) {
  const std::vector<std::string>& t = SpellingBeeTask::Templates();
  EXPECT_GE(t.size(), 20u);
  for (const std::string& s : t) {
    EXPECT_EQ(std::vector<std::string>(absl::StrSplit(s, "{L}")).size(), 2u) << s;
    EXPECT_EQ(std::vector<std::string>(absl::StrSplit(s, "{W}")).size(), 2u) << s;
  }
}

TEST(ExtractHashAnswer, FollowsGsm8k) {
  EXPECT_EQ(ExtractHashAnswer("so #### 1,234 done"), "1234");
  EXPECT_EQ(ExtractHashAnswer("#### -3.5"), "-3.5");
  EXPECT_EQ(ExtractHashAnswer("#### 7 and later #### 8"), "7");     // the first match
  EXPECT_EQ(ExtractHashAnswer("#### x then #### 7"), "7");          // skips a non-number
  EXPECT_EQ(ExtractHashAnswer("#### -x then #### -2"), "-2");
  EXPECT_EQ(ExtractHashAnswer("##### 5"), "5");                     // "#### " inside "##### "
  EXPECT_EQ(ExtractHashAnswer("#### .,"), ".");
  EXPECT_EQ(ExtractHashAnswer("####5"), std::nullopt);              // the space is required
  EXPECT_EQ(ExtractHashAnswer("no answer"), std::nullopt);
}

}  // namespace
}  // namespace gpt_sft::data

// UseCalculator against what Python's eval prints for the same text, and the tool in a
// Generator: a forced <|output_start|> result <|output_end|> after a python block.
#include "trainer/generation/calculator.h"

#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

TEST(Calculator, ArithmeticAsPythonPrintsIt) {
  EXPECT_EQ(UseCalculator("2+3"), "5");
  EXPECT_EQ(UseCalculator("1,234 * 2"), "2468");
  EXPECT_EQ(UseCalculator("10/4"), "2.5");
  EXPECT_EQ(UseCalculator("8/2"), "4.0");
  EXPECT_EQ(UseCalculator("7//2"), "3");
  EXPECT_EQ(UseCalculator("-7//2"), "-4");
  EXPECT_EQ(UseCalculator("(1 + 2) * -3"), "-9");
  EXPECT_EQ(UseCalculator("0.1+0.2"), "0.30000000000000004");
  EXPECT_EQ(UseCalculator("1/3"), "0.3333333333333333");
  EXPECT_EQ(UseCalculator("1/100000"), "1e-05");
  EXPECT_EQ(UseCalculator("10000000000000000.0*1"), "1e+16");
  EXPECT_EQ(UseCalculator("123456789.0*10"), "1234567890.0");
  EXPECT_EQ(UseCalculator("2.50*2"), "5.0");
}

TEST(Calculator, RejectsWhatPythonWouldFailOnOrNanochatForbids) {
  EXPECT_EQ(UseCalculator("2**10"), std::nullopt);
  EXPECT_EQ(UseCalculator("1/0"), std::nullopt);
  EXPECT_EQ(UseCalculator("(1+2"), std::nullopt);
  EXPECT_EQ(UseCalculator("3 3"), std::nullopt);
  EXPECT_EQ(UseCalculator("import os"), std::nullopt);
  EXPECT_EQ(UseCalculator("99999999999*99999999999"), std::nullopt);  // int64 overflow
}

TEST(Calculator, CountsLettersAsSpellingBeeAsks) {
  EXPECT_EQ(UseCalculator("'strawberry'.count('r')"), "3");
  EXPECT_EQ(UseCalculator("\"banana\".count(\"a\")"), "3");
  EXPECT_EQ(UseCalculator("'aaaa'.count('aa')"), "2");
  EXPECT_EQ(UseCalculator("'kiwi'.count('z')"), "0");
  EXPECT_EQ(UseCalculator("'kiwi'.count('i').bit_length()"), std::nullopt);
}

}  // namespace
}  // namespace gpt_sft::trainer

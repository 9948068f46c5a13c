#include "base/json_fields.h"

#include <cmath>
#include <optional>
#include <string>

#include "base/json_file.h"
#include "gtest/gtest.h"

namespace gpt_sft::base {
namespace {

TEST(ReadField, ReadsTheTypedValue) {
  const Json j = {{"step", 650}, {"mode", "eager"}};
  int step = 0;
  std::string mode;
  EXPECT_TRUE(ReadField(j, "step", step, "r.json").ok());
  EXPECT_TRUE(ReadField(j, "mode", mode, "r.json").ok());
  EXPECT_EQ(step, 650);
  EXPECT_EQ(mode, "eager");
}

TEST(ReadField, MissingOrNullFieldIsAnErrorNamingIt) {
  const Json j = {{"step", nullptr}};
  int step = 0;
  EXPECT_EQ(ReadField(j, "step", step, "r.json").message(), "r.json: no field \"step\"");
  EXPECT_EQ(ReadField(j, "loss", step, "r.json").message(), "r.json: no field \"loss\"");
}

TEST(ReadField, WrongTypeNamesTheField) {
  const nlohmann::json j = {{"step", "six"}};
  int step = 0;
  absl::Status s = ReadField(j, "step", step, "r.json");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message().rfind("r.json: field \"step\": ", 0), 0u) << s;
}

TEST(ReadOptionalField, MissingOrNullIsEmpty) {
  const Json j = {{"val_loss", nullptr}, {"loss", 2.5}};
  std::optional<double> v = 1.0;
  EXPECT_TRUE(ReadOptionalField(j, "val_loss", v, "r.json").ok());
  EXPECT_FALSE(v.has_value());
  EXPECT_TRUE(ReadOptionalField(j, "missing", v, "r.json").ok());
  EXPECT_FALSE(v.has_value());
  EXPECT_TRUE(ReadOptionalField(j, "loss", v, "r.json").ok());
  EXPECT_EQ(v, 2.5);
}

// JSON has no NaN or infinity: such a value is written as null, like an empty one.
TEST(WriteOptionalField, EmptyAndNonFiniteAreNull) {
  Json j;
  WriteOptionalField(j, "a", std::optional<double>());
  WriteOptionalField(j, "b", std::optional<double>(std::nan("")));
  WriteOptionalField(j, "c", std::optional<double>(0.5));
  EXPECT_EQ(j.dump(), R"({"a":null,"b":null,"c":0.5})");
}

}  // namespace
}  // namespace gpt_sft::base

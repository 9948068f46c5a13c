#include "compiler/codegen/artifact_key.h"

#include "gtest/gtest.h"

namespace gpt_sft::compiler {
namespace {

TEST(ArtifactKey, SameInputsSameKeyOfSixteenHexDigits) {
  const std::string key = ArtifactKey("module {}", "cpu x86", "f32");
  EXPECT_EQ(key, ArtifactKey("module {}", "cpu x86", "f32"));
  EXPECT_EQ(key.size(), 16u);
}

TEST(ArtifactKey, TheDtypeTheTargetAndTheIrEachChangeIt) {
  const std::string key = ArtifactKey("module {}", "cpu x86", "f32");
  EXPECT_NE(key, ArtifactKey("module {}", "cpu x86", "bf16"));
  EXPECT_NE(key, ArtifactKey("module {}", "opencl spir64", "f32"));
  EXPECT_NE(key, ArtifactKey("module { }", "cpu x86", "f32"));
  // The separators keep the fields apart.
  EXPECT_NE(ArtifactKey("m", "cpu", "f32"), ArtifactKey("m", "cp", "uf32"));
}

}  // namespace
}  // namespace gpt_sft::compiler

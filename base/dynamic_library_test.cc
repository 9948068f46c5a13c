#include "base/dynamic_library.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"

namespace gpt_sft::base {
namespace {

TEST(DynamicLibrary, BindsWhatItFindsAndNamesWhatItDoesNot) {
  absl::StatusOr<DynamicLibrary> libm = DynamicLibrary::Open("libm.so.6");
  ASSERT_TRUE(libm.ok()) << libm.status();
  double (*cosine)(double) = nullptr;
  void (*absent)() = nullptr;
  void (*also_absent)() = nullptr;
  libm->Bind(cosine, "cos");
  libm->Bind(absent, "no_such_symbol_1");
  libm->Bind(also_absent, "no_such_symbol_2");
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine(0.0), 1.0);
  EXPECT_EQ(absent, nullptr);
  EXPECT_EQ(libm->missing(), "no_such_symbol_1, no_such_symbol_2");
}

TEST(DynamicLibrary, AMissingLibraryIsNotFoundWithTheLoadersWords) {
  absl::StatusOr<DynamicLibrary> lib = DynamicLibrary::Open("/nonexistent/libnothing.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(lib.status().message()).find("/nonexistent/libnothing.so.1"), std::string::npos)
      << lib.status();
}

}  // namespace
}  // namespace gpt_sft::base

// Proves each system library named in third_party/ is found, links and works: one real
// call into each, so a broken package install fails here rather than deep in a build.
#include <cblas.h>
#include <pcre2.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

namespace {

TEST(SystemLibraries, AbseilFormats) { EXPECT_EQ(absl::StrCat("d", 20), "d20"); }

TEST(SystemLibraries, OpenBlasMultiplies) {
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  float c[4] = {0, 0, 0, 0};
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.f, a, 2, b, 2, 0.f, c, 2);
  EXPECT_FLOAT_EQ(c[0], 19.f);
  EXPECT_FLOAT_EQ(c[3], 50.f);
}

TEST(SystemLibraries, Pcre2HasPossessiveUnicodeMatching) {
  int err = 0;
  PCRE2_SIZE off = 0;
  const char* pat = R"(\p{L}++)";
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat), PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
  ASSERT_NE(re, nullptr);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(re, nullptr);
  const std::string s = "héllo world";
  ASSERT_GT(pcre2_match(re, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md, nullptr), 0);
  EXPECT_EQ(pcre2_get_ovector_pointer(md)[1], 6u);  // "héllo" is 6 bytes
  pcre2_match_data_free(md);
  pcre2_code_free(re);
}

TEST(SystemLibraries, MlirBuildsAModule) {
  mlir::MLIRContext ctx;
  mlir::OpBuilder b(&ctx);
  auto module = mlir::ModuleOp::create(b.getUnknownLoc());
  EXPECT_TRUE(module->getRegion(0).hasOneBlock());
  module->erase();
}

}  // namespace

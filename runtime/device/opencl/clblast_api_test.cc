// clblast_api.h's hand-declared enums and CLBlastSgemm's shape against clblast_c.h where
// Debian's libclblast-dev installed it; and the missing library's one clear error.
#include "runtime/device/opencl/clblast_api.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

#if __has_include(<clblast_c.h>)
#include <clblast_c.h>

namespace gpt_sft::runtime::device::opencl {
namespace {

static_assert(kClBlastSuccess == CLBlastSuccess);
static_assert(kClBlastLayoutRowMajor == CLBlastLayoutRowMajor);
static_assert(kClBlastTransposeNo == CLBlastTransposeNo && kClBlastTransposeYes == CLBlastTransposeYes);
static_assert(sizeof(CLBlastLayout) == sizeof(int) && sizeof(CLBlastTranspose) == sizeof(int) &&
              sizeof(CLBlastStatusCode) == sizeof(int));

template <typename R, typename... A>
constexpr size_t Arity(R (*)(A...)) {
  return sizeof...(A);
}
static_assert(Arity(ClBlastApi{}.Sgemm) == Arity(&::CLBlastSgemm));
static_assert(Arity(ClBlastApi{}.SgemmStridedBatched) == Arity(&::CLBlastSgemmStridedBatched));

TEST(ClBlastApi, MatchesTheHeader) { SUCCEED() << "checked at compile time against clblast_c.h"; }

}  // namespace
}  // namespace gpt_sft::runtime::device::opencl
#else
TEST(ClBlastApi, MatchesTheHeader) { GTEST_SKIP() << "clblast_c.h is not installed (Debian's libclblast-dev)"; }
#endif

namespace gpt_sft::runtime::device::opencl {
namespace {

TEST(ClBlastApi, AMissingLibraryIsOneClearError) {
  setenv("GPT_SFT_LIBCLBLAST", "/nonexistent/libclblast.so.9", 1);
  absl::StatusOr<const ClBlastApi*> api = ClBlastApi::Get();
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(api.status().message()).find("no CLBlast: /nonexistent/libclblast.so.9"), std::string::npos)
      << api.status();
  EXPECT_NE(std::string(api.status().message()).find("GPT_SFT_OPENCL_GEMM=tiled"), std::string::npos) << api.status();
}

}  // namespace
}  // namespace gpt_sft::runtime::device::opencl

// nccl_api.h's hand-declared ABI against nccl.h where a toolkit installed one, every symbol
// present in the library where it is installed, and the missing library's one clear error.
#include "runtime/collectives/nccl_api.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

#ifdef GPT_HAVE_NCCL_H
#include <nccl.h>

namespace gpt_sft::runtime::collectives {
namespace {

static_assert(sizeof(NcclUniqueId) == sizeof(ncclUniqueId));
static_assert(kNcclSuccess == ncclSuccess && kNcclInProgress == ncclInProgress);
static_assert(kNcclInt32 == ncclInt32 && kNcclInt64 == ncclInt64 && kNcclUint64 == ncclUint64 &&
              kNcclFloat32 == ncclFloat32 && kNcclFloat64 == ncclFloat64 && kNcclBfloat16 == ncclBfloat16);
static_assert(kNcclSum == ncclSum && kNcclMax == ncclMax && kNcclMin == ncclMin && kNcclAvg == ncclAvg);
static_assert(sizeof(ncclResult) == sizeof(ncclResult_t) && sizeof(int) == sizeof(ncclDataType_t) &&
              sizeof(int) == sizeof(ncclRedOp_t));

template <typename R, typename... A>
constexpr size_t Arity(R (*)(A...)) {
  return sizeof...(A);
}
static_assert(Arity(NcclApi{}.CommInitRank) == Arity(&::ncclCommInitRank));
static_assert(Arity(NcclApi{}.AllReduce) == Arity(&::ncclAllReduce));
static_assert(Arity(NcclApi{}.ReduceScatter) == Arity(&::ncclReduceScatter));
static_assert(Arity(NcclApi{}.AllGather) == Arity(&::ncclAllGather));
static_assert(Arity(NcclApi{}.Broadcast) == Arity(&::ncclBroadcast));

TEST(NcclApiAbi, MatchesTheHeader) { SUCCEED() << "checked at compile time against nccl.h"; }

}  // namespace
}  // namespace gpt_sft::runtime::collectives
#else
TEST(NcclApiAbi, MatchesTheHeader) { GTEST_SKIP() << "no CUDA toolkit: nccl.h is not installed"; }
#endif

namespace gpt_sft::runtime::collectives {
namespace {

TEST(NcclApi, AMissingLibraryIsOneClearError) {
  setenv("GPT_SFT_LIBNCCL", "/nonexistent/libnccl.so.9", 1);
  absl::StatusOr<const NcclApi*> api = NcclApi::Get();
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(api.status().message()).find("no NCCL: /nonexistent/libnccl.so.9"), std::string::npos)
      << api.status();
}

}  // namespace
}  // namespace gpt_sft::runtime::collectives

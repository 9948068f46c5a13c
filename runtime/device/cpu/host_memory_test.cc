#include "runtime/device/cpu/host_memory.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * 4096;
}

TEST(HostMemory, IsHugePageAlignedAndZeroFilled) {
  absl::StatusOr<HostMemory> arena = HostMemory::Map(3 << 20);
  ASSERT_TRUE(arena.ok()) << arena.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena->data()) % (2 << 20), 0u);
  EXPECT_GE(arena->bytes(), 3 << 20);
  const auto* bytes = static_cast<const unsigned char*>(arena->data());
  for (int64_t i = 0; i < arena->bytes(); i += 4096) ASSERT_EQ(bytes[i], 0) << i;
}

TEST(HostMemory, ReleaseGivesThePagesBackAndStaysUsable) {
  constexpr int64_t kBytes = int64_t{256} << 20;
  absl::StatusOr<HostMemory> arena = HostMemory::Map(kBytes);
  ASSERT_TRUE(arena.ok()) << arena.status();
  const int64_t before = ResidentBytes();
  std::memset(arena->data(), 0x5a, kBytes);
  const int64_t touched = ResidentBytes();
  EXPECT_GT(touched - before, kBytes / 2) << "writing the arena should make it resident";
  ASSERT_TRUE(arena->Release().ok());
  EXPECT_LT(ResidentBytes(), touched - kBytes / 2) << "Release should drop the arena's pages";
  auto* p = static_cast<unsigned char*>(arena->data());
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[kBytes - 1], 0);
  p[12345] = 7;  // writable again
  EXPECT_EQ(p[12345], 7);
}

TEST(HostMemory, RefusesAnEmptyArena) { EXPECT_FALSE(HostMemory::Map(0).ok()); }

TEST(HostMemory, MovesOwnership) {
  absl::StatusOr<HostMemory> arena = HostMemory::Map(1 << 20);
  ASSERT_TRUE(arena.ok());
  void* data = arena->data();
  HostMemory moved = *std::move(arena);
  EXPECT_EQ(moved.data(), data);
  HostMemory assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.data(), data);
  EXPECT_EQ(moved.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
}

}  // namespace
}  // namespace gpt_sft::runtime::device::cpu

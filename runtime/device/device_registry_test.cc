// A binary offers exactly the drivers it links: this test links the cuda driver alone (as the
// GPU bundle's runner does), so cpu and opencl are refused with the list of what is built in.
#include <string>

#include "gtest/gtest.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device {
namespace {

TEST(DeviceRegistry, ADriverNotLinkedIsRefusedNamingTheOnesThatAre) {
  for (const char* spec : {"cpu", "opencl", "opencl:0"}) {
    absl::StatusOr<std::unique_ptr<Device>> d = CreateDevice(spec);
    ASSERT_FALSE(d.ok()) << spec;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(d.status().message()),
              "'" + std::string(spec) + "' is not a device of this binary (drivers: cuda, cuda:<n>)");
  }
}

TEST(DeviceRegistry, DescribeDriversListsOnlyTheLinkedDrivers) {
  for (const std::string& line : DescribeDrivers()) EXPECT_EQ(line.rfind("cuda", 0), 0u) << line;
  EXPECT_FALSE(DescribeDrivers().empty());
}

TEST(DeviceRegistry, ALinkedDriverIsReachedByItsIndexedSpelling) {
  absl::StatusOr<std::unique_ptr<Device>> d = CreateDevice("cuda:-1");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(std::string(d.status().message()).find("the cuda device index must be a number >= 0"), std::string::npos)
      << d.status();
}

}  // namespace
}  // namespace gpt_sft::runtime::device

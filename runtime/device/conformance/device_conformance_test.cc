// The device seam's conformance suite: every driver built in runs the same cases (IREE's CTS
// idea). A driver that cannot open a device here is skipped, saying why (the expected skips:
// runtime/device/conformance/README.md). Kernel fixtures per module format: a host shared object
// of range kernels (testdata/range_kernels.c) for cpu, SPIR bitcode made at build time from
// testdata/axpy.spirv.mlir for opencl; both compute y = 2 x + y.
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device {
namespace {

std::string ReadFixture(const std::string& name) {
  const char* dir = std::getenv("TEST_SRCDIR");
  const std::string path = std::string(dir ? dir : ".") + "/gpt_sft/runtime/device/conformance/" + name;
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class DeviceConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Device>> device = CreateDevice(GetParam());
    if (!device.ok()) GTEST_SKIP() << GetParam() << ": " << device.status().message();
    device_ = *std::move(device);
  }

  std::unique_ptr<Buffer> Allocate(int64_t bytes) {
    absl::StatusOr<std::unique_ptr<Buffer>> b = device_->Allocate(bytes);
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? *std::move(b) : nullptr;
  }

  std::vector<float> Read(Buffer& buffer, int64_t offset, int64_t count) {
    std::vector<float> out(count);
    EXPECT_TRUE(device_->Download(out.data(), {&buffer, offset, count * 4}).ok());
    return out;
  }

  /// The module computing y = 2 x + y over 256 floats, and its kernel and launch shape.
  struct Axpy {
    std::unique_ptr<Module> module;
    Kernel* kernel = nullptr;
    LaunchConfig config;
    bool takes_scalar = false;
  };
  Axpy LoadAxpy() {
    Axpy a;
    const bool cpu = device_->driver() == "cpu";
    absl::StatusOr<std::unique_ptr<Module>> m =
        cpu ? device_->LoadModule(ModuleFormat::kHostSharedObject, ReadFixture("librange_kernels.so"), "range_kernels")
            : device_->LoadModule(ModuleFormat::kSpir, ReadFixture("axpy.bc"), "axpy");
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) return a;
    a.module = *std::move(m);
    absl::StatusOr<Kernel*> k = a.module->FindKernel(cpu ? "axpy2" : "axpy");
    EXPECT_TRUE(k.ok()) << k.status();
    a.kernel = k.ok() ? *k : nullptr;
    a.config = cpu ? LaunchConfig{{256, 1, 1}, {1, 1, 1}, 0} : LaunchConfig{{4, 1, 1}, {64, 1, 1}, 0};
    a.takes_scalar = !cpu;
    return a;
  }
  std::vector<KernelArg> AxpyArgs(const Axpy& a, BufferRange x, BufferRange y) {
    std::vector<KernelArg> args = {KernelArg::Of(x), KernelArg::Of(y)};
    if (a.takes_scalar) args.push_back(KernelArg::Of(Scalar{Scalar::Type::kF32, 0, 2.0}));
    return args;
  }

  std::unique_ptr<Device> device_;
};

TEST_P(DeviceConformance, UploadAndDownloadRoundTrip) {
  std::unique_ptr<Buffer> b = Allocate(1 << 20);
  ASSERT_NE(b, nullptr);
  std::vector<float> data(1 << 18);
  std::iota(data.begin(), data.end(), 0.5f);
  ASSERT_TRUE(device_->Upload(WholeBuffer(*b), data.data()).ok());
  EXPECT_EQ(Read(*b, 0, data.size()), data);
}

// A buffer is exactly as large as asked, whatever the driver rounds to underneath:
// a whole-buffer upload of an odd-sized blob must read no byte past it.
TEST_P(DeviceConformance, ABufferHasTheSizeAskedFor) {
  std::unique_ptr<Buffer> b = Allocate(773);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->bytes(), 773);
  std::string blob(773, 'x');
  ASSERT_TRUE(device_->Upload(WholeBuffer(*b), blob.data()).ok());
  std::string back(773, '\0');
  ASSERT_TRUE(device_->Download(back.data(), WholeBuffer(*b)).ok());
  EXPECT_EQ(back, blob);
}

TEST_P(DeviceConformance, SubRangesLeaveTheRestAlone) {
  std::unique_ptr<Buffer> b = Allocate(4096);
  std::vector<float> zeros(1024, 0.f), ones(64, 1.f);
  ASSERT_TRUE(device_->Upload(WholeBuffer(*b), zeros.data()).ok());
  ASSERT_TRUE(device_->Upload({b.get(), 512, 256}, ones.data()).ok());
  std::vector<float> all = Read(*b, 0, 1024);
  for (int i = 0; i < 1024; ++i) EXPECT_EQ(all[i], (i >= 128 && i < 192) ? 1.f : 0.f) << i;
  EXPECT_EQ(Read(*b, 512, 64), ones);
}

TEST_P(DeviceConformance, CopiesAndFillsRunInOrder) {
  std::unique_ptr<Buffer> a = Allocate(1024), b = Allocate(1024);
  std::vector<float> data(256);
  std::iota(data.begin(), data.end(), 1.f);
  ASSERT_TRUE(device_->Upload(WholeBuffer(*a), data.data()).ok());
  absl::StatusOr<std::unique_ptr<CommandBuffer>> cmd = device_->CreateCommandBuffer();
  ASSERT_TRUE(cmd.ok());
  float seven = 7.f;
  uint32_t pattern;
  std::memcpy(&pattern, &seven, 4);
  ASSERT_TRUE((*cmd)->AddFill(WholeBuffer(*b), pattern, "fill").ok());
  ASSERT_TRUE((*cmd)->AddCopy({b.get(), 256, 512}, {a.get(), 0, 512}, "copy").ok());
  EXPECT_EQ((*cmd)->size(), 2);
  ASSERT_TRUE(device_->Submit(**cmd).ok());
  ASSERT_TRUE(device_->Synchronize().ok());
  std::vector<float> out = Read(*b, 0, 256);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(out[i], (i >= 64 && i < 192) ? data[i - 64] : 7.f) << i;
}

TEST_P(DeviceConformance, KernelsRunOnBufferRangesAndCommandBuffersReplay) {
  Axpy axpy = LoadAxpy();
  ASSERT_NE(axpy.kernel, nullptr);
  // x and y at nonzero offsets of one buffer (multiples of 256 bytes, the GPU plan's alignment).
  std::unique_ptr<Buffer> b = Allocate(4096);
  std::vector<float> x(256), y(256);
  for (int i = 0; i < 256; ++i) {
    x[i] = 0.25f * i;
    y[i] = 1.f - i;
  }
  const BufferRange xr{b.get(), 1024, 1024}, yr{b.get(), 2048, 1024};
  ASSERT_TRUE(device_->Upload(xr, x.data()).ok());
  ASSERT_TRUE(device_->Upload(yr, y.data()).ok());
  absl::StatusOr<std::unique_ptr<CommandBuffer>> cmd = device_->CreateCommandBuffer();
  ASSERT_TRUE(cmd.ok());
  absl::Status s = (*cmd)->AddLaunch(*axpy.kernel, axpy.config, AxpyArgs(axpy, xr, yr), "axpy");
  ASSERT_TRUE(s.ok()) << s;
  for (int round = 0; round < 3; ++round) ASSERT_TRUE(device_->Submit(**cmd).ok());
  ASSERT_TRUE(device_->Synchronize().ok());
  std::vector<float> out = Read(*b, 2048, 256);
  for (int i = 0; i < 256; ++i) EXPECT_FLOAT_EQ(out[i], y[i] + 3 * 2 * x[i]) << i;
}

TEST_P(DeviceConformance, HostCallsSeeEveryEarlierCommand) {
  std::unique_ptr<Buffer> b = Allocate(1024);
  absl::StatusOr<std::unique_ptr<CommandBuffer>> cmd = device_->CreateCommandBuffer();
  ASSERT_TRUE(cmd.ok());
  ASSERT_TRUE((*cmd)->AddFill(WholeBuffer(*b), 0x40400000u /* 3.f */, "fill").ok());
  float seen = 0;
  Device* device = device_.get();
  ASSERT_TRUE((*cmd)->AddHostCall([&seen, device, &b] {
                        return device->Download(&seen, {b.get(), 1020, 4});
                      }, "look")
                  .ok());
  ASSERT_TRUE(device_->Submit(**cmd).ok());
  ASSERT_TRUE(device_->Synchronize().ok());
  EXPECT_EQ(seen, 3.f);
}

TEST_P(DeviceConformance, MarkersMeasureNonNegativeTime) {
  absl::StatusOr<std::unique_ptr<Marker>> a = device_->RecordMarker();
  std::unique_ptr<Buffer> b = Allocate(1 << 20);
  absl::StatusOr<std::unique_ptr<CommandBuffer>> cmd = device_->CreateCommandBuffer();
  ASSERT_TRUE((*cmd)->AddFill(WholeBuffer(*b), 0, "fill").ok());
  ASSERT_TRUE(device_->Submit(**cmd).ok());
  absl::StatusOr<std::unique_ptr<Marker>> z = device_->RecordMarker();
  ASSERT_TRUE(a.ok() && z.ok());
  absl::StatusOr<double> seconds = device_->ElapsedSeconds(**a, **z);
  ASSERT_TRUE(seconds.ok()) << seconds.status();
  EXPECT_GE(*seconds, 0.0);
}

TEST_P(DeviceConformance, AnImpossibleAllocationNamesTheBytes) {
  absl::StatusOr<std::unique_ptr<Buffer>> b = device_->Allocate(int64_t{1} << 60);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(b.status())) << b.status();
  EXPECT_TRUE(absl::StrContains(b.status().message(), "1152921504606846976")) << b.status();
}

TEST_P(DeviceConformance, ABrokenModuleIsAnErrorNamingIt) {
  const bool cpu = device_->driver() == "cpu";
  absl::StatusOr<std::unique_ptr<Module>> m = device_->LoadModule(
      cpu ? ModuleFormat::kHostSharedObject : ModuleFormat::kSpir, "not a module at all", "broken_module");
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "broken_module")) << m.status();
}

TEST_P(DeviceConformance, AMissingKernelIsNotFoundNamingIt) {
  Axpy axpy = LoadAxpy();
  ASSERT_NE(axpy.module, nullptr);
  absl::StatusOr<Kernel*> k = axpy.module->FindKernel("no_such_kernel");
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(absl::IsNotFound(k.status())) << k.status();
  EXPECT_TRUE(absl::StrContains(k.status().message(), "no_such_kernel")) << k.status();
}

TEST_P(DeviceConformance, BuiltinsRunOrAreRefusedByName) {
  std::unique_ptr<Buffer> b = Allocate(3 * 1024);
  std::vector<float> a(256, 1.5f), c(256, 2.f);
  ASSERT_TRUE(device_->Upload({b.get(), 0, 1024}, a.data()).ok());
  ASSERT_TRUE(device_->Upload({b.get(), 1024, 1024}, c.data()).ok());
  absl::StatusOr<std::unique_ptr<CommandBuffer>> cmd = device_->CreateCommandBuffer();
  const std::vector<KernelArg> args = {KernelArg::Of(Scalar{Scalar::Type::kI64, 256, 0}),
                                       KernelArg::Of(BufferRange{b.get(), 0, 1024}),
                                       KernelArg::Of(BufferRange{b.get(), 1024, 1024}),
                                       KernelArg::Of(BufferRange{b.get(), 2048, 1024})};
  absl::Status s = (*cmd)->AddBuiltin("cpu.add.f32", args, "add");
  if (device_->driver() != "cpu") {
    EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "cpu.add.f32")) << s;
    return;
  }
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(device_->Submit(**cmd).ok());
  EXPECT_EQ(Read(*b, 2048, 256), std::vector<float>(256, 3.5f));
  EXPECT_TRUE(absl::IsUnimplemented((*cmd)->AddBuiltin("cpu.no_such_builtin", args, "x")));
}

INSTANTIATE_TEST_SUITE_P(Drivers, DeviceConformance, ::testing::Values("cpu", "opencl"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(DeviceRegistry, AnUnknownDeviceNamesTheSpecAndTheDrivers) {
  absl::StatusOr<std::unique_ptr<Device>> d = CreateDevice("tpu");
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(d.status()));
  EXPECT_TRUE(absl::StrContains(d.status().message(), "'tpu'")) << d.status();
  EXPECT_TRUE(absl::StrContains(d.status().message(), "cpu, opencl")) << d.status();
  absl::StatusOr<std::unique_ptr<Device>> far = CreateDevice("opencl:99");
  ASSERT_FALSE(far.ok());
  EXPECT_TRUE(absl::StrContains(far.status().message(), "opencl")) << far.status();
}

}  // namespace
}  // namespace gpt_sft::runtime::device

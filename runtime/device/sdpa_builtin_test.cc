// The sdpa builtins' argument reading: the order SDPA_BUILTIN.md fixes, and each refusal
// naming the launch and the argument at fault.
#include "runtime/device/sdpa_builtin.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::device {
namespace {

// A buffer that is only a size: the reading checks bytes and never touches memory.
class SizedBuffer : public Buffer {
 public:
  explicit SizedBuffer(int64_t bytes) : Buffer(bytes) {}
  void* host_pointer() const override { return nullptr; }
};

KernelArg I(int64_t v) { return KernelArg::Of(Scalar{Scalar::Type::kI64, v, 0}); }
KernelArg F(double v) { return KernelArg::Of(Scalar{Scalar::Type::kF64, 0, v}); }

// B 2, T 8, H 4, Hkv 2, D 16, f32 buffers.
std::vector<KernelArg> Args(bool backward, Buffer& buf, int64_t dtype = 0) {
  const int64_t e = dtype != 0 ? 2 : 4, q = 2 * 8 * 4 * 16 * e, kv = 2 * 8 * 2 * 16 * e, lse = 2 * 4 * 8 * 4;
  auto b = [&](int64_t bytes) { return KernelArg::Of(BufferRange{&buf, 0, bytes}); };
  std::vector<KernelArg> args = {I(2), I(8), I(4), I(2), I(16), I(dtype), I(1), F(0.25)};
  if (!backward) {
    for (int64_t bytes : {q, kv, kv, q, lse}) args.push_back(b(bytes));
  } else {
    for (int64_t bytes : {q, kv, kv, q, q, lse, q, kv, kv}) args.push_back(b(bytes));
  }
  return args;
}

std::string Message(const absl::StatusOr<SdpaCall>& c) { return std::string(c.status().message()); }

TEST(SdpaCall, ReadsTheForwardInOrder) {
  SizedBuffer buf(1 << 20);
  absl::StatusOr<SdpaCall> c = ReadSdpaBuiltin("sdpa_fwd.cudnn", Args(false, buf), "attn");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->backward);
  EXPECT_EQ(c->B, 2);
  EXPECT_EQ(c->T, 8);
  EXPECT_EQ(c->H, 4);
  EXPECT_EQ(c->Hkv, 2);
  EXPECT_EQ(c->D, 16);
  EXPECT_EQ(c->bf16_tensors, 0u);
  EXPECT_TRUE(c->causal);
  EXPECT_EQ(c->scale, 0.25);
  EXPECT_EQ(c->lse.bytes, 2 * 4 * 8 * 4);
  EXPECT_EQ(c->out.bytes, 2 * 8 * 4 * 16 * 4);
}

TEST(SdpaCall, ReadsTheBackwardInOrderAndBf16Storage) {
  SizedBuffer buf(1 << 20);
  absl::StatusOr<SdpaCall> c = ReadSdpaBuiltin("sdpa_bwd.cudnn", Args(true, buf, 255), "attn_grad");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->backward);
  EXPECT_EQ(c->bf16_tensors, 255u);
  EXPECT_TRUE(c->StoresBf16(SdpaTensor::kDv));
  EXPECT_EQ(c->dq.bytes, 2 * 8 * 4 * 16 * 2);
  EXPECT_EQ(c->dk.bytes, 2 * 8 * 2 * 16 * 2);
  EXPECT_EQ(c->lse.bytes, 2 * 4 * 8 * 4);
}

// Under bf16 storage q, k, v are bf16 buffers and out f32: each buffer is sized by its own bit.
TEST(SdpaCall, ReadsAMaskOfBf16Tensors) {
  SizedBuffer buf(1 << 20);
  std::vector<KernelArg> args = Args(false, buf);  // every buffer sized for f32
  args[5] = I(0b0111);
  absl::StatusOr<SdpaCall> c = ReadSdpaBuiltin("sdpa_fwd.cudnn", args, "attn");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->StoresBf16(SdpaTensor::kQ));
  EXPECT_TRUE(c->StoresBf16(SdpaTensor::kV));
  EXPECT_FALSE(c->StoresBf16(SdpaTensor::kOut));
  EXPECT_EQ(c->ElementBytes(SdpaTensor::kK), 2);
  EXPECT_EQ(c->ElementBytes(SdpaTensor::kOut), 4);
}

TEST(SdpaCall, RefusalsNameTheLaunchAndTheArgument) {
  SizedBuffer buf(1 << 20);
  std::vector<KernelArg> args = Args(false, buf);
  args.pop_back();
  EXPECT_NE(Message(ReadSdpaBuiltin("sdpa_fwd.cudnn", args, "attn")).find("attn (builtin sdpa_fwd.cudnn): 12 arguments, expected 13"),
            std::string::npos);

  args = Args(false, buf);
  args[3] = I(3);  // H 4 over Hkv 3
  EXPECT_NE(Message(ReadSdpaBuiltin("sdpa_fwd.cudnn", args, "attn")).find("H=4 is not a multiple of Hkv=3"),
            std::string::npos);

  args = Args(false, buf);
  args[5] = I(256);
  EXPECT_NE(Message(ReadSdpaBuiltin("sdpa_fwd.cudnn", args, "attn")).find("dtype 256"), std::string::npos);

  args = Args(false, buf);
  args[7] = I(1);
  EXPECT_NE(Message(ReadSdpaBuiltin("sdpa_fwd.cudnn", args, "attn")).find("argument 7 (scale) must be a float"),
            std::string::npos);

  args = Args(true, buf);
  args[8 + 5].buffer.bytes -= 4;  // lse one row short
  EXPECT_NE(Message(ReadSdpaBuiltin("sdpa_bwd.cudnn", args, "attn_grad")).find("buffer lse holds 252 bytes"),
            std::string::npos);

  args = Args(false, buf);
  args[8].buffer.offset = (1 << 20) - 8;
  EXPECT_NE(Message(ReadSdpaBuiltin("sdpa_fwd.cudnn", args, "attn")).find("buffer q bytes"), std::string::npos);

  EXPECT_FALSE(ReadSdpaBuiltin("gemm.f32", Args(false, buf), "attn").ok());
  EXPECT_TRUE(IsSdpaBuiltin("sdpa_bwd.cudnn"));
  EXPECT_FALSE(IsSdpaBuiltin("gemm.f32"));
}

}  // namespace
}  // namespace gpt_sft::runtime::device

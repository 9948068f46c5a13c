// The PTX of bf16_convert_ptx.h; bf16_convert_ptx_test assembles it with ptxas for sm_90.
#include "runtime/device/cuda/bf16_convert_ptx.h"

namespace gpt_sft::runtime::device::cuda {

// Thread i of the grid converts element i < n. bf16 -> f32 places the 16 bits in the high
// half of the word, which is exact (bf16 is f32's top half).
const char kBf16ConvertPtx[] = R"(.version 7.8
.target sm_80
.address_size 64

.visible .entry gpt_f32_to_bf16(.param .u64 p_src, .param .u64 p_dst, .param .u64 p_n)
{
  .reg .pred %p;
  .reg .b16 %h;
  .reg .b32 %r<4>;
  .reg .f32 %f;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_src];
  ld.param.u64 %rd2, [p_dst];
  ld.param.u64 %rd3, [p_n];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  cvt.u64.u32 %rd4, %r3;
  mad.wide.u32 %rd4, %r1, %r2, %rd4;
  setp.ge.u64 %p, %rd4, %rd3;
  @%p bra DONE;
  shl.b64 %rd5, %rd4, 2;
  add.u64 %rd5, %rd1, %rd5;
  ld.global.f32 %f, [%rd5];
  cvt.rn.bf16.f32 %h, %f;
  shl.b64 %rd6, %rd4, 1;
  add.u64 %rd6, %rd2, %rd6;
  st.global.b16 [%rd6], %h;
DONE:
  ret;
}

.visible .entry gpt_bf16_to_f32(.param .u64 p_src, .param .u64 p_dst, .param .u64 p_n)
{
  .reg .pred %p;
  .reg .b16 %h;
  .reg .b32 %r<5>;
  .reg .f32 %f;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_src];
  ld.param.u64 %rd2, [p_dst];
  ld.param.u64 %rd3, [p_n];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  cvt.u64.u32 %rd4, %r3;
  mad.wide.u32 %rd4, %r1, %r2, %rd4;
  setp.ge.u64 %p, %rd4, %rd3;
  @%p bra DONE;
  shl.b64 %rd5, %rd4, 1;
  add.u64 %rd5, %rd1, %rd5;
  ld.global.b16 %h, [%rd5];
  cvt.u32.u16 %r4, %h;
  shl.b32 %r4, %r4, 16;
  mov.b32 %f, %r4;
  shl.b64 %rd6, %rd4, 2;
  add.u64 %rd6, %rd2, %rd6;
  st.global.f32 [%rd6], %f;
DONE:
  ret;
}
)";

}  // namespace gpt_sft::runtime::device::cuda

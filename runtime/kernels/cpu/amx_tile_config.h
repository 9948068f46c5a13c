// The AMX tile configuration both AMX kernels load (attention's tiles, tile_gemm_bf16.cc, and
// the bf16 GEMM, amx_gemm_bf16.cc): palette 1, eight tiles of 16 rows x 64 bytes. Tiles 0-3
// hold a 32 x 32 block of C (f32), 4-5 two tiles of A, 6-7 two of B (16 bf16 pairs x 16
// columns). Each kernel loads it on entry, since oneDNN or the other kernel may have loaded
// its own on the same thread.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_AMX_TILE_CONFIG_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_AMX_TILE_CONFIG_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

struct alignas(64) AmxTileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_AMX_TILE_CONFIG_H_

// What both AMX kernels (attention's tiles, tile_gemm_bf16.cc, and the bf16 GEMM,
// amx_gemm_bf16.cc) share: the tile configuration and the 32 x 32 block of C.
// The configuration: palette 1, eight tiles of 16 rows x 64 bytes. Tiles 0-3 hold a 32 x 32
// block of C (f32), 4-5 two tiles of A, 6-7 two of B (16 bf16 pairs x 16 columns). Each kernel
// loads it on entry, since oneDNN or the other kernel may have loaded its own on the same thread.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_AMX_TILES_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_AMX_TILES_H_

#include "runtime/kernels/cpu/x86_intrinsics.h"

#include <cstdint>

namespace gpt_sft::runtime::kernels {

struct alignas(64) AmxTileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

/// One 32 x 32 block of C (row stride c_bytes) over `pairs` pairs of k (a multiple of 16),
/// under AmxTileConfig: A's two tiles from `a` (rows of bf16 pairs, a_bytes apart), B's from
/// `b` (rows of 32-bit pairs, b_bytes apart; the block's columns at b and b + 16); C loaded
/// first when `load_c`, else zero, and stored back. Each tile load sits right before the first
/// product that reads it: tiles are not renamed, so this lets the next step's loads overlap
/// this step's last products. Each C tile sums its products in k order.
[[gnu::target("amx-tile,amx-bf16")]] inline void AmxBlock32(const uint16_t* a, int64_t a_bytes, const uint32_t* b,
                                                            int64_t b_bytes, int64_t pairs, float* c, int64_t c_bytes,
                                                            bool load_c) {
  float* c1 = reinterpret_cast<float*>(reinterpret_cast<char*>(c) + 16 * c_bytes);
  const uint16_t* a1 = reinterpret_cast<const uint16_t*>(reinterpret_cast<const char*>(a) + 16 * a_bytes);
  const int64_t b_row = b_bytes / 4;
  if (load_c) {
    _tile_loadd(0, c, c_bytes);
    _tile_loadd(1, c + 16, c_bytes);
    _tile_loadd(2, c1, c_bytes);
    _tile_loadd(3, c1 + 16, c_bytes);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int64_t q = 0; q < pairs; q += 16) {
    _tile_loadd(4, a + 2 * q, a_bytes);
    _tile_loadd(6, b + q * b_row, b_bytes);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, b + q * b_row + 16, b_bytes);
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(5, a1 + 2 * q, a_bytes);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, c_bytes);
  _tile_stored(1, c + 16, c_bytes);
  _tile_stored(2, c1, c_bytes);
  _tile_stored(3, c1 + 16, c_bytes);
}

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_AMX_TILES_H_

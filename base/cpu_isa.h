// The x86-64 instruction-set level every CPU kernel and the compiler's code generator run at:
// decided once per process, in this one place, from the CPU (CPUID), the operating system
// (which register state it saves: XCR0, and Linux's grant of the AMX tile state) and the
// optional cap GPT_SFT_CPU_ISA. Code compiled for a level (`gnu::target`, or an LLVM target
// feature) runs only where ActiveCpuIsa() is at least that level.
//
// The levels, each including those before it:
// * generic      x86-64's baseline (SSE2): the compilers' portable code, no intrinsics.
// * avx2         AVX, AVX2 and FMA, YMM state saved by the OS (Haswell, Zen 1 and later).
// * avx512       AVX512F, BW, DQ and VL, ZMM and mask state saved (Skylake-SP, Zen 4).
// * avx512_bf16  and AVX512_BF16: vcvtne2ps2bf16, vdpbf16ps (Cooper Lake, Zen 4).
// * amx          and AMX-TILE, AMX-BF16, tile state saved and granted (Sapphire Rapids).
//
// GPT_SFT_CPU_ISA=generic|avx2|avx512|avx512_bf16|amx lowers the level, so one machine can run
// what an older CPU runs (tests under each cap: .ci/run). It can never raise it: a cap above
// the CPU's level, or an unknown name, is an error naming the variable and the CPU's level.
#ifndef GPT_SFT_BASE_CPU_ISA_H_
#define GPT_SFT_BASE_CPU_ISA_H_

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace gpt_sft {

enum class CpuIsa : int { kGeneric = 0, kAvx2 = 1, kAvx512 = 2, kAvx512Bf16 = 3, kAmx = 4 };

inline constexpr char kCpuIsaEnv[] = "GPT_SFT_CPU_ISA";

/// "generic", "avx2", "avx512", "avx512_bf16" or "amx": GPT_SFT_CPU_ISA's spelling.
const char* CpuIsaName(CpuIsa isa);
/// The level named `name` (GPT_SFT_CPU_ISA's spelling), or nullopt.
std::optional<CpuIsa> ParseCpuIsa(std::string_view name);

/// The highest level this CPU and OS can run, ignoring any cap. Asked once, cached.
CpuIsa NativeCpuIsa();

/// The level `cap` (GPT_SFT_CPU_ISA's value; null or empty: no cap) gives on a CPU whose own
/// level is `native`: the cap where it is at or below `native`, else the error message (which
/// names the variable, the value, and the CPU's level).
std::variant<CpuIsa, std::string> ResolveCpuIsa(CpuIsa native, const char* cap);

/// The level this process runs at: NativeCpuIsa() lowered by GPT_SFT_CPU_ISA. Decided at its
/// first call (static initializers may call it). A cap it cannot honour is a usage error:
/// the message goes to stderr and the process exits with status 2 before any kernel runs.
CpuIsa ActiveCpuIsa();

/// ActiveCpuIsa() >= `level`: the only question a kernel asks before running code compiled
/// for `level`.
inline bool CpuIsaAtLeast(CpuIsa level) { return static_cast<int>(ActiveCpuIsa()) >= static_cast<int>(level); }

/// For an entry point whose whole body is compiled for `level` (callers must have asked
/// CpuIsaAtLeast first): below it, prints that `entry` was called at the wrong level and
/// aborts, where running on would be an illegal instruction.
void RequireCpuIsa(CpuIsa level, const char* entry);

/// For logs and reports: "avx2 (capped by GPT_SFT_CPU_ISA; the CPU has avx512_bf16)", or
/// "avx512_bf16" when nothing caps it.
std::string CpuIsaDescription();

}  // namespace gpt_sft

#endif  // GPT_SFT_BASE_CPU_ISA_H_

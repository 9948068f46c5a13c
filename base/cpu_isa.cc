// Implements the ISA level from CPUID, XCR0 and Linux's AMX permission, and the cap.
#include "base/cpu_isa.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace gpt_sft {
namespace {

constexpr const char* kNames[] = {"generic", "avx2", "avx512", "avx512_bf16", "amx"};

struct Cpuid {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Cpuid Query(unsigned leaf, unsigned subleaf) {
  Cpuid r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return Cpuid{};
  return r;
}

bool Bit(unsigned word, int bit) { return (word >> bit) & 1u; }

// XCR0: which register state the OS saves on a context switch. Without OSXSAVE the OS saves
// none of the AVX state, and xgetbv itself would fault.
uint64_t SavedStateMask() {
  if (!Bit(Query(1, 0).ecx, 27)) return 0;
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

// Linux (5.16 and later) hands out the 8 KiB tile data state only to a process that asks.
bool LinuxGrantsTileData() {
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

CpuIsa Detect() {
  const Cpuid l1 = Query(1, 0), l7 = Query(7, 0), l7s1 = Query(7, 1);
  const uint64_t saved = SavedStateMask();
  constexpr uint64_t kYmm = 0x6, kZmm = 0xe0, kTiles = 0x60000;

  const bool avx2 = (saved & kYmm) == kYmm && Bit(l1.ecx, 28) /*AVX*/ && Bit(l1.ecx, 12) /*FMA*/ &&
                    Bit(l7.ebx, 5) /*AVX2*/;
  if (!avx2) return CpuIsa::kGeneric;
  const bool avx512 = (saved & kZmm) == kZmm && Bit(l7.ebx, 16) /*F*/ && Bit(l7.ebx, 17) /*DQ*/ &&
                      Bit(l7.ebx, 30) /*BW*/ && Bit(l7.ebx, 31) /*VL*/;
  if (!avx512) return CpuIsa::kAvx2;
  if (!Bit(l7s1.eax, 5) /*AVX512_BF16*/) return CpuIsa::kAvx512;
  const bool amx = (saved & kTiles) == kTiles && Bit(l7.edx, 24) /*AMX-TILE*/ && Bit(l7.edx, 22) /*AMX-BF16*/ &&
                   LinuxGrantsTileData();
  return amx ? CpuIsa::kAmx : CpuIsa::kAvx512Bf16;
}

std::string LevelList() { return "generic, avx2, avx512, avx512_bf16, amx"; }

CpuIsa Decide() {
  const CpuIsa native = NativeCpuIsa();
  const char* cap = std::getenv(kCpuIsaEnv);
  const auto resolved = ResolveCpuIsa(native, cap);
  if (const auto* error = std::get_if<std::string>(&resolved)) {
    std::fprintf(stderr, "error: %s\n", error->c_str());
    std::fflush(stderr);
    std::_Exit(2);
  }
  return std::get<CpuIsa>(resolved);
}

}  // namespace

const char* CpuIsaName(CpuIsa isa) { return kNames[static_cast<int>(isa)]; }

std::optional<CpuIsa> ParseCpuIsa(std::string_view name) {
  for (int i = 0; i < 5; ++i) {
    if (name == kNames[i]) return static_cast<CpuIsa>(i);
  }
  return std::nullopt;
}

CpuIsa NativeCpuIsa() {
  static const CpuIsa native = Detect();
  return native;
}

std::variant<CpuIsa, std::string> ResolveCpuIsa(CpuIsa native, const char* cap) {
  if (cap == nullptr || cap[0] == '\0') return native;
  const std::optional<CpuIsa> asked = ParseCpuIsa(cap);
  if (!asked) {
    return std::string(kCpuIsaEnv) + "=" + cap + " is not a level; the levels are " + LevelList() +
           " (this CPU's is " + CpuIsaName(native) + ")";
  }
  if (static_cast<int>(*asked) > static_cast<int>(native)) {
    return std::string(kCpuIsaEnv) + "=" + cap + " is above this CPU's level, " + CpuIsaName(native) +
           ": the variable can only lower the level (unset it, or name " + CpuIsaName(native) + " or one below)";
  }
  return *asked;
}

CpuIsa ActiveCpuIsa() {
  static const CpuIsa active = Decide();
  return active;
}

void RequireCpuIsa(CpuIsa level, const char* entry) {
  if (CpuIsaAtLeast(level)) return;
  std::fprintf(stderr, "internal error: %s needs the %s ISA level; this process runs at %s (base/cpu_isa.h)\n", entry,
               CpuIsaName(level), CpuIsaDescription().c_str());
  std::fflush(stderr);
  std::abort();
}

std::string CpuIsaDescription() {
  const CpuIsa active = ActiveCpuIsa();
  if (active == NativeCpuIsa()) return CpuIsaName(active);
  return std::string(CpuIsaName(active)) + " (capped by " + kCpuIsaEnv + "; the CPU has " +
         CpuIsaName(NativeCpuIsa()) + ")";
}

}  // namespace gpt_sft

// Implements OneDnnGemmBf16 with a cache of matmul primitives keyed by shape, strides and
// accumulation; each call brings its own scratchpad (user scratchpad mode) and stream, so
// the pool's threads can run cached primitives at once.
#include "runtime/kernels/cpu/onednn_gemm.h"

#include <omp.h>

#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

#include "base/cpu_isa.h"

namespace gpt_sft::runtime::kernels {
namespace {

using Key = std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool>;

struct Cached {
  dnnl::matmul primitive;
  int64_t scratchpad_bytes;
};

// oneDNN picks its own kernels from CPUID; capped at our level first (base/cpu_isa.h), so
// under GPT_SFT_CPU_ISA it runs what a CPU of that level runs. set_max_cpu_isa works only
// before oneDNN's first dispatch, hence here, before the engine.
void CapOneDnnIsa() {
  using isa = dnnl::cpu_isa;
  switch (ActiveCpuIsa()) {
    case CpuIsa::kGeneric: dnnl::set_max_cpu_isa(isa::sse41); break;  // its lowest JIT level
    case CpuIsa::kAvx2: dnnl::set_max_cpu_isa(isa::avx2); break;
    case CpuIsa::kAvx512: dnnl::set_max_cpu_isa(isa::avx512_core); break;
    case CpuIsa::kAvx512Bf16: dnnl::set_max_cpu_isa(isa::avx512_core_bf16); break;
    case CpuIsa::kAmx: break;
  }
}

dnnl::engine& Engine() {
  static dnnl::engine* engine = [] {
    CapOneDnnIsa();
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return *engine;
}

std::mutex& CacheMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
std::map<Key, Cached>& Cache() {
  static auto* cache = new std::map<Key, Cached>;
  return *cache;
}
std::set<std::string>& Used() {
  static auto* used = new std::set<std::string>;
  return *used;
}

/// A row-major [rows, cols] matrix, or the transpose of a stored [cols, rows] one.
dnnl::memory::desc Matrix(int64_t rows, int64_t cols, int64_t ld, bool transposed, dnnl::memory::data_type type) {
  const dnnl::memory::dims strides = transposed ? dnnl::memory::dims{1, ld} : dnnl::memory::dims{ld, 1};
  return dnnl::memory::desc({rows, cols}, type, strides);
}

const Cached& Primitive(const Key& key) {
  std::lock_guard<std::mutex> lock(CacheMutex());
  auto it = Cache().find(key);
  if (it != Cache().end()) return it->second;
  const auto [ta, tb, M, N, K, lda, ldb, ldc, accumulate] = key;
  using dt = dnnl::memory::data_type;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::desc desc(Matrix(M, K, lda, ta, dt::bf16), Matrix(K, N, ldb, tb, dt::bf16),
                                Matrix(M, N, ldc, false, dt::f32));
  dnnl::matmul::primitive_desc pd(desc, attr, Engine());
  Used().insert(pd.impl_info_str());
  Cached cached{dnnl::matmul(pd), static_cast<int64_t>(pd.scratchpad_desc().get_size())};
  return Cache().emplace(key, std::move(cached)).first->second;
}

}  // namespace

bool OneDnnHasBf16DotProduct() {
  static const bool has = [] {
    if (!CpuIsaAtLeast(CpuIsa::kAvx512Bf16)) return false;
    Engine();  // caps oneDNN's level before it is asked
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
    return (isa & bf16) == bf16;  // the ISA values are nested bit sets
  }();
  return has;
}

void OneDnnGemmBf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const uint16_t* a, int64_t lda,
                    const uint16_t* b, int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);  // this thread's OpenMP setting only
  const Cached& cached = Primitive(Key{trans_a, trans_b, M, N, K, lda, ldb, ldc, accumulate});
  thread_local std::vector<char> scratchpad;
  if (static_cast<int64_t>(scratchpad.size()) < cached.scratchpad_bytes) scratchpad.resize(cached.scratchpad_bytes);
  thread_local dnnl::stream stream(Engine());
  using dt = dnnl::memory::data_type;
  dnnl::memory am(Matrix(M, K, lda, trans_a, dt::bf16), Engine(), const_cast<uint16_t*>(a));
  dnnl::memory bm(Matrix(K, N, ldb, trans_b, dt::bf16), Engine(), const_cast<uint16_t*>(b));
  dnnl::memory cm(Matrix(M, N, ldc, false, dt::f32), Engine(), c);
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
  if (cached.scratchpad_bytes > 0) {
    const dnnl::memory::desc bytes({cached.scratchpad_bytes}, dt::u8, dnnl::memory::format_tag::a);
    args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(bytes, Engine(), scratchpad.data());
  }
  cached.primitive.execute(stream, args);
  stream.wait();
}

std::vector<std::string> OneDnnKernelsUsed() {
  std::lock_guard<std::mutex> lock(CacheMutex());
  return {Used().begin(), Used().end()};
}

}  // namespace gpt_sft::runtime::kernels

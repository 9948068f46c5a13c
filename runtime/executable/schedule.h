// The executable's internals: where a value lives (Address), one op ready to run (Launch),
// and what the launches of one entry point share (Schedule). Built once at load by
// op_launches.cc; executable.cc runs them.
#ifndef GPT_SFT_RUNTIME_EXECUTABLE_SCHEDULE_H_
#define GPT_SFT_RUNTIME_EXECUTABLE_SCHEDULE_H_

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/executable/host_executable.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::exec {

/// A value's bytes: `*base + offset`. `base` points at the arena's base pointer or at an
/// argument's slot in Schedule::arg_ptrs, both fixed at load, so a launch reads an
/// argument's current memory (bound by Run) at no cost.
struct Address {
  void* const* base = nullptr;
  int64_t offset = 0;

  char* get() const { return static_cast<char*>(*base) + offset; }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(get());
  }
  bool operator==(const Address& o) const { return base == o.base && offset == o.offset; }
};

/// A launch's scratch (kernels/cpu/workspace.h): `bytes` at the executable's workspace
/// block, whose pointer `*base` is set once every launch is built and the largest need is
/// known. Launches run one at a time, so every one starts at the block's base.
struct WorkspaceRef {
  void* const* base = nullptr;
  int64_t bytes = 0;

  kernels::Workspace get() const { return kernels::Workspace{static_cast<char*>(*base), bytes}; }
};

/// One op with its buffers resolved. `run` returns a non-OK status only for data the
/// types cannot rule out (an id outside the vocabulary).
struct Launch {
  std::string op;     // "gpt.matmul", "fusion"
  std::string where;  // the op and its location, for errors
  std::function<absl::Status()> run;
};

/// 64-byte aligned memory the executable owns (freed with it).
struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using OwnedBuffer = std::unique_ptr<char, AlignedFree>;

/// Side buffers of the executable and the stable base pointers Addresses into them use
/// (a deque: pointers to its elements survive push_back).
struct OwnedMemory {
  std::vector<OwnedBuffer> buffers;
  std::deque<void*> bases;
  int64_t bytes = 0;
};

struct Schedule {
  std::string name;
  std::vector<BufferSpec> args, results;
  std::vector<void*> arg_ptrs;        // bound by Run
  std::vector<Address> result_addrs;  // into the arena or arg_ptrs
  std::vector<Launch> launches;
  int64_t arena_bytes = 0;
};

}  // namespace gpt_sft::runtime::exec

#endif  // GPT_SFT_RUNTIME_EXECUTABLE_SCHEDULE_H_

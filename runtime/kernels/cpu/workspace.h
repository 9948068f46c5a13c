// Scratch memory a kernel borrows from its caller instead of allocating: the compiled
// step's executable sizes every launch's workspace at load and hands each launch a slice
// of one block it owns, so a step allocates nothing (runtime/executable). The kernels'
// allocating signatures (the interpreter's) make a ScratchBuffer and call the same code.
//
// A kernel's workspace is carved into 64-byte aligned pieces by a WorkspaceCarver. The
// same carving code sizes it: run on an empty Workspace it hands out null pointers and
// only adds up the bytes, so the size function and the kernel cannot disagree.
//
//   int64_t bytes = FooWorkspaceBytes(shape);       // at load
//   Foo(..., Workspace{block, bytes});              // per step; contents on entry are garbage
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_WORKSPACE_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_WORKSPACE_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace gpt_sft::runtime::kernels {

inline constexpr int64_t kWorkspaceAlignment = 64;

/// `bytes` of scratch at `data` (64-byte aligned), whatever they hold on entry.
struct Workspace {
  char* data = nullptr;
  int64_t bytes = 0;
};

inline int64_t RoundUpToWorkspaceAlignment(int64_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

/// p moved up to the workspace alignment (a cache line): for scratch that does not come from a
/// carver (a std::vector's data is only 16-byte aligned), given kWorkspaceAlignment bytes of
/// slack.
template <typename T>
T* AlignedForWorkspace(T* p) {
  return reinterpret_cast<T*>(RoundUpToWorkspaceAlignment(static_cast<int64_t>(reinterpret_cast<uintptr_t>(p))));
}

/// Hands out consecutive aligned pieces of a Workspace; with an empty one, only counts.
class WorkspaceCarver {
 public:
  explicit WorkspaceCarver(Workspace workspace = {}) : workspace_(workspace) {}

  /// `count` elements of T (null when only counting). Aborts, naming `what`, when the
  /// workspace is too small: the caller sized it with another shape (a bug, not input).
  template <typename T>
  T* Take(int64_t count, const char* what) {
    const int64_t offset = used_;
    used_ += RoundUpToWorkspaceAlignment(count * static_cast<int64_t>(sizeof(T)));
    if (workspace_.data == nullptr) return nullptr;
    if (used_ > workspace_.bytes) {
      std::fprintf(stderr, "kernel workspace too small for %s: needs at least %lld bytes, has %lld\n", what,
                   static_cast<long long>(used_), static_cast<long long>(workspace_.bytes));
      std::abort();
    }
    return reinterpret_cast<T*>(workspace_.data + offset);
  }

  /// Bytes handed out (or counted) so far, and what is left of the workspace.
  int64_t used() const { return used_; }
  int64_t left() const { return workspace_.bytes - used_; }
  bool counting() const { return workspace_.data == nullptr; }

 private:
  Workspace workspace_;
  int64_t used_ = 0;
};

/// A heap workspace for the allocating signatures: one aligned block, freed with it.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(int64_t bytes)
      : bytes_(RoundUpToWorkspaceAlignment(bytes > 0 ? bytes : 1)),
        data_(static_cast<char*>(std::aligned_alloc(kWorkspaceAlignment, bytes_))) {}
  Workspace get() const { return Workspace{data_.get(), bytes_}; }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  int64_t bytes_;
  std::unique_ptr<char, Free> data_;
};

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_WORKSPACE_H_

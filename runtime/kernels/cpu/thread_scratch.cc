// Implements ThreadScratch: per-slot buffers grown by their own thread inside a pool job,
// all slots grown together between jobs, thread_local buffers elsewhere.
#include "runtime/kernels/cpu/thread_scratch.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {
namespace {

std::mutex& RegistryMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::vector<ThreadScratch*>& Registry() {
  static auto* sites = new std::vector<ThreadScratch*>;
  return *sites;
}
// Set when a request raises a site's high-water mark; cleared by the growth that follows.
std::atomic<bool> raised{false};

}  // namespace

ThreadScratch::ThreadScratch() : slots_(new Buffer[kMaxSlots]) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry().push_back(this);
}

ThreadScratch::~ThreadScratch() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::vector<ThreadScratch*>& sites = Registry();
  sites.erase(std::remove(sites.begin(), sites.end(), this), sites.end());
}

void* ThreadScratch::Buffer::Aligned() const { return AlignedForWorkspace(storage.get()); }

void ThreadScratch::Buffer::GrowTo(int64_t need) {
  if (bytes >= need) return;
  storage.reset(new std::byte[need + kWorkspaceAlignment]);
  bytes = need;
}

void* ThreadScratch::Bytes(int64_t bytes) {
  const int slot = ThreadSlot();
  if (!InPoolJob() || slot >= kMaxSlots) {
    // Keyed by site: a thread_local member cannot be per object.
    thread_local std::vector<std::pair<const ThreadScratch*, Buffer>> own;
    auto it = std::find_if(own.begin(), own.end(), [&](const auto& entry) { return entry.first == this; });
    if (it == own.end()) it = own.emplace(own.end(), this, Buffer{});
    it->second.GrowTo(bytes);
    return it->second.Aligned();
  }
  Buffer& buffer = slots_[slot];
  if (buffer.bytes < bytes) {
    buffer.GrowTo(bytes);
    int64_t mark = high_water_.load();
    while (mark < bytes && !high_water_.compare_exchange_weak(mark, bytes)) {
    }
    raised.store(true);
  }
  return buffer.Aligned();
}

void ThreadScratch::GrowSlots(int slots) {
  const int64_t mark = high_water_.load();
  for (int s = 0; s < std::min(slots, kMaxSlots); ++s) slots_[s].GrowTo(mark);
}

void ThreadScratch::GrowSlotsIfRaised(int slots) {
  static int grown_slots = 0;  // more threads than last time: their slots are new
  if (!raised.exchange(false) && slots <= grown_slots) return;
  grown_slots = std::max(grown_slots, slots);
  std::lock_guard<std::mutex> lock(RegistryMutex());
  for (ThreadScratch* site : Registry()) site->GrowSlots(slots);
}

}  // namespace gpt_sft::runtime::kernels

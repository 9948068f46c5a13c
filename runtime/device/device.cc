// Implements the range check and the profile table the drivers share.
#include "runtime/device/device.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::device {

bool InsideItsBuffer(const BufferRange& r) {
  return r.buffer != nullptr && r.offset >= 0 && r.bytes >= 0 && r.offset + r.bytes <= r.buffer->bytes();
}

absl::Status CheckRange(const BufferRange& r, std::string_view what) {
  if (InsideItsBuffer(r)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": bytes [", r.offset, ", ", r.offset + r.bytes,
                                                 ") lie outside the buffer of ", r.buffer ? r.buffer->bytes() : 0,
                                                 " bytes"));
}

void ProfileTable::Add(const std::string& label, double seconds) {
  auto [it, inserted] = index_.emplace(label, entries_.size());
  if (inserted) entries_.push_back({label, 0, 0});
  ProfileEntry& e = entries_[it->second];
  ++e.calls;
  e.seconds += seconds;
}

std::vector<ProfileEntry> ProfileTable::Take() {
  std::vector<ProfileEntry> out = std::move(entries_);
  entries_.clear();
  index_.clear();
  return out;
}

}  // namespace gpt_sft::runtime::device

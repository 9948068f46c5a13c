// The zip container of torch.save files (PyTorch's "zip file format" since 1.6): stored,
// uncompressed entries, a central directory, and zip64 records (torch always writes the zip64
// end-of-central-directory record; a checkpoint over 4 GiB needs them). We read and write
// only what torch writes; compression, encryption and multi-disk archives are refused by name.
//
// Reading trusts only the central directory (torch leaves the local headers' sizes and CRC at 0
// and puts them in data descriptors), checks every entry against the file (its local header,
// its bounds, no overlap with the directory) and checks each entry's CRC-32 as it is read.
// Writing lays entries out as torch does: each entry's data starts at a multiple of 64 bytes
// (padding goes in the local header's extra field, id "FB"), timestamps are zero, so equal
// inputs give identical bytes.
#ifndef GPT_SFT_RUNTIME_CHECKPOINT_ZIP_ARCHIVE_H_
#define GPT_SFT_RUNTIME_CHECKPOINT_ZIP_ARCHIVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/atomic_file.h"

namespace gpt_sft::runtime {

struct ZipEntry {
  std::string name;     // e.g. "model_000650/data/0"
  uint64_t data_offset;  // of the entry's first byte in the file
  uint64_t size;
  uint32_t crc32;
};

class ZipReader {
 public:
  /// Reads and checks the directory of the archive at `path`. Errors name the file and, where
  /// one is at fault, the entry.
  static absl::StatusOr<ZipReader> Open(const std::string& path);
  ZipReader(ZipReader&& other) noexcept;
  ZipReader& operator=(ZipReader&&) = delete;
  ~ZipReader();

  const std::string& path() const { return path_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  /// nullptr when no entry has that name.
  const ZipEntry* Find(absl::string_view name) const;
  /// The entry's bytes, CRC-checked.
  absl::StatusOr<std::string> Read(const ZipEntry& entry) const;
  /// Reads the entry's `entry.size` bytes into `dst`, CRC-checked.
  absl::Status ReadInto(const ZipEntry& entry, char* dst) const;

 private:
  ZipReader(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  absl::Status ReadDirectory();
  absl::Status ReadAt(uint64_t offset, size_t size, char* dst, absl::string_view what) const;

  std::string path_;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  std::vector<ZipEntry> entries_;
};

/// Appends entries to `out` (which the caller then Syncs and Publishes), then the directory.
class ZipWriter {
 public:
  explicit ZipWriter(base::AtomicFile* out) : out_(out) {}
  /// One stored entry; `size` must be under 4 GiB (a single tensor of torch's is).
  absl::Status Add(absl::string_view name, const void* data, uint64_t size);
  /// The central directory, the zip64 end records and the end record.
  absl::Status Finish();

 private:
  absl::Status Write(const std::string& bytes);
  base::AtomicFile* out_;
  uint64_t offset_ = 0;
  struct Written {
    std::string name;
    uint64_t header_offset, size;
    uint32_t crc32;
  };
  std::vector<Written> written_;
};

/// CRC-32 (zlib's crc32_z: the zip polynomial 0xEDB88320) of `size` bytes, continuing from `crc`.
uint32_t Crc32(const void* data, uint64_t size, uint32_t crc = 0);

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_CHECKPOINT_ZIP_ARCHIVE_H_

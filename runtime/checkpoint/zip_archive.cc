// Implements the zip reader and writer (PKWARE APPNOTE 6.3: sections 4.3.7 local header,
// 4.3.12 central directory header, 4.3.14-16 zip64 and end records, 4.5.3 zip64 extra field).
#include "runtime/checkpoint/zip_archive.h"

#include <zlib.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEnd = 0x06054b50,
                   kZip64End = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30, kCentralHeaderSize = 46, kEndSize = 22, kZip64EndSize = 56,
                 kZip64LocatorSize = 20;
constexpr uint32_t kOverflow32 = 0xffffffff;
constexpr uint64_t kAlignment = 64;  // torch's kFieldAlignment: every entry's data on a 64-byte boundary

uint64_t Get(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}

void Put(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

uint32_t Crc32(const void* data, uint64_t size, uint32_t crc) {
  // zlib's (the zip format's own CRC-32); crc32_z takes a size_t, so a multi-GiB tensor is one call.
  return static_cast<uint32_t>(crc32_z(crc, static_cast<const Bytef*>(data), static_cast<size_t>(size)));
}

// --- reading --------------------------------------------------------------------------------

absl::StatusOr<ZipReader> ZipReader::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  ZipReader reader(path, fd);
  struct stat st;
  if (fstat(fd, &st) != 0) return absl::InternalError(absl::StrCat(path, ": cannot stat: ", std::strerror(errno)));
  reader.file_size_ = static_cast<uint64_t>(st.st_size);
  if (absl::Status s = reader.ReadDirectory(); !s.ok()) return s;
  return reader;
}

ZipReader::ZipReader(ZipReader&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), file_size_(other.file_size_), entries_(std::move(other.entries_)) {
  other.fd_ = -1;
}

ZipReader::~ZipReader() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status ZipReader::ReadAt(uint64_t offset, size_t size, char* dst, absl::string_view what) const {
  if (offset > file_size_ || size > file_size_ - offset) {
    return absl::DataLossError(absl::StrCat(path_, ": ", what, " lies past the end of the file (", file_size_,
                                            " bytes): the file is truncated or corrupt"));
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd_, dst + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::DataLossError(absl::StrCat(path_, ": read error in ", what, ": ", std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ZipReader::ReadDirectory() {
  auto corrupt = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat(path_, ": not a readable torch.save zip archive: ", what));
  };
  // The end record is the last 22 bytes plus a comment of up to 64 KiB; torch writes none.
  const uint64_t tail_size = std::min<uint64_t>(file_size_, kEndSize + 0xffff + kZip64LocatorSize);
  std::string tail(tail_size, '\0');
  if (absl::Status s = ReadAt(file_size_ - tail_size, tail_size, tail.data(), "the end record"); !s.ok()) return s;
  int64_t end = -1;
  for (int64_t p = static_cast<int64_t>(tail_size) - kEndSize; p >= 0; --p) {
    if (Get(&tail[p], 4) == kEnd && p + kEndSize + Get(&tail[p + 20], 2) == tail_size) {
      end = p;
      break;
    }
  }
  if (end < 0) return corrupt("no end-of-central-directory record (truncated, or not a zip file)");
  const char* e = &tail[end];
  if (Get(e + 4, 2) != 0 || Get(e + 6, 2) != 0) return corrupt("a multi-disk archive");
  uint64_t count = Get(e + 10, 2), dir_size = Get(e + 12, 4), dir_offset = Get(e + 16, 4);
  const uint64_t end_offset = file_size_ - tail_size + end;
  // zip64: the locator sits right before the end record and points at the zip64 end record.
  if (end >= static_cast<int64_t>(kZip64LocatorSize) && Get(e - kZip64LocatorSize, 4) == kZip64Locator) {
    const uint64_t z64_offset = Get(e - kZip64LocatorSize + 8, 8);
    char z[kZip64EndSize];
    if (absl::Status s = ReadAt(z64_offset, kZip64EndSize, z, "the zip64 end record"); !s.ok()) return s;
    if (Get(z, 4) != kZip64End) return corrupt("the zip64 locator points at no zip64 end record");
    count = Get(z + 32, 8), dir_size = Get(z + 40, 8), dir_offset = Get(z + 48, 8);
  }
  if (dir_offset > end_offset || dir_size > end_offset - dir_offset) {
    return corrupt("the central directory lies outside the file (truncated)");
  }
  std::string dir(dir_size, '\0');
  if (absl::Status s = ReadAt(dir_offset, dir_size, dir.data(), "the central directory"); !s.ok()) return s;
  absl::flat_hash_set<std::string> names;
  size_t p = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (dir.size() - p < kCentralHeaderSize || Get(&dir[p], 4) != kCentralHeader) {
      return corrupt(absl::StrCat("central directory entry ", i, " of ", count, " is malformed"));
    }
    const char* h = &dir[p];
    const uint64_t flags = Get(h + 8, 2), method = Get(h + 10, 2), name_len = Get(h + 28, 2),
                   extra_len = Get(h + 30, 2), comment_len = Get(h + 32, 2);
    if (dir.size() - p - kCentralHeaderSize < name_len + extra_len + comment_len) {
      return corrupt(absl::StrCat("central directory entry ", i, " runs past the directory"));
    }
    ZipEntry entry;
    entry.name = dir.substr(p + kCentralHeaderSize, name_len);
    entry.crc32 = static_cast<uint32_t>(Get(h + 16, 4));
    uint64_t compressed = Get(h + 20, 4), size = Get(h + 24, 4), header = Get(h + 42, 4);
    // The zip64 extra field holds, in this order, each of the three that overflowed 32 bits.
    const char* x = h + kCentralHeaderSize + name_len;
    for (size_t q = 0; q + 4 <= extra_len;) {
      const uint64_t id = Get(x + q, 2), len = Get(x + q + 2, 2);
      if (q + 4 + len > extra_len) return corrupt(absl::StrCat("entry ", entry.name, ": a malformed extra field"));
      if (id == 1) {
        size_t r = q + 4;
        for (uint64_t* field : {&size, &compressed, &header}) {
          if (*field != kOverflow32) continue;
          if (r + 8 > q + 4 + len) return corrupt(absl::StrCat("entry ", entry.name, ": a short zip64 extra field"));
          *field = Get(x + r, 8);
          r += 8;
        }
      }
      q += 4 + len;
    }
    const std::string who = absl::StrCat("entry ", entry.name);
    if (flags & 1) return corrupt(absl::StrCat(who, " is encrypted"));
    if (method != 0) {
      return corrupt(absl::StrCat(who, " is compressed (method ", method, "); torch.save stores entries uncompressed"));
    }
    if (compressed != size) return corrupt(absl::StrCat(who, ": stored size ", compressed, " != size ", size));
    if (!names.insert(entry.name).second) return corrupt(absl::StrCat(who, " appears twice"));
    char local[kLocalHeaderSize];
    if (absl::Status s = ReadAt(header, kLocalHeaderSize, local, who + "'s local header"); !s.ok()) return s;
    if (Get(local, 4) != kLocalHeader) return corrupt(absl::StrCat(who, ": no local header at offset ", header));
    entry.data_offset = header + kLocalHeaderSize + Get(local + 26, 2) + Get(local + 28, 2);
    entry.size = size;
    if (entry.data_offset > dir_offset || size > dir_offset - entry.data_offset) {
      return absl::DataLossError(absl::StrCat(path_, ": ", who, " (", size, " bytes at offset ", entry.data_offset,
                                              ") runs past the data into the directory: the file is corrupt"));
    }
    entries_.push_back(std::move(entry));
    p += kCentralHeaderSize + name_len + extra_len + comment_len;
  }
  return absl::OkStatus();
}

const ZipEntry* ZipReader::Find(absl::string_view name) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

absl::Status ZipReader::ReadInto(const ZipEntry& entry, char* dst) const {
  const std::string who = absl::StrCat("entry ", entry.name);
  if (absl::Status s = ReadAt(entry.data_offset, entry.size, dst, who); !s.ok()) return s;
  if (const uint32_t crc = Crc32(dst, entry.size); crc != entry.crc32) {
    return absl::DataLossError(absl::StrCat(path_, ": ", who, " fails its CRC-32 check (the data is corrupt)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ZipReader::Read(const ZipEntry& entry) const {
  std::string out(entry.size, '\0');
  if (absl::Status s = ReadInto(entry, out.data()); !s.ok()) return s;
  return out;
}

// --- writing --------------------------------------------------------------------------------

absl::Status ZipWriter::Write(const std::string& bytes) {
  offset_ += bytes.size();
  return out_->Append(bytes.data(), bytes.size());
}

absl::Status ZipWriter::Add(absl::string_view name, const void* data, uint64_t size) {
  if (size >= kOverflow32) {
    return absl::InvalidArgumentError(absl::StrCat("zip entry ", name, " has ", size, " bytes; entries are limited "
                                                   "to 4 GiB"));
  }
  const uint32_t crc = Crc32(data, size);
  std::string h;
  Put(&h, kLocalHeader, 4);
  Put(&h, 20, 2);      // version needed: 2.0
  Put(&h, 0x0800, 2);  // UTF-8 names
  Put(&h, 0, 2);       // stored
  Put(&h, 0, 4);       // time and date: zero, so the bytes depend on the contents only
  Put(&h, crc, 4);
  Put(&h, size, 4);
  Put(&h, size, 4);
  Put(&h, name.size(), 2);
  // Pad with an "FB" extra field so the data starts on a 64-byte boundary, as torch does.
  const uint64_t unpadded = offset_ + kLocalHeaderSize + name.size();
  uint64_t pad = (kAlignment - unpadded % kAlignment) % kAlignment;
  if (pad > 0 && pad < 4) pad += kAlignment;  // an extra field needs 4 bytes of its own
  Put(&h, pad, 2);
  h.append(name.data(), name.size());
  if (pad > 0) {
    h += "FB";
    Put(&h, pad - 4, 2);
    h.append(pad - 4, 'Z');
  }
  written_.push_back({std::string(name), offset_, size, crc});
  if (absl::Status s = Write(h); !s.ok()) return s;
  offset_ += size;
  return out_->Append(data, size);
}

absl::Status ZipWriter::Finish() {
  const uint64_t dir_offset = offset_;
  std::string d;
  for (const Written& w : written_) {
    const bool far = w.header_offset >= kOverflow32;
    Put(&d, kCentralHeader, 4);
    Put(&d, 45, 2);  // made by 4.5 (zip64)
    Put(&d, far ? 45 : 20, 2);
    Put(&d, 0x0800, 2);
    Put(&d, 0, 2);
    Put(&d, 0, 4);
    Put(&d, w.crc32, 4);
    Put(&d, w.size, 4);
    Put(&d, w.size, 4);
    Put(&d, w.name.size(), 2);
    Put(&d, far ? 12 : 0, 2);  // extra
    Put(&d, 0, 2);             // comment
    Put(&d, 0, 2);             // disk
    Put(&d, 0, 2);             // internal attributes
    Put(&d, 0, 4);             // external attributes
    Put(&d, far ? kOverflow32 : w.header_offset, 4);
    d += w.name;
    if (far) {
      Put(&d, 1, 2), Put(&d, 8, 2), Put(&d, w.header_offset, 8);
    }
  }
  const uint64_t dir_size = d.size(), zip64_end = dir_offset + dir_size, n = written_.size();
  Put(&d, kZip64End, 4);
  Put(&d, kZip64EndSize - 12, 8);
  Put(&d, 45, 2), Put(&d, 45, 2);
  Put(&d, 0, 4), Put(&d, 0, 4);  // disks
  Put(&d, n, 8), Put(&d, n, 8);
  Put(&d, dir_size, 8), Put(&d, dir_offset, 8);
  Put(&d, kZip64Locator, 4);
  Put(&d, 0, 4), Put(&d, zip64_end, 8), Put(&d, 1, 4);
  Put(&d, kEnd, 4);
  Put(&d, 0, 2), Put(&d, 0, 2);
  Put(&d, std::min<uint64_t>(n, 0xffff), 2), Put(&d, std::min<uint64_t>(n, 0xffff), 2);
  Put(&d, std::min<uint64_t>(dir_size, kOverflow32), 4);
  Put(&d, std::min<uint64_t>(dir_offset, kOverflow32), 4);
  Put(&d, 0, 2);
  return Write(d);
}

}  // namespace gpt_sft::runtime

// The zip reader and writer: round trips, torch's 64-byte data alignment, zip64 records
// (a central directory entry whose offset lives in the zip64 extra field, as torch writes
// past 4 GiB), and refusals that name the file and the entry.
#include "runtime/checkpoint/zip_archive.h"

#include <string>

#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::runtime {
namespace {

using base::testing::FreshTestDir;
using base::testing::ReadBytes;
using base::testing::WriteBytes;
using ::testing::HasSubstr;

std::string WriteZip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& entries) {
  auto out = *base::AtomicFile::Open(path);
  ZipWriter zip(out.get());
  for (const auto& [name, data] : entries) EXPECT_TRUE(zip.Add(name, data.data(), data.size()).ok());
  EXPECT_TRUE(zip.Finish().ok());
  EXPECT_TRUE(out->Sync().ok());
  EXPECT_TRUE(out->Publish().ok());
  return path;
}

TEST(Zip, RoundTripWithDataOn64ByteBoundaries) {
  const std::string path = WriteZip(FreshTestDir() + "/a.zip", {{"a/x", "hello"}, {"a/yy", std::string(1000, 'y')},
                                                                {"a/empty", ""}, {"a/long/name/" + std::string(70, 'n'), "z"}});
  absl::StatusOr<ZipReader> zip = ZipReader::Open(path);
  ASSERT_TRUE(zip.ok()) << zip.status();
  ASSERT_EQ(zip->entries().size(), 4u);
  for (const ZipEntry& e : zip->entries()) EXPECT_EQ(e.data_offset % 64, 0u) << e.name;
  EXPECT_EQ(*zip->Read(*zip->Find("a/x")), "hello");
  EXPECT_EQ(*zip->Read(*zip->Find("a/yy")), std::string(1000, 'y'));
  EXPECT_EQ(*zip->Read(*zip->Find("a/empty")), "");
  EXPECT_EQ(zip->Find("a/nope"), nullptr);
  EXPECT_EQ(Crc32("123456789", 9), 0xcbf43926u);  // the CRC-32 check value
}

void Put(std::string* s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

TEST(Zip, ReadsZip64OffsetsAndSizes) {
  // One stored entry "d/x" = "abc" at offset 0, its central entry giving size, stored size
  // and offset as 0xffffffff with the real values in the zip64 extra field.
  std::string z;
  Put(&z, 0x04034b50, 4), Put(&z, 45, 2), Put(&z, 0, 2), Put(&z, 0, 2), Put(&z, 0, 4);
  Put(&z, Crc32("abc", 3), 4), Put(&z, 0, 4), Put(&z, 0, 4), Put(&z, 3, 2), Put(&z, 0, 2);
  z += "d/x";
  z += "abc";
  const uint64_t dir_offset = z.size();
  std::string d;
  Put(&d, 0x02014b50, 4), Put(&d, 45, 2), Put(&d, 45, 2), Put(&d, 0, 2), Put(&d, 0, 2), Put(&d, 0, 4);
  Put(&d, Crc32("abc", 3), 4), Put(&d, 0xffffffff, 4), Put(&d, 0xffffffff, 4), Put(&d, 3, 2), Put(&d, 28, 2);
  Put(&d, 0, 2), Put(&d, 0, 2), Put(&d, 0, 2), Put(&d, 0, 4), Put(&d, 0xffffffff, 4);
  d += "d/x";
  Put(&d, 1, 2), Put(&d, 24, 2), Put(&d, 3, 8), Put(&d, 3, 8), Put(&d, 0, 8);
  z += d;
  const uint64_t z64 = z.size();
  Put(&z, 0x06064b50, 4), Put(&z, 44, 8), Put(&z, 45, 2), Put(&z, 45, 2), Put(&z, 0, 4), Put(&z, 0, 4);
  Put(&z, 1, 8), Put(&z, 1, 8), Put(&z, d.size(), 8), Put(&z, dir_offset, 8);
  Put(&z, 0x07064b50, 4), Put(&z, 0, 4), Put(&z, z64, 8), Put(&z, 1, 4);
  Put(&z, 0x06054b50, 4), Put(&z, 0, 4), Put(&z, 0xffff, 2), Put(&z, 0xffff, 2), Put(&z, 0xffffffff, 4);
  Put(&z, 0xffffffff, 4), Put(&z, 0, 2);
  const std::string path = FreshTestDir() + "/z64.zip";
  WriteBytes(path, z);
  absl::StatusOr<ZipReader> zip = ZipReader::Open(path);
  ASSERT_TRUE(zip.ok()) << zip.status();
  ASSERT_EQ(zip->entries().size(), 1u);
  EXPECT_EQ(*zip->Read(zip->entries()[0]), "abc");
}

std::string OpenError(const std::string& path) {
  absl::StatusOr<ZipReader> zip = ZipReader::Open(path);
  return zip.ok() ? "no error" : std::string(zip.status().message());
}

TEST(Zip, RefusalsNameTheFileAndEntry) {
  const std::string dir = FreshTestDir();
  const std::string good = ReadBytes(WriteZip(dir + "/good.zip", {{"a/x", "hello"}, {"a/y", "world"}}));
  // The central directory is the last part; patch entry a/y's compression method to deflate.
  std::string deflated = good;
  const size_t y = deflated.rfind(std::string("\x50\x4b\x01\x02", 4));
  deflated[y + 10] = 8;
  WriteBytes(dir + "/deflated.zip", deflated);
  EXPECT_THAT(OpenError(dir + "/deflated.zip"),
              HasSubstr(dir + "/deflated.zip: not a readable torch.save zip archive: entry a/y is compressed (method 8)"));

  WriteBytes(dir + "/twice.zip", ReadBytes(WriteZip(dir + "/t.zip", {{"a/x", "1"}, {"a/x", "2"}})));
  EXPECT_THAT(OpenError(dir + "/twice.zip"), HasSubstr("entry a/x appears twice"));

  WriteBytes(dir + "/short.zip", good.substr(0, good.size() - 10));
  EXPECT_THAT(OpenError(dir + "/short.zip"), HasSubstr(dir + "/short.zip: not a readable torch.save zip archive"));

  WriteBytes(dir + "/text.zip", "not a zip at all");
  EXPECT_THAT(OpenError(dir + "/text.zip"), HasSubstr("no end-of-central-directory record"));

  EXPECT_THAT(OpenError(dir + "/missing.zip"), HasSubstr(dir + "/missing.zip: cannot open"));

  std::string corrupt = good;
  corrupt[corrupt.find("hello")] = 'j';
  WriteBytes(dir + "/crc.zip", corrupt);
  absl::StatusOr<ZipReader> zip = ZipReader::Open(dir + "/crc.zip");
  ASSERT_TRUE(zip.ok()) << zip.status();
  absl::StatusOr<std::string> x = zip->Read(*zip->Find("a/x"));
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(x.status().message(), HasSubstr(dir + "/crc.zip: entry a/x fails its CRC-32 check"));
}

}  // namespace
}  // namespace gpt_sft::runtime

// ReadPickle against bytes CPython wrote, against PickleWriter's output, and on malformed input.
#include "base/pickle_reader.h"

#include <string>

#include "base/pickle_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::base {
namespace {

using Kind = PickleValue::Kind;
using ::testing::HasSubstr;

// Python 3.11: pickle.dumps({'name': 'x', 'ranks': {b'a': 0, b'\xff': 255, b'ab': 300,
// b'abc': 70000}, 'neg': -5, 'big': 1 << 40, 'f': 1.5, 'l': [1, (2, 3)], 't': True,
// 'n': None}, protocol=4): FRAME, MEMOIZE, SHORT_BINUNICODE, SHORT_BINBYTES, LONG1, ...
const std::string kCpythonProtocol4(
    "\x80\x04\x95\x7b\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x04\x6e\x61\x6d\x65\x94\x8c\x01\x78\x94\x8c\x05"
    "\x72\x61\x6e\x6b\x73\x94\x7d\x94\x28\x43\x01\x61\x94\x4b\x00\x43\x01\xff\x94\x4b\xff\x43\x02\x61\x62\x94\x4d"
    "\x2c\x01\x43\x03\x61\x62\x63\x94\x4a\x70\x11\x01\x00\x75\x8c\x03\x6e\x65\x67\x94\x4a\xfb\xff\xff\xff\x8c\x03"
    "\x62\x69\x67\x94\x8a\x06\x00\x00\x00\x00\x00\x01\x8c\x01\x66\x94\x47\x3f\xf8\x00\x00\x00\x00\x00\x00\x8c\x01"
    "\x6c\x94\x5d\x94\x28\x4b\x01\x4b\x02\x4b\x03\x86\x94\x65\x8c\x01\x74\x94\x88\x8c\x01\x6e\x94\x4e\x75\x2e",
    134);

TEST(ReadPickle, ReadsWhatCpythonWrites) {
  absl::StatusOr<PickleRef> v = ReadPickle(kCpythonProtocol4, "cpython.pkl", {});
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE((*v)->is(Kind::kDict));
  ASSERT_EQ((*v)->entries.size(), 8u);
  EXPECT_EQ((*v)->Find("name")->text, "x");
  const PickleValue* ranks = (*v)->Find("ranks");
  ASSERT_EQ(ranks->entries.size(), 4u);
  EXPECT_EQ(ranks->entries[1].first->text, "\xff");
  EXPECT_TRUE(ranks->entries[1].first->is(Kind::kBytes));
  EXPECT_EQ(ranks->entries[1].second->integer, 255);
  EXPECT_EQ(ranks->entries[2].second->integer, 300);
  EXPECT_EQ(ranks->entries[3].second->integer, 70000);
  EXPECT_EQ((*v)->Find("neg")->integer, -5);
  EXPECT_EQ((*v)->Find("big")->integer, int64_t{1} << 40);
  EXPECT_EQ((*v)->Find("f")->real, 1.5);
  const PickleValue* list = (*v)->Find("l");
  ASSERT_TRUE(list->is(Kind::kList));
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[1]->items[1]->integer, 3);
  EXPECT_TRUE((*v)->Find("t")->boolean);
  EXPECT_TRUE((*v)->Find("n")->is(Kind::kNone));
}

TEST(ReadPickle, ReadsWhatPickleWriterWrites) {
  for (int protocol : {2, 4}) {
    PickleWriter w(protocol);
    w.Global("collections", "OrderedDict");
    w.EmptyTuple();
    w.Reduce();
    w.Mark();
    w.Str(std::string(300, 'k'));
    w.Mark();
    for (int64_t i : {int64_t{0}, int64_t{255}, int64_t{256}, int64_t{65536}, int64_t{-1}, int64_t{-129},
                      int64_t{1} << 31, -(int64_t{1} << 40), INT64_MAX, INT64_MIN}) {
      w.Int(i);
    }
    w.Tuple();
    w.Str("p");
    w.Global("m", "f");
    w.Mark();
    w.Bytes(std::string(1000, 'b'));
    w.Bool(false);
    w.Tuple();
    w.NewObj();
    w.SetItems();
    const std::string bytes = std::move(w).Finish();
    absl::StatusOr<PickleRef> v = ReadPickle(bytes, "w.pkl", {"collections.OrderedDict", "m.f"});
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ((*v)->global, "collections.OrderedDict");
    ASSERT_EQ((*v)->entries.size(), 2u);
    const PickleValue& ints = *(*v)->entries[0].second;
    ASSERT_EQ(ints.items.size(), 10u);
    EXPECT_EQ(ints.items[3]->integer, 65536);
    EXPECT_EQ(ints.items[5]->integer, -129);
    EXPECT_EQ(ints.items[6]->integer, int64_t{1} << 31);
    EXPECT_EQ(ints.items[7]->integer, -(int64_t{1} << 40));
    EXPECT_EQ(ints.items[8]->integer, INT64_MAX);
    EXPECT_EQ(ints.items[9]->integer, INT64_MIN);
    const PickleValue& obj = *(*v)->entries[1].second;
    EXPECT_TRUE(obj.is(Kind::kObject));
    EXPECT_EQ(obj.global, "m.f");
    EXPECT_EQ(obj.items[0]->text.size(), 1000u);
  }
}

std::string Error(const std::string& bytes, absl::flat_hash_set<std::string> allowed = {}) {
  absl::StatusOr<PickleRef> v = ReadPickle(bytes, "bad.pkl", allowed);
  return v.ok() ? "no error" : std::string(v.status().message());
}

TEST(ReadPickle, MalformedInputIsAnErrorNamingTheFileAndOffset) {
  EXPECT_THAT(Error(std::string("\x80\x02\xff.", 4)), HasSubstr("bad.pkl: byte 2: unknown or unsupported pickle opcode 0xff"));
  EXPECT_THAT(Error(kCpythonProtocol4.substr(0, 60)), HasSubstr("truncated"));
  EXPECT_THAT(Error(std::string("\x80\x02\x63os\nsystem\n.", 14)), HasSubstr("global os.system is not one this format uses"));
  EXPECT_THAT(Error(std::string("\x80\x02t.", 4)), HasSubstr("no MARK"));
  EXPECT_THAT(Error(std::string("\x80\x02\x86.", 4)), HasSubstr("stack underflow"));
  EXPECT_THAT(Error(std::string("\x80\x02N.N", 5)), HasSubstr("1 bytes follow the STOP"));
  EXPECT_THAT(Error(std::string("\x80\x02NN.", 5)), HasSubstr("STOP with 2 values"));
  EXPECT_THAT(Error(std::string("\x80\x02h\x07.", 5)), HasSubstr("memo entry 7 was never stored"));
  EXPECT_THAT(Error(std::string("\x80\x09N.", 4)), HasSubstr("pickle protocol 9"));
  EXPECT_THAT(Error(std::string("\x80\x02\x8a\x09", 4)), HasSubstr("does not fit 64 bits"));
  EXPECT_THAT(Error(std::string("\x80\x02X\xff\xff\x00\x00" "ab.", 10)), HasSubstr("truncated"));
}

}  // namespace
}  // namespace gpt_sft::base

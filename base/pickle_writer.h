// PickleWriter: emits pickle opcodes one by one, for files Python reads back (a torch.save
// data.pkl, a tiktoken Encoding). The caller writes the program; the writer picks the
// shortest opcode for each integer, string and byte string, as CPython's pickler does, so
// its output is deterministic. No memo is kept: nothing we write refers back to itself.
#ifndef GPT_SFT_BASE_PICKLE_WRITER_H_
#define GPT_SFT_BASE_PICKLE_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace gpt_sft::base {

class PickleWriter {
 public:
  /// Protocol 2 is what torch.save writes (and all torch.load's weights_only reader takes);
  /// below 4 strings are always BINUNICODE.
  explicit PickleWriter(int protocol) : protocol_(protocol) { Op(0x80), out_ += static_cast<char>(protocol); }

  void Global(absl::string_view module, absl::string_view name);  // GLOBAL "module\nname\n"
  void Int(int64_t v);                       // BININT1 / BININT2 / BININT / LONG1
  void Str(absl::string_view utf8);          // SHORT_BINUNICODE (protocol >= 4) / BINUNICODE
  void Bytes(absl::string_view bytes);       // SHORT_BINBYTES / BINBYTES
  void Bool(bool v) { Op(v ? 0x88 : 0x89); }  // NEWTRUE / NEWFALSE
  void Mark() { Op('('); }
  void Tuple() { Op('t'); }                  // the values since the last Mark
  void EmptyTuple() { Op(')'); }
  void EmptyDict() { Op('}'); }
  void SetItems() { Op('u'); }               // key, value pairs since the last Mark
  void Reduce() { Op('R'); }                 // callable, args -> callable(*args)
  void NewObj() { Op(0x81); }                // cls, args -> cls.__new__(cls, *args)
  void Build() { Op('b'); }                  // obj, state -> obj.__setstate__(state)
  void PersistentId() { Op('Q'); }           // BINPERSID
  /// STOP, then the finished pickle.
  std::string Finish() && {
    Op('.');
    return std::move(out_);
  }

 private:
  void Op(int op) { out_ += static_cast<char>(op); }
  void Le(uint64_t v, int n);  // n little-endian bytes
  int protocol_;
  std::string out_;
};

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_PICKLE_WRITER_H_

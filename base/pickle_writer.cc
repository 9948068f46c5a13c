// Implements PickleWriter's opcodes with length or value operands.
#include "base/pickle_writer.h"

#include "absl/strings/str_cat.h"

namespace gpt_sft::base {

void PickleWriter::Le(uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
}

void PickleWriter::Global(absl::string_view module, absl::string_view name) {
  Op('c');
  absl::StrAppend(&out_, module, "\n", name, "\n");
}

void PickleWriter::Int(int64_t v) {
  if (v >= 0 && v < 256) {
    Op('K'), Le(v, 1);
  } else if (v >= 0 && v < 65536) {
    Op('M'), Le(v, 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    Op('J'), Le(static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
  } else {
    // LONG1 with the fewest two's-complement bytes that keep the sign, as CPython encodes.
    int n = 8;
    while (n > 1) {
      const int64_t top = v >> (8 * (n - 1) - 1);  // the bits the shorter form would drop, and its sign bit
      if (top != 0 && top != -1) break;
      --n;
    }
    Op(0x8a), Le(n, 1), Le(static_cast<uint64_t>(v), n);
  }
}

void PickleWriter::Str(absl::string_view utf8) {
  if (protocol_ >= 4 && utf8.size() < 256) {
    Op(0x8c), Le(utf8.size(), 1);
  } else {
    Op('X'), Le(utf8.size(), 4);
  }
  out_.append(utf8.data(), utf8.size());
}

void PickleWriter::Bytes(absl::string_view bytes) {
  if (bytes.size() < 256) {
    Op('C'), Le(bytes.size(), 1);
  } else {
    Op('B'), Le(bytes.size(), 4);
  }
  out_.append(bytes.data(), bytes.size());
}

}  // namespace gpt_sft::base

// ReadPickle: decodes the pickle opcodes of protocols 2 to 5 that plain data uses (what
// torch.save writes for a state_dict and pickle.dump writes for a tiktoken Encoding) into a
// PickleValue tree, without running Python: like torch.load(weights_only=True), only the
// globals the caller allows may appear, and nothing is called (base/pickle_value.h).
//
// Opcodes understood: PROTO FRAME STOP MARK POP POP_MARK; NONE NEWTRUE NEWFALSE BININT BININT1
// BININT2 LONG1 BINFLOAT; BINUNICODE SHORT_BINUNICODE BINUNICODE8 BINBYTES SHORT_BINBYTES
// BINBYTES8; EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3 EMPTY_LIST LIST APPEND APPENDS EMPTY_DICT DICT
// SETITEM SETITEMS; BINPUT LONG_BINPUT MEMOIZE BINGET LONG_BINGET; GLOBAL STACK_GLOBAL REDUCE
// NEWOBJ BUILD BINPERSID. Any other opcode, a global not allowed, a truncated or inconsistent
// stream (stack underflow, a missing MARK or memo entry, data after STOP) is an error
// "<where>: byte <offset>: <what>".
#ifndef GPT_SFT_BASE_PICKLE_READER_H_
#define GPT_SFT_BASE_PICKLE_READER_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/pickle_value.h"

namespace gpt_sft::base {

/// `allowed_globals` holds "module.name" strings (e.g. "collections.OrderedDict").
/// `where` names the input in errors (a file, or "model.pt entry model/data.pkl").
/// REDUCE of collections.OrderedDict with no arguments builds a kDict (its SETITEMS fill it).
absl::StatusOr<PickleRef> ReadPickle(absl::string_view bytes, absl::string_view where,
                                     const absl::flat_hash_set<std::string>& allowed_globals);

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_PICKLE_READER_H_

// PickleValue: the Python objects a pickle of plain data builds, as a tree our readers walk
// (base/pickle_reader.h). Calls are not run: a class or function the pickle calls stays a
// record of what it would have called (kObject with the callable's name, its arguments and
// any BUILD state), and a persistent id stays a kPersistentId; the reader of a particular
// format (torch.save's data.pkl, tiktoken's Encoding) gives them meaning.
#ifndef GPT_SFT_BASE_PICKLE_VALUE_H_
#define GPT_SFT_BASE_PICKLE_VALUE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpt_sft::base {

struct PickleValue;
using PickleRef = std::shared_ptr<PickleValue>;

struct PickleValue {
  enum class Kind {
    kNone,
    kBool,
    kInt,           // fits int64 (a longer LONG1 is refused by the reader)
    kFloat,
    kString,        // str, as UTF-8 bytes
    kBytes,         // bytes
    kTuple,
    kList,
    kDict,          // dict, or collections.OrderedDict() (global says which)
    kGlobal,        // a class or function named by GLOBAL / STACK_GLOBAL
    kObject,        // global(*args) by REDUCE or global.__new__(global, *args) by NEWOBJ
    kPersistentId,  // BINPERSID's argument, in items[0]
  };

  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;                                 // kString, kBytes
  std::string global;                               // "module.name": kGlobal, kObject; kDict if ordered
  std::vector<PickleRef> items;                     // kTuple, kList, kObject's args, kPersistentId
  std::vector<std::pair<PickleRef, PickleRef>> entries;  // kDict, in insertion order
  PickleRef state;                                  // BUILD's argument (kObject, kDict), else null

  bool is(Kind k) const { return kind == k; }
  /// "str 'wte'", "tuple of 3", "int 7", "torch.FloatStorage", ... for error messages.
  std::string Describe() const;
  /// The value under string key `key` of a kDict, or null.
  const PickleValue* Find(const std::string& key) const;
};

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_PICKLE_VALUE_H_

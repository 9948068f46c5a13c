// Implements ReadPickle: a stack machine over the opcodes listed in the header. Every read
// is bounds-checked against the input, every pop against the stack (and the last MARK).
#include "base/pickle_reader.h"

#include <cstring>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpt_sft::base {
namespace {

using Kind = PickleValue::Kind;

PickleRef Make(Kind kind) {
  auto v = std::make_shared<PickleValue>();
  v->kind = kind;
  return v;
}

class Unpickler {
 public:
  Unpickler(absl::string_view bytes, absl::string_view where, const absl::flat_hash_set<std::string>& allowed)
      : in_(bytes), where_(where), allowed_(allowed) {}

  absl::StatusOr<PickleRef> Run() {
    while (true) {
      op_start_ = pos_;
      if (pos_ >= in_.size()) return Error("the pickle ends before its STOP opcode (truncated)");
      const uint8_t op = static_cast<uint8_t>(in_[pos_++]);
      if (op == '.') break;  // STOP
      if (absl::Status s = Step(op); !s.ok()) return s;
    }
    if (pos_ != in_.size()) {
      return Error(absl::StrCat(in_.size() - pos_, " bytes follow the STOP opcode"));
    }
    if (stack_.size() != 1 || !marks_.empty()) {
      return Error(absl::StrCat("STOP with ", stack_.size(), " values and ", marks_.size(),
                                " open MARKs on the stack (expected one value)"));
    }
    return stack_.back();
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(where_, ": byte ", op_start_, ": ", what));
  }

  absl::Status Need(size_t n) const {
    if (in_.size() - pos_ >= n) return absl::OkStatus();
    return Error(absl::StrCat("the pickle is truncated (", n, " bytes needed, ", in_.size() - pos_, " left)"));
  }

  // Little-endian unsigned integer of n <= 8 bytes.
  absl::StatusOr<uint64_t> Uint(size_t n) {
    if (absl::Status s = Need(n); !s.ok()) return s;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(in_[pos_ + i])} << (8 * i);
    pos_ += n;
    return v;
  }

  absl::StatusOr<std::string> Bytes(size_t length_bytes) {
    absl::StatusOr<uint64_t> n = Uint(length_bytes);
    if (!n.ok()) return n.status();
    if (absl::Status s = Need(*n); !s.ok()) return s;
    std::string out(in_.substr(pos_, *n));
    pos_ += *n;
    return out;
  }

  absl::StatusOr<std::string> Line() {
    const size_t end = in_.find('\n', pos_);
    if (end == absl::string_view::npos) return Error("GLOBAL's name has no terminating newline (truncated)");
    std::string out(in_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }

  absl::StatusOr<PickleRef> Pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() == marks_.back())) {
      return Error("stack underflow");
    }
    PickleRef v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }

  // The values above the last MARK, removing them and the MARK.
  absl::StatusOr<std::vector<PickleRef>> PopMark() {
    if (marks_.empty()) return Error("no MARK on the stack");
    std::vector<PickleRef> out(stack_.begin() + marks_.back(), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return out;
  }

  absl::Status Push(PickleRef v) {
    stack_.push_back(std::move(v));
    return absl::OkStatus();
  }

  absl::Status PushInt(int64_t i) {
    PickleRef v = Make(Kind::kInt);
    v->integer = i;
    return Push(v);
  }

  absl::Status PushText(Kind kind, absl::StatusOr<std::string> text) {
    if (!text.ok()) return text.status();
    PickleRef v = Make(kind);
    v->text = *std::move(text);
    return Push(v);
  }

  absl::Status PushTuple(std::vector<PickleRef> items) {
    PickleRef v = Make(Kind::kTuple);
    v->items = std::move(items);
    return Push(v);
  }

  absl::Status PushTupleOf(size_t n) {
    std::vector<PickleRef> items(n);
    for (size_t i = n; i-- > 0;) {
      absl::StatusOr<PickleRef> v = Pop();
      if (!v.ok()) return v.status();
      items[i] = *v;
    }
    return PushTuple(std::move(items));
  }

  absl::Status PushGlobal(const std::string& module, const std::string& name) {
    const std::string full = absl::StrCat(module, ".", name);
    if (!allowed_.contains(full)) {
      return Error(absl::StrCat("global ", full, " is not one this format uses (refused, as torch.load's weights_only "
                                "refuses it)"));
    }
    PickleRef v = Make(Kind::kGlobal);
    v->global = full;
    return Push(v);
  }

  absl::Status Memo(uint64_t index) {
    if (stack_.empty()) return Error("memo put with an empty stack");
    memo_[index] = stack_.back();
    return absl::OkStatus();
  }

  absl::Status FromMemo(absl::StatusOr<uint64_t> index) {
    if (!index.ok()) return index.status();
    auto it = memo_.find(*index);
    if (it == memo_.end()) return Error(absl::StrCat("memo entry ", *index, " was never stored"));
    return Push(it->second);
  }

  // Adds key/value pairs to the dict below them.
  absl::Status SetItems(std::vector<PickleRef> kv) {
    if (kv.size() % 2 != 0) return Error(absl::StrCat("SETITEMS with an odd number (", kv.size(), ") of values"));
    if (stack_.empty() || (!marks_.empty() && stack_.size() == marks_.back()) || !stack_.back()->is(Kind::kDict)) {
      return Error("SETITEM(S) without a dict below its items");
    }
    PickleValue& dict = *stack_.back();
    for (size_t i = 0; i < kv.size(); i += 2) {
      if (!kv[i]->is(Kind::kString) && !kv[i]->is(Kind::kBytes) && !kv[i]->is(Kind::kInt)) {
        return Error(absl::StrCat("a dict key is a ", kv[i]->Describe(), "; this reader takes str, bytes and int keys"));
      }
      dict.entries.emplace_back(kv[i], kv[i + 1]);
    }
    return absl::OkStatus();
  }

  absl::Status Append(std::vector<PickleRef> values) {
    if (stack_.empty() || (!marks_.empty() && stack_.size() == marks_.back()) || !stack_.back()->is(Kind::kList)) {
      return Error("APPEND(S) without a list below its items");
    }
    for (PickleRef& v : values) stack_.back()->items.push_back(std::move(v));
    return absl::OkStatus();
  }

  // REDUCE (callable, args) and NEWOBJ (cls, args): recorded, never called.
  absl::Status Call() {
    absl::StatusOr<PickleRef> args = Pop();
    if (!args.ok()) return args.status();
    absl::StatusOr<PickleRef> callable = Pop();
    if (!callable.ok()) return callable.status();
    if (!(*callable)->is(Kind::kGlobal)) return Error(absl::StrCat("a call of ", (*callable)->Describe(), ", not of a global"));
    if (!(*args)->is(Kind::kTuple)) return Error(absl::StrCat("call arguments are a ", (*args)->Describe(), ", not a tuple"));
    if ((*callable)->global == "collections.OrderedDict" && (*args)->items.empty()) {
      PickleRef dict = Make(Kind::kDict);
      dict->global = "collections.OrderedDict";
      return Push(dict);
    }
    PickleRef obj = Make(Kind::kObject);
    obj->global = (*callable)->global;
    obj->items = (*args)->items;
    return Push(obj);
  }

  absl::Status Build() {
    absl::StatusOr<PickleRef> state = Pop();
    if (!state.ok()) return state.status();
    if (stack_.empty() || !(stack_.back()->is(Kind::kObject) || stack_.back()->is(Kind::kDict))) {
      return Error("BUILD without an object below its state");
    }
    stack_.back()->state = *state;
    return absl::OkStatus();
  }

  absl::Status Step(uint8_t op) {
    switch (op) {
      case 0x80: {  // PROTO
        absl::StatusOr<uint64_t> v = Uint(1);
        if (!v.ok()) return v.status();
        if (*v < 2 || *v > 5) return Error(absl::StrCat("pickle protocol ", *v, " (this reader takes 2 to 5)"));
        return absl::OkStatus();
      }
      case 0x95: return Uint(8).status();  // FRAME: a length hint only
      case '(': marks_.push_back(stack_.size()); return absl::OkStatus();  // MARK
      case '0': return Pop().status();                                    // POP
      case '1': return PopMark().status();                                // POP_MARK
      case 'N': return Push(Make(Kind::kNone));
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        PickleRef v = Make(Kind::kBool);
        v->boolean = op == 0x88;
        return Push(v);
      }
      case 'J': {  // BININT: signed 4 bytes
        absl::StatusOr<uint64_t> v = Uint(4);
        if (!v.ok()) return v.status();
        return PushInt(static_cast<int32_t>(static_cast<uint32_t>(*v)));
      }
      case 'K':  // BININT1
      case 'M': {  // BININT2
        absl::StatusOr<uint64_t> v = Uint(op == 'K' ? 1 : 2);
        if (!v.ok()) return v.status();
        return PushInt(static_cast<int64_t>(*v));
      }
      case 0x8a: {  // LONG1: n bytes, two's complement
        absl::StatusOr<uint64_t> n = Uint(1);
        if (!n.ok()) return n.status();
        if (*n > 8) return Error(absl::StrCat("a ", *n, "-byte integer does not fit 64 bits"));
        absl::StatusOr<uint64_t> v = Uint(*n);
        if (!v.ok()) return v.status();
        uint64_t u = *v;
        if (*n > 0 && *n < 8 && (u >> (8 * *n - 1)) & 1) u |= ~uint64_t{0} << (8 * *n);  // sign-extend
        return PushInt(static_cast<int64_t>(u));
      }
      case 'G': {  // BINFLOAT: big-endian double
        absl::StatusOr<uint64_t> v = Uint(8);
        if (!v.ok()) return v.status();
        uint64_t be = 0;
        for (int i = 0; i < 8; ++i) be |= ((*v >> (8 * i)) & 0xff) << (8 * (7 - i));
        PickleRef f = Make(Kind::kFloat);
        std::memcpy(&f->real, &be, 8);
        return Push(f);
      }
      case 'X': return PushText(Kind::kString, Bytes(4));     // BINUNICODE
      case 0x8c: return PushText(Kind::kString, Bytes(1));    // SHORT_BINUNICODE
      case 0x8d: return PushText(Kind::kString, Bytes(8));    // BINUNICODE8
      case 'B': return PushText(Kind::kBytes, Bytes(4));      // BINBYTES
      case 'C': return PushText(Kind::kBytes, Bytes(1));      // SHORT_BINBYTES
      case 0x8e: return PushText(Kind::kBytes, Bytes(8));     // BINBYTES8
      case ')': return PushTuple({});                         // EMPTY_TUPLE
      case 0x85: return PushTupleOf(1);
      case 0x86: return PushTupleOf(2);
      case 0x87: return PushTupleOf(3);
      case 't': {  // TUPLE
        absl::StatusOr<std::vector<PickleRef>> items = PopMark();
        if (!items.ok()) return items.status();
        return PushTuple(*std::move(items));
      }
      case ']': return Push(Make(Kind::kList));  // EMPTY_LIST
      case 'l': {                                // LIST
        absl::StatusOr<std::vector<PickleRef>> items = PopMark();
        if (!items.ok()) return items.status();
        PickleRef v = Make(Kind::kList);
        v->items = *std::move(items);
        return Push(v);
      }
      case 'a': {  // APPEND
        absl::StatusOr<PickleRef> v = Pop();
        if (!v.ok()) return v.status();
        return Append({*v});
      }
      case 'e': {  // APPENDS
        absl::StatusOr<std::vector<PickleRef>> items = PopMark();
        if (!items.ok()) return items.status();
        return Append(*std::move(items));
      }
      case '}': return Push(Make(Kind::kDict));  // EMPTY_DICT
      case 'd': {                                // DICT
        absl::StatusOr<std::vector<PickleRef>> kv = PopMark();
        if (!kv.ok()) return kv.status();
        if (absl::Status s = Push(Make(Kind::kDict)); !s.ok()) return s;
        return SetItems(*std::move(kv));
      }
      case 's': {  // SETITEM
        absl::StatusOr<PickleRef> value = Pop();
        if (!value.ok()) return value.status();
        absl::StatusOr<PickleRef> key = Pop();
        if (!key.ok()) return key.status();
        return SetItems({*key, *value});
      }
      case 'u': {  // SETITEMS
        absl::StatusOr<std::vector<PickleRef>> kv = PopMark();
        if (!kv.ok()) return kv.status();
        return SetItems(*std::move(kv));
      }
      case 'q': {  // BINPUT
        absl::StatusOr<uint64_t> i = Uint(1);
        return i.ok() ? Memo(*i) : i.status();
      }
      case 'r': {  // LONG_BINPUT
        absl::StatusOr<uint64_t> i = Uint(4);
        return i.ok() ? Memo(*i) : i.status();
      }
      case 0x94: return Memo(memo_.size());  // MEMOIZE
      case 'h': return FromMemo(Uint(1));    // BINGET
      case 'j': return FromMemo(Uint(4));    // LONG_BINGET
      case 'c': {                            // GLOBAL
        absl::StatusOr<std::string> module = Line();
        if (!module.ok()) return module.status();
        absl::StatusOr<std::string> name = Line();
        if (!name.ok()) return name.status();
        return PushGlobal(*module, *name);
      }
      case 0x93: {  // STACK_GLOBAL
        absl::StatusOr<PickleRef> name = Pop();
        if (!name.ok()) return name.status();
        absl::StatusOr<PickleRef> module = Pop();
        if (!module.ok()) return module.status();
        if (!(*module)->is(Kind::kString) || !(*name)->is(Kind::kString)) {
          return Error("STACK_GLOBAL's module and name are not both str");
        }
        return PushGlobal((*module)->text, (*name)->text);
      }
      case 'R':
      case 0x81: return Call();  // REDUCE, NEWOBJ
      case 'b': return Build();  // BUILD
      case 'Q': {                // BINPERSID
        absl::StatusOr<PickleRef> pid = Pop();
        if (!pid.ok()) return pid.status();
        PickleRef v = Make(Kind::kPersistentId);
        v->items = {*pid};
        return Push(v);
      }
      default:
        return Error(absl::StrFormat("unknown or unsupported pickle opcode 0x%02x", op));
    }
  }

  absl::string_view in_;
  absl::string_view where_;
  const absl::flat_hash_set<std::string>& allowed_;
  size_t pos_ = 0, op_start_ = 0;
  std::vector<PickleRef> stack_;
  std::vector<size_t> marks_;  // stack sizes at each open MARK
  absl::flat_hash_map<uint64_t, PickleRef> memo_;
};

}  // namespace

absl::StatusOr<PickleRef> ReadPickle(absl::string_view bytes, absl::string_view where,
                                     const absl::flat_hash_set<std::string>& allowed_globals) {
  return Unpickler(bytes, where, allowed_globals).Run();
}

}  // namespace gpt_sft::base

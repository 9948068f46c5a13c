// Implements reading and writing torch.save state_dicts (see the header for the layout).
#include "runtime/checkpoint/torch_state_dict.h"

#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/pickle_reader.h"
#include "base/pickle_writer.h"

namespace gpt_sft::runtime {
namespace {

using base::PickleValue;
using Kind = PickleValue::Kind;

constexpr char kRebuildTensor[] = "torch._utils._rebuild_tensor_v2";

// Every storage type torch.save names is allowed in the pickle, so that one nanochat does not
// save is reported by its type rather than as an unknown global.
const absl::flat_hash_set<std::string>& AllowedGlobals() {
  static const auto* globals = new absl::flat_hash_set<std::string>{
      "collections.OrderedDict", kRebuildTensor, "torch.FloatStorage", "torch.BFloat16Storage",
      "torch.HalfStorage", "torch.DoubleStorage", "torch.LongStorage", "torch.IntStorage",
      "torch.ShortStorage", "torch.CharStorage", "torch.ByteStorage", "torch.BoolStorage"};
  return *globals;
}

int64_t ItemSize(TorchDtype d) { return d == TorchDtype::kFloat32 ? 4 : 2; }

absl::StatusOr<std::vector<int64_t>> IntTuple(const PickleValue& v) {
  if (!v.is(Kind::kTuple)) return absl::InvalidArgumentError(absl::StrCat("a ", v.Describe(), ", not a tuple of ints"));
  std::vector<int64_t> out;
  for (const base::PickleRef& item : v.items) {
    if (!item->is(Kind::kInt)) return absl::InvalidArgumentError(absl::StrCat("a tuple holding a ", item->Describe()));
    out.push_back(item->integer);
  }
  return out;
}

// The parts of one _rebuild_tensor_v2 call, checked against the archive.
absl::StatusOr<TorchTensor> TensorOf(const std::string& name, const PickleValue& v, const ZipReader& zip,
                                     const std::string& prefix) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(zip.path(), ": tensor ", name, ": ", what));
  };
  if (!v.is(Kind::kObject) || v.global != kRebuildTensor || v.items.size() < 4) {
    return bad(absl::StrCat("is a ", v.Describe(), ", not a tensor rebuilt by ", kRebuildTensor));
  }
  const PickleValue& pid = *v.items[0];
  if (!pid.is(Kind::kPersistentId) || !pid.items[0]->is(Kind::kTuple) || pid.items[0]->items.size() != 5) {
    return bad("its storage is not a persistent id ('storage', type, key, location, numel)");
  }
  const std::vector<base::PickleRef>& s = pid.items[0]->items;
  if (!s[0]->is(Kind::kString) || s[0]->text != "storage" || !s[1]->is(Kind::kGlobal) || !s[2]->is(Kind::kString) ||
      !s[4]->is(Kind::kInt)) {
    return bad("its storage is not a persistent id ('storage', type, key, location, numel)");
  }
  TorchTensor t;
  t.name = name;
  if (s[1]->global == "torch.FloatStorage") {
    t.dtype = TorchDtype::kFloat32;
  } else if (s[1]->global == "torch.BFloat16Storage") {
    t.dtype = TorchDtype::kBFloat16;
  } else {
    return bad(absl::StrCat("its storage is a ", s[1]->global, "; nanochat checkpoints hold float32 and bfloat16 "
                            "(torch.FloatStorage, torch.BFloat16Storage) only"));
  }
  const std::string entry_name = absl::StrCat(prefix, "data/", s[2]->text);
  t.storage = zip.Find(entry_name);
  if (t.storage == nullptr) return bad(absl::StrCat("its storage entry ", entry_name, " is missing from the archive"));
  const int64_t storage_numel = s[4]->integer;
  if (storage_numel < 0 || static_cast<uint64_t>(storage_numel) * ItemSize(t.dtype) != t.storage->size) {
    return bad(absl::StrCat("its storage says ", storage_numel, " elements but entry ", entry_name, " has ",
                            t.storage->size, " bytes"));
  }
  if (!v.items[1]->is(Kind::kInt) || v.items[1]->integer < 0) return bad("its storage offset is not an int >= 0");
  t.storage_offset = v.items[1]->integer;
  absl::StatusOr<std::vector<int64_t>> shape = IntTuple(*v.items[2]);
  if (!shape.ok()) return bad(absl::StrCat("its size is ", shape.status().message()));
  absl::StatusOr<std::vector<int64_t>> stride = IntTuple(*v.items[3]);
  if (!stride.ok()) return bad(absl::StrCat("its stride is ", stride.status().message()));
  if (stride->size() != shape->size()) return bad("its size and stride have different ranks");
  t.shape = *shape;
  int64_t expected = 1;
  for (size_t i = shape->size(); i-- > 0;) {
    if ((*shape)[i] < 0) return bad(absl::StrCat("a negative size, (", absl::StrJoin(*shape, ", "), ")"));
    if ((*shape)[i] != 1 && (*stride)[i] != expected) {
      return bad(absl::StrCat("is not contiguous: size (", absl::StrJoin(*shape, ", "), ") with stride (",
                              absl::StrJoin(*stride, ", "), "); save it with .contiguous()"));
    }
    if ((*shape)[i] != 0 && expected > INT64_MAX / (*shape)[i]) return bad("its size overflows");
    expected *= (*shape)[i];
  }
  if (t.storage_offset > storage_numel || expected > storage_numel - t.storage_offset) {
    return bad(absl::StrCat(expected, " elements from offset ", t.storage_offset, " run past its storage of ",
                            storage_numel));
  }
  return t;
}

}  // namespace

int64_t TorchTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<TorchStateDict> TorchStateDict::Read(const std::string& path) {
  absl::StatusOr<ZipReader> zip = ZipReader::Open(path);
  if (!zip.ok()) return zip.status();
  TorchStateDict dict(*std::move(zip));
  const ZipReader& z = dict.zip_;
  // The one top-level folder is the archive's name; data.pkl sits right under it.
  const ZipEntry* pkl = nullptr;
  for (const ZipEntry& e : z.entries()) {
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.substr(slash + 1) == "data.pkl") pkl = &e;
  }
  if (pkl == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no <archive>/data.pkl entry; not a torch.save file"));
  }
  const std::string prefix = pkl->name.substr(0, pkl->name.size() - std::strlen("data.pkl"));
  if (const ZipEntry* order = z.Find(prefix + "byteorder"); order != nullptr) {
    absl::StatusOr<std::string> text = z.Read(*order);
    if (!text.ok()) return text.status();
    if (*text != "little") {
      return absl::InvalidArgumentError(absl::StrCat(path, ": byteorder is '", *text, "'; only little-endian is read"));
    }
  }
  absl::StatusOr<std::string> bytes = z.Read(*pkl);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<base::PickleRef> root =
      base::ReadPickle(*bytes, absl::StrCat(path, " entry ", pkl->name), AllowedGlobals());
  if (!root.ok()) return root.status();
  if (!(*root)->is(Kind::kDict)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": data.pkl holds a ", (*root)->Describe(), ", not a state_dict (a dict of tensors)"));
  }
  for (const auto& [key, value] : (*root)->entries) {
    if (!key->is(Kind::kString)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": a state_dict key is a ", key->Describe()));
    }
    absl::StatusOr<TorchTensor> t = TensorOf(key->text, *value, z, prefix);
    if (!t.ok()) return t.status();
    dict.tensors_.push_back(*std::move(t));
  }
  return dict;
}

absl::Status TorchStateDict::ReadFloat32(const TorchTensor& t, float* dst) const {
  const int64_t n = t.numel();
  std::string storage(t.storage->size, '\0');
  if (absl::Status s = zip_.ReadInto(*t.storage, storage.data()); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(s.message(), " (tensor ", t.name, ")"));
  }
  const char* src = storage.data() + t.storage_offset * ItemSize(t.dtype);
  if (t.dtype == TorchDtype::kFloat32) {
    std::memcpy(dst, src, n * sizeof(float));
    return absl::OkStatus();
  }
  // bf16 is the top half of a float32: widening is exact.
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    const uint32_t bits = uint32_t{h} << 16;
    std::memcpy(dst + i, &bits, 4);
  }
  return absl::OkStatus();
}

absl::Status WriteTorchStateDict(absl::string_view archive_name, const std::vector<TorchTensorBytes>& tensors,
                                 base::AtomicFile& out) {
  base::PickleWriter p(2);  // torch.save's pickle_protocol
  p.Global("collections", "OrderedDict");
  p.EmptyTuple();
  p.Reduce();
  p.Mark();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TorchTensorBytes& t = tensors[i];
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    p.Str(t.name);
    p.Global("torch._utils", "_rebuild_tensor_v2");
    p.Mark();
    p.Mark();  // the persistent id of the storage
    p.Str("storage");
    p.Global("torch", t.dtype == TorchDtype::kFloat32 ? "FloatStorage" : "BFloat16Storage");
    p.Str(absl::StrCat(i));
    p.Str("cpu");
    p.Int(numel);
    p.Tuple();
    p.PersistentId();
    p.Int(0);  // storage offset
    p.Mark();
    for (int64_t d : t.shape) p.Int(d);
    p.Tuple();
    p.Mark();  // row-major strides
    std::vector<int64_t> stride(t.shape.size(), 1);
    for (size_t k = t.shape.size(); k-- > 1;) stride[k - 1] = stride[k] * t.shape[k];
    for (int64_t s : stride) p.Int(s);
    p.Tuple();
    p.Bool(false);  // requires_grad
    p.Global("collections", "OrderedDict");  // backward hooks: none
    p.EmptyTuple();
    p.Reduce();
    p.Tuple();
    p.Reduce();
  }
  p.SetItems();
  const std::string pickle = std::move(p).Finish();

  ZipWriter zip(&out);
  const std::string dir = absl::StrCat(archive_name, "/");
  if (absl::Status s = zip.Add(dir + "data.pkl", pickle.data(), pickle.size()); !s.ok()) return s;
  if (absl::Status s = zip.Add(dir + "byteorder", "little", 6); !s.ok()) return s;
  for (size_t i = 0; i < tensors.size(); ++i) {
    int64_t numel = 1;
    for (int64_t d : tensors[i].shape) numel *= d;
    const uint64_t bytes = numel * ItemSize(tensors[i].dtype);
    if (absl::Status s = zip.Add(absl::StrCat(dir, "data/", i), tensors[i].data, bytes); !s.ok()) return s;
  }
  if (absl::Status s = zip.Add(dir + "version", "3\n", 2); !s.ok()) return s;
  return zip.Finish();
}

}  // namespace gpt_sft::runtime

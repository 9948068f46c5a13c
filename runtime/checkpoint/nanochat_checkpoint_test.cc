// nanochat checkpoints in and out, against files real PyTorch wrote (tests/nanochat/, made by
// make_nanochat_golden.py: torch.save of a state_dict with nanochat's names, wte bf16, and the
// same weights as an F32 safetensors file of ours), and on malformed input: each error must
// name the file and the entry or tensor at fault.
#include "runtime/checkpoint/nanochat_checkpoint.h"

#include <cmath>
#include <cstring>
#include <filesystem>

#include "base/pickle_writer.h"
#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/param_file.h"
#include "runtime/checkpoint/torch_state_dict.h"
#include "runtime/checkpoint/zip_archive.h"

namespace gpt_sft::runtime {
namespace {

namespace fs = std::filesystem;
using base::testing::FreshTestDir;
using base::testing::ReadBytes;
using base::testing::WriteBytes;
using ::testing::HasSubstr;

const char kGoldenDir[] = "tests/nanochat/base/base_checkpoints/d2";
const char kGoldenPt[] = "tests/nanochat/base/base_checkpoints/d2/model_000007.pt";
const char kGoldenMeta[] = "tests/nanochat/base/base_checkpoints/d2/meta_000007.json";

compiler::ModelConfig GoldenConfig() {
  return *compiler::ModelConfig::FromJson(
      R"({"sequence_len": 64, "vocab_size": 300, "n_layer": 2, "n_head": 2, "n_kv_head": 1, "n_embd": 16})");
}

void ExpectBitEqual(const ParamStore& a, const ParamStore& b) {
  ASSERT_EQ(a.params().size(), b.params().size());
  for (size_t i = 0; i < a.params().size(); ++i) {
    const Param& p = a.params()[i];
    const Param& q = b.params()[i];
    EXPECT_EQ(p.name, q.name);
    ASSERT_EQ(p.shape, q.shape) << p.name;
    EXPECT_EQ(std::memcmp(p.data(), q.data(), p.numel() * sizeof(float)), 0) << p.name;
  }
}

TEST(NanochatCheckpoint, LoadsWhatTorchSavedAsTheSameWeightsAsOurFile) {
  absl::StatusOr<ParamStore> ours = ReadParamFile("tests/nanochat/same_weights.safetensors", GoldenConfig());
  ASSERT_TRUE(ours.ok()) << ours.status();
  for (const std::string& path : {std::string(kGoldenDir), std::string(kGoldenPt)}) {
    absl::StatusOr<LoadedCheckpoint> loaded = LoadNanochatCheckpoint(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->params.config(), GoldenConfig());
    EXPECT_EQ(loaded->meta.record.step, 7);
    ASSERT_EQ(loaded->meta.record.metrics.size(), 1u);
    EXPECT_EQ(loaded->meta.record.metrics[0].first, "val_bpb");
    ExpectBitEqual(loaded->params, *ours);
  }
}

TEST(NanochatCheckpoint, TheGoldenHoldsWteInBf16AndTheRestInFp32) {
  absl::StatusOr<TorchStateDict> sd = TorchStateDict::Read(kGoldenPt);
  ASSERT_TRUE(sd.ok()) << sd.status();
  ASSERT_EQ(sd->tensors().size(), 2u + 6 * 2);
  EXPECT_EQ(sd->tensors()[0].name, "transformer.wte.weight");
  for (const TorchTensor& t : sd->tensors()) {
    EXPECT_EQ(t.dtype, t.name == "transformer.wte.weight" ? TorchDtype::kBFloat16 : TorchDtype::kFloat32) << t.name;
  }
}

TEST(NanochatCheckpoint, SaveThenLoadIsExactAndTheFilesAreDeterministic) {
  absl::StatusOr<LoadedCheckpoint> golden = LoadNanochatCheckpoint(kGoldenDir);
  ASSERT_TRUE(golden.ok()) << golden.status();
  const std::string a = FreshTestDir() + "/a", b = FreshTestDir() + "/b";
  CheckpointRecord record;
  record.step = 7;
  record.metrics = {{"mmlu_acc", 0.25}};
  absl::StatusOr<NanochatCheckpointFiles> saved = SaveNanochatCheckpoint(a, golden->params, record);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(fs::path(saved->model_path).filename(), "model_000007.pt");
  ASSERT_TRUE(SaveNanochatCheckpoint(b, golden->params, record).ok());
  EXPECT_EQ(ReadBytes(a + "/model_000007.pt"), ReadBytes(b + "/model_000007.pt"));
  EXPECT_EQ(base::testing::ListDir(a), (std::vector<std::string>{"meta_000007.json", "model_000007.pt"}));
  absl::StatusOr<LoadedCheckpoint> again = LoadNanochatCheckpoint(a);
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectBitEqual(again->params, golden->params);  // wte came from bf16, so it round-trips exactly
  EXPECT_EQ(ReadBytes(a + "/meta_000007.json"),
            "{\n  \"step\": 7,\n  \"val_loss\": null,\n  \"mmlu_acc\": 0.25,\n  \"model_config\": {\n"
            "    \"sequence_len\": 64,\n    \"vocab_size\": 300,\n    \"n_layer\": 2,\n    \"n_head\": 2,\n"
            "    \"n_kv_head\": 1,\n    \"n_embd\": 16\n  }\n}");
}

// A failure at every write, fsync and rename of a save leaves the checkpoint already there
// as it was, adds no partial step and leaves no temp file.
TEST(NanochatCheckpoint, AFailureAtAnyPointOfASaveLosesNothing) {
  absl::StatusOr<LoadedCheckpoint> golden = LoadNanochatCheckpoint(kGoldenDir);
  ASSERT_TRUE(golden.ok()) << golden.status();
  const std::string dir = FreshTestDir();
  CheckpointRecord old_record;
  old_record.step = 3;
  ASSERT_TRUE(SaveNanochatCheckpoint(dir, golden->params, old_record).ok());
  const std::string old_model = ReadBytes(dir + "/model_000003.pt"), old_meta = ReadBytes(dir + "/meta_000003.json");
  CheckpointRecord record;
  record.step = 9;
  int points = 0;
  for (int fail_at = 0;; ++fail_at) {
    int seen = 0;
    std::string failed_point;
    SaveOptions options;
    options.fault_hook = [&](absl::string_view point) {
      if (seen++ != fail_at) return absl::OkStatus();
      failed_point = std::string(point);
      return absl::InternalError(absl::StrCat("injected at ", point));
    };
    absl::StatusOr<NanochatCheckpointFiles> saved = SaveNanochatCheckpoint(dir, golden->params, record, options);
    if (saved.ok()) break;
    ++points;
    EXPECT_THAT(saved.status().message(), HasSubstr("injected at " + failed_point));
    std::vector<std::string> names = base::testing::ListDir(dir);
    // A failed fsync of the directory after the last rename leaves the complete new step.
    if (names.size() == 4u) {
      EXPECT_EQ(failed_point, "meta_000009.json:fsync directory");
      fs::remove(dir + "/model_000009.pt"), fs::remove(dir + "/meta_000009.json");
      names = base::testing::ListDir(dir);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"meta_000003.json", "model_000003.pt"})) << failed_point;
    EXPECT_EQ(ReadBytes(dir + "/model_000003.pt"), old_model);
    EXPECT_EQ(ReadBytes(dir + "/meta_000003.json"), old_meta);
  }
  EXPECT_GE(points, 8);  // write, fsync, rename, fsync directory, for each of the two files
  EXPECT_TRUE(LoadNanochatCheckpoint(dir + "/model_000009.pt").ok());
}

TEST(NanochatCheckpoint, WteIsRoundedToNearestEvenBf16) {
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  auto from = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  EXPECT_EQ(RoundToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(RoundToBfloat16(from(0x3f808000)), 0x3f80);  // a tie, to the even 0x3f80
  EXPECT_EQ(RoundToBfloat16(from(0x3f818000)), 0x3f82);  // a tie, to the even 0x3f82
  EXPECT_EQ(RoundToBfloat16(from(0x3f808001)), 0x3f81);  // above the tie: up
  EXPECT_EQ(RoundToBfloat16(from(0x3f807fff)), 0x3f80);  // below: down
  EXPECT_EQ(RoundToBfloat16(-2.5f), bits(-2.5f) >> 16);
  EXPECT_EQ(RoundToBfloat16(from(0x7f7fffff)), 0x7f80);  // the largest float rounds to inf, as torch does
  EXPECT_EQ(RoundToBfloat16(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(from(uint32_t{RoundToBfloat16(NAN)} << 16)));
}

// A .pt whose data.pkl is `pickle` and whose storages are `storages`, through our own writer.
std::string WritePt(const std::string& dir, const std::string& pickle,
                    const std::vector<std::pair<std::string, std::string>>& storages) {
  fs::create_directories(dir);
  const std::string path = dir + "/model_000007.pt";
  auto out = *base::AtomicFile::Open(path);
  ZipWriter zip(out.get());
  EXPECT_TRUE(zip.Add("model_000007/data.pkl", pickle.data(), pickle.size()).ok());
  for (const auto& [key, bytes] : storages) {
    EXPECT_TRUE(zip.Add("model_000007/data/" + key, bytes.data(), bytes.size()).ok());
  }
  EXPECT_TRUE(zip.Finish().ok());
  EXPECT_TRUE(out->Sync().ok());
  EXPECT_TRUE(out->Publish().ok());
  return path;
}

// One tensor "t" of `shape`/`stride` over storage "0" of `numel` elements of `storage_type`.
std::string OneTensorPickle(const std::string& storage_type, int64_t numel, std::vector<int64_t> shape,
                            std::vector<int64_t> stride, int64_t offset = 0, const std::string& location = "cpu") {
  base::PickleWriter p(2);
  p.Global("collections", "OrderedDict");
  p.EmptyTuple();
  p.Reduce();
  p.Mark();
  p.Str("t");
  p.Global("torch._utils", "_rebuild_tensor_v2");
  p.Mark();
  p.Mark();
  p.Str("storage");
  p.Global("torch", storage_type);
  p.Str("0");
  p.Str(location);
  p.Int(numel);
  p.Tuple();
  p.PersistentId();
  p.Int(offset);
  p.Mark();
  for (int64_t d : shape) p.Int(d);
  p.Tuple();
  p.Mark();
  for (int64_t s : stride) p.Int(s);
  p.Tuple();
  p.Bool(false);
  p.Global("collections", "OrderedDict");
  p.EmptyTuple();
  p.Reduce();
  p.Tuple();
  p.Reduce();
  p.SetItems();
  return std::move(p).Finish();
}

std::string ReadError(const std::string& path) {
  absl::StatusOr<TorchStateDict> sd = TorchStateDict::Read(path);
  return sd.ok() ? "no error" : std::string(sd.status().message());
}

TEST(NanochatCheckpoint, MalformedArchivesNameTheFileAndEntry) {
  const std::string dir = FreshTestDir();
  const std::string golden = ReadBytes(kGoldenPt);
  // Truncated anywhere: the directory at the end is gone, or points past the end.
  for (size_t cut : {golden.size() - 1, golden.size() - 30, golden.size() / 2, size_t{100}, size_t{0}}) {
    const std::string path = dir + "/cut.pt";
    WriteBytes(path, golden.substr(0, cut));
    EXPECT_THAT(ReadError(path), HasSubstr(path)) << cut;
    EXPECT_FALSE(LoadNanochatCheckpoint(path).ok());
  }
  // A flipped byte in a tensor's data fails that entry's CRC when the tensor is read.
  fs::create_directories(dir + "/crc");
  std::string flipped = golden;
  absl::StatusOr<ZipReader> zip = ZipReader::Open(kGoldenPt);
  ASSERT_TRUE(zip.ok()) << zip.status();
  const ZipEntry* entry = zip->Find("model_000007/data/1");
  ASSERT_NE(entry, nullptr);
  flipped[entry->data_offset + 5] ^= 0x01;
  WriteBytes(dir + "/crc/model_000007.pt", flipped);
  fs::copy_file(kGoldenMeta, dir + "/crc/meta_000007.json");
  absl::StatusOr<LoadedCheckpoint> crc = LoadNanochatCheckpoint(dir + "/crc");
  ASSERT_FALSE(crc.ok());
  EXPECT_THAT(crc.status().message(), HasSubstr("model_000007/data/1 fails its CRC-32 check"));
  EXPECT_THAT(crc.status().message(), HasSubstr(dir + "/crc/model_000007.pt"));
}

TEST(NanochatCheckpoint, ReadsAViewAtAnOffsetOfAGpuSavedStorage) {
  // nanochat saves from the GPU (location "cuda:0"); a tensor may start inside its storage.
  std::string storage(4 * 12, '\0');
  for (int i = 0; i < 12; ++i) {
    const float f = static_cast<float>(i);
    std::memcpy(&storage[4 * i], &f, 4);
  }
  const std::string path = WritePt(FreshTestDir(), OneTensorPickle("FloatStorage", 12, {2, 3}, {3, 1}, 6, "cuda:0"),
                                   {{"0", storage}});
  absl::StatusOr<TorchStateDict> sd = TorchStateDict::Read(path);
  ASSERT_TRUE(sd.ok()) << sd.status();
  std::vector<float> got(6);
  ASSERT_TRUE(sd->ReadFloat32(sd->tensors()[0], got.data()).ok());
  EXPECT_EQ(got, (std::vector<float>{6, 7, 8, 9, 10, 11}));
}

TEST(NanochatCheckpoint, TorchCompilesOrigModPrefixIsStripped) {
  absl::StatusOr<LoadedCheckpoint> golden = LoadNanochatCheckpoint(kGoldenDir);
  ASSERT_TRUE(golden.ok()) << golden.status();
  std::vector<TorchTensorBytes> tensors;
  for (const Param& p : golden->params.params()) {
    tensors.push_back({"_orig_mod." + p.name, TorchDtype::kFloat32, p.shape, p.data()});
  }
  const std::string dir = FreshTestDir();
  auto out = *base::AtomicFile::Open(dir + "/model_000007.pt");
  ASSERT_TRUE(WriteTorchStateDict("model_000007", tensors, *out).ok());
  ASSERT_TRUE(out->Sync().ok() && out->Publish().ok());
  fs::copy_file(kGoldenMeta, dir + "/meta_000007.json");
  absl::StatusOr<LoadedCheckpoint> loaded = LoadNanochatCheckpoint(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectBitEqual(loaded->params, golden->params);
}

TEST(NanochatCheckpoint, MalformedPicklesNameTheFileAndTensor) {
  const std::string dir = FreshTestDir();
  const std::string floats(4 * 6, '\0');
  // Well-formed first, so each case below fails for its own reason only.
  EXPECT_EQ(ReadError(WritePt(dir + "/ok", OneTensorPickle("FloatStorage", 6, {2, 3}, {3, 1}), {{"0", floats}})),
            "no error");
  std::string bad = OneTensorPickle("FloatStorage", 6, {2, 3}, {3, 1});
  bad[bad.size() - 2] = '\xfe';  // SETITEMS -> an opcode pickle does not have
  std::string path = WritePt(dir + "/opcode", bad, {{"0", floats}});
  EXPECT_THAT(ReadError(path), HasSubstr(path + " entry model_000007/data.pkl: byte "));
  EXPECT_THAT(ReadError(path), HasSubstr("unknown or unsupported pickle opcode 0xfe"));

  base::PickleWriter evil(2);
  evil.Global("os", "system");
  path = WritePt(dir + "/global", std::move(evil).Finish(), {});
  EXPECT_THAT(ReadError(path), HasSubstr("global os.system is not one this format uses"));

  path = WritePt(dir + "/half", OneTensorPickle("HalfStorage", 6, {2, 3}, {3, 1}), {{"0", std::string(12, '\0')}});
  EXPECT_THAT(ReadError(path), HasSubstr(path + ": tensor t: its storage is a torch.HalfStorage"));

  path = WritePt(dir + "/stride", OneTensorPickle("FloatStorage", 6, {2, 3}, {1, 2}), {{"0", floats}});
  EXPECT_THAT(ReadError(path), HasSubstr("tensor t: is not contiguous: size (2, 3) with stride (1, 2)"));

  path = WritePt(dir + "/past", OneTensorPickle("FloatStorage", 6, {3, 3}, {3, 1}), {{"0", floats}});
  EXPECT_THAT(ReadError(path), HasSubstr("tensor t: 9 elements from offset 0 run past its storage of 6"));

  path = WritePt(dir + "/size", OneTensorPickle("FloatStorage", 7, {2, 3}, {3, 1}), {{"0", floats}});
  EXPECT_THAT(ReadError(path), HasSubstr("tensor t: its storage says 7 elements but entry model_000007/data/0 has 24"));

  path = WritePt(dir + "/missing", OneTensorPickle("FloatStorage", 6, {2, 3}, {3, 1}), {});
  EXPECT_THAT(ReadError(path), HasSubstr("tensor t: its storage entry model_000007/data/0 is missing"));
}

TEST(NanochatCheckpoint, WrongShapesNamesAndMissingMetaAreErrorsNamingTheFile) {
  const std::string dir = FreshTestDir();
  // The meta's model_config says width 32: every tensor's shape disagrees; the first is named.
  fs::create_directories(dir + "/wide");
  fs::copy_file(kGoldenPt, dir + "/wide/model_000007.pt");
  std::string meta = ReadBytes(kGoldenMeta);
  meta.replace(meta.find("\"n_embd\": 16"), 12, "\"n_embd\": 32");
  WriteBytes(dir + "/wide/meta_000007.json", meta);
  absl::StatusOr<LoadedCheckpoint> wide = LoadNanochatCheckpoint(dir + "/wide");
  ASSERT_FALSE(wide.ok());
  EXPECT_THAT(wide.status().message(),
              HasSubstr(dir + "/wide/model_000007.pt: tensor transformer.wte.weight has shape (300, 16) but the "
                              "model_config of " + dir + "/wide/meta_000007.json gives (300, 32)"));

  // One layer fewer in the meta: the file has a tensor the model does not.
  fs::create_directories(dir + "/deep");
  fs::copy_file(kGoldenPt, dir + "/deep/model_000007.pt");
  meta = ReadBytes(kGoldenMeta);
  meta.replace(meta.find("\"n_layer\": 2"), 12, "\"n_layer\": 1");
  WriteBytes(dir + "/deep/meta_000007.json", meta);
  absl::StatusOr<LoadedCheckpoint> deep = LoadNanochatCheckpoint(dir + "/deep");
  ASSERT_FALSE(deep.ok());
  EXPECT_THAT(deep.status().message(), HasSubstr("tensor transformer.h.1.attn.c_q.weight is not a parameter"));

  fs::create_directories(dir + "/nometa");
  fs::copy_file(kGoldenPt, dir + "/nometa/model_000007.pt");
  absl::StatusOr<LoadedCheckpoint> nometa = LoadNanochatCheckpoint(dir + "/nometa");
  ASSERT_FALSE(nometa.ok());
  EXPECT_THAT(nometa.status().message(), HasSubstr("its meta file " + dir + "/nometa/meta_000007.json is missing"));

  absl::StatusOr<LoadedCheckpoint> empty = LoadNanochatCheckpoint(FreshTestDir());
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("no model_<step>.pt file"));
}

}  // namespace
}  // namespace gpt_sft::runtime

#include "runtime/checkpoint/param_file.h"

#include <cstring>
#include <string>
#include <vector>

#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/params/tiny_param_store.h"
#include "runtime/checkpoint/safetensors.h"

namespace gpt_sft::runtime {
namespace {

using ::testing::HasSubstr;
using base::testing::FreshTestDir;
using base::testing::ReadBytes;
using base::testing::WriteBytes;

using testing::Tiny;
using testing::TinyStore;

// A tensor for a hand-assembled file.
struct Blob {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

std::vector<Blob> BlobsOf(const ParamStore& s) {
  std::vector<Blob> out;
  for (const Param& p : s.params()) {
    out.push_back({p.name, "F32", p.shape, std::string(reinterpret_cast<const char*>(p.data()), p.numel() * 4)});
  }
  return out;
}

void WriteBlobs(const std::string& path, const std::vector<Blob>& blobs) {
  std::vector<TensorInfo> infos;
  std::string data;
  for (const Blob& b : blobs) {
    infos.push_back({b.name, b.dtype, b.shape, data.size(), data.size() + b.bytes.size()});
    data += b.bytes;
  }
  WriteBytes(path, EncodeSafetensorsHeader(infos, {}) + data);
}

void ExpectBitEqual(const ParamStore& a, const ParamStore& b) {
  ASSERT_EQ(a.params().size(), b.params().size());
  for (size_t k = 0; k < a.params().size(); ++k) {
    const Param &x = a.params()[k], &y = b.params()[k];
    ASSERT_EQ(x.name, y.name);
    ASSERT_EQ(x.shape, y.shape);
    EXPECT_EQ(std::memcmp(x.data(), y.data(), x.numel() * sizeof(float)), 0) << x.name;
  }
}

std::string Save(const ParamStore& s, const std::string& path) {
  auto f = *base::AtomicFile::Open(path);
  EXPECT_TRUE(WriteParamFile(s, {{"format", "pt"}}, *f).ok());
  EXPECT_TRUE(f->Sync().ok());
  EXPECT_TRUE(f->Publish().ok());
  return path;
}

TEST(ParamFile, RoundTripIsBitExactAndInStoreOrder) {
  const ParamStore s = TinyStore(3);
  const std::string path = Save(s, FreshTestDir() + "/m.safetensors");
  SafetensorsHeader h = *ReadSafetensorsHeader(path);
  ASSERT_EQ(h.tensors.size(), 14u);
  EXPECT_EQ(h.tensors.front().name, "transformer.wte.weight");
  EXPECT_EQ(h.tensors[5].name, "transformer.h.0.mlp.c_fc.weight");
  EXPECT_EQ(h.tensors.back().name, "lm_head.weight");
  for (const TensorInfo& t : h.tensors) EXPECT_EQ(t.dtype, "F32") << t.name;
  EXPECT_EQ(h.data_start % 8, 0u);
  EXPECT_EQ(h.data_size, 1792u * 4);
  ExpectBitEqual(*ReadParamFile(path, Tiny()), s);
}

TEST(ParamFile, Bf16IsWidenedExactly) {
  // nanochat-shaped: wte in BF16 (its top 16 bits), everything else F32.
  const ParamStore s = TinyStore(4);
  std::vector<Blob> blobs = BlobsOf(s);
  const Param& wte = s.params()[0];
  std::string bf16;
  for (int64_t i = 0; i < wte.numel(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &wte.data()[i], 4);
    bf16.push_back(static_cast<char>((bits >> 16) & 0xff));
    bf16.push_back(static_cast<char>(bits >> 24));
  }
  blobs[0] = {wte.name, "BF16", wte.shape, bf16};
  const std::string path = FreshTestDir() + "/nanochat.safetensors";
  WriteBlobs(path, blobs);
  ParamStore loaded = *ReadParamFile(path, Tiny());
  for (int64_t i = 0; i < wte.numel(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &wte.data()[i], 4);
    bits &= 0xffff0000u;
    float want;
    std::memcpy(&want, &bits, 4);
    ASSERT_EQ(loaded.params()[0].data()[i], want) << i;
  }
  for (size_t k = 1; k < s.params().size(); ++k) {
    EXPECT_EQ(std::memcmp(loaded.params()[k].data(), s.params()[k].data(), s.params()[k].numel() * 4), 0);
  }
}

TEST(ParamFile, CompiledPrefixIsStrippedExactly) {
  const ParamStore s = TinyStore(5);
  std::vector<Blob> blobs = BlobsOf(s);
  for (Blob& b : blobs) b.name = "_orig_mod." + b.name;
  const std::string dir = FreshTestDir();
  WriteBlobs(dir + "/p.safetensors", blobs);
  ExpectBitEqual(*ReadParamFile(dir + "/p.safetensors", Tiny()), s);
  // A character-set strip (init's lstrip) would turn "_orig_mod.dlm_head.weight" into a parameter.
  blobs = BlobsOf(s);
  blobs.back().name = "_orig_mod.dlm_head.weight";
  WriteBlobs(dir + "/q.safetensors", blobs);
  EXPECT_THAT(ReadParamFile(dir + "/q.safetensors", Tiny()).status().message(),
              HasSubstr("\"_orig_mod.dlm_head.weight\" is not a parameter"));
}

struct Mutation {
  const char* what;
  void (*apply)(std::vector<Blob>&);
  const char* message;
};

TEST(ParamFile, ForeignContentsAreErrorsNamingFileAndTensor) {
  const Mutation cases[] = {
      {"missing", [](std::vector<Blob>& b) { b.pop_back(); }, "tensor \"lm_head.weight\" is missing"},
      {"extra",
       [](std::vector<Blob>& b) { b.push_back({"transformer.h.2.attn.c_q.weight", "F32", {8, 8}, std::string(256, 0)}); },
       "tensor \"transformer.h.2.attn.c_q.weight\" is not a parameter of this model"},
      {"transposed", [](std::vector<Blob>& b) { b[5].shape = {8, 32}; },
       "tensor \"transformer.h.0.mlp.c_fc.weight\" has shape [8, 32], the model expects [32, 8]"},
      {"f16",
       [](std::vector<Blob>& b) {
         b[0].dtype = "F16";
         b[0].bytes.resize(b[0].bytes.size() / 2);
       },
       "tensor \"transformer.wte.weight\" has dtype F16; only F32 (and BF16"},
      {"i64",
       [](std::vector<Blob>& b) {
         b[1].dtype = "I64";
         b[1].bytes += b[1].bytes;
       },
       "tensor \"transformer.h.0.attn.c_q.weight\" has dtype I64"},
      {"twice",
       [](std::vector<Blob>& b) { b.push_back({"_orig_mod.lm_head.weight", "F32", {16, 8}, b.back().bytes}); },
       "tensor \"lm_head.weight\" appears twice"},
  };
  const std::string dir = FreshTestDir();
  for (const Mutation& m : cases) {
    std::vector<Blob> blobs = BlobsOf(TinyStore(6));
    m.apply(blobs);
    const std::string path = dir + "/" + m.what + ".safetensors";
    WriteBlobs(path, blobs);
    absl::Status s = ReadParamFile(path, Tiny()).status();
    EXPECT_THAT(s.message(), HasSubstr(path)) << m.what;
    EXPECT_THAT(s.message(), HasSubstr(m.message)) << m.what;
  }
}

TEST(ParamFile, TruncatedFileNamesTheTensorCut) {
  const std::string dir = FreshTestDir();
  const std::string bytes = ReadBytes(Save(TinyStore(7), dir + "/m.safetensors"));
  WriteBytes(dir + "/cut.safetensors", bytes.substr(0, bytes.size() - 100));
  absl::Status s = ReadParamFile(dir + "/cut.safetensors", Tiny()).status();
  EXPECT_THAT(s.message(), HasSubstr(dir + "/cut.safetensors"));
  EXPECT_THAT(s.message(), HasSubstr("truncated: tensor \"lm_head.weight\""));
}

TEST(ParamFile, ModelOfAnotherShapeIsRefused) {
  const std::string path = Save(TinyStore(8), FreshTestDir() + "/m.safetensors");
  const compiler::ModelConfig wider = *compiler::ModelConfig::FromDepth(2, 16, 8, 16, 1);
  EXPECT_THAT(ReadParamFile(path, wider).status().message(),
              HasSubstr("\"transformer.wte.weight\" has shape [16, 8], the model expects [16, 16]"));
}

}  // namespace
}  // namespace gpt_sft::runtime

// The exporter against the golden export in tests/nanochat/exported/, which
// make_nanochat_golden.py verified in real PyTorch (torch.load(weights_only=True): nanochat's
// names, shapes, dtypes and values) and with nanochat's own checkpoint_manager.load_model
// ("sft"), whose forward gave the reference logits. CI has no PyTorch, so this test checks
// that the exporter still writes exactly those bytes: while it does, that check holds.
#include "trainer/nanochat_export.h"

#include "base/test_dir.h"
#include "data/tokenizer/tiktoken_pickle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/nanochat_checkpoint.h"

namespace gpt_sft::trainer {
namespace {

using base::testing::FreshTestDir;
using base::testing::ReadBytes;
using ::testing::HasSubstr;

const char kGolden[] = "tests/nanochat/exported";

void ExpectGoldenBytes(const std::string& out) {
  for (const char* file : {"/chatsft_checkpoints/d2/model_000007.pt", "/chatsft_checkpoints/d2/meta_000007.json",
                           "/tokenizer/tokenizer.pkl"}) {
    const std::string golden = ReadBytes(kGolden + std::string(file));
    ASSERT_FALSE(golden.empty()) << file;
    EXPECT_TRUE(ReadBytes(out + file) == golden) << file << " differs from the golden export";
  }
}

TEST(NanochatExport, ReproducesTheExportPyTorchAndNanochatLoaded) {
  absl::StatusOr<runtime::LoadedCheckpoint> nanochat =
      runtime::LoadNanochatCheckpoint("tests/nanochat/base/base_checkpoints/d2");
  ASSERT_TRUE(nanochat.ok()) << nanochat.status();
  absl::StatusOr<data::Tokenizer> tok = data::LoadTiktokenPickle("tests/nanochat/base/tokenizer/tokenizer.pkl");
  ASSERT_TRUE(tok.ok()) << tok.status();
  const std::string out = FreshTestDir();
  absl::StatusOr<NanochatExport> written = ExportNanochat(*nanochat, *tok, out);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->model_path, out + "/chatsft_checkpoints/d2/model_000007.pt");
  ExpectGoldenBytes(out);
}

TEST(NanochatExport, OurCheckpointOfTheSameWeightsExportsToTheSameBytes) {
  absl::StatusOr<runtime::LoadedCheckpoint> nanochat =
      runtime::LoadNanochatCheckpoint("tests/nanochat/base/base_checkpoints/d2");
  ASSERT_TRUE(nanochat.ok()) << nanochat.status();
  absl::StatusOr<data::Tokenizer> tok = data::LoadTiktokenPickle("tests/nanochat/base/tokenizer/tokenizer.pkl");
  ASSERT_TRUE(tok.ok()) << tok.status();
  // Through our own checkpoint API (whatever its file layout): save, resolve, load, export.
  const std::string base = FreshTestDir() + "/ours";
  ASSERT_TRUE(runtime::SaveSftCheckpoint(base, nanochat->params, nanochat->meta.record).ok());
  absl::StatusOr<runtime::ResolvedCheckpoint> where =
      runtime::ResolveCheckpoint(base, runtime::CheckpointSource::kSft, std::nullopt, std::nullopt);
  ASSERT_TRUE(where.ok()) << where.status();
  absl::StatusOr<runtime::LoadedCheckpoint> ours = runtime::LoadCheckpoint(*where);
  ASSERT_TRUE(ours.ok()) << ours.status();
  const std::string out = FreshTestDir() + "/out";
  ASSERT_TRUE(ExportNanochat(*ours, *tok, out).ok());
  ExpectGoldenBytes(out);
}

TEST(NanochatExport, ATokenizerOfAnotherVocabularyIsRefusedBeforeWriting) {
  absl::StatusOr<runtime::LoadedCheckpoint> nanochat =
      runtime::LoadNanochatCheckpoint("tests/nanochat/base/base_checkpoints/d2");
  ASSERT_TRUE(nanochat.ok()) << nanochat.status();
  absl::StatusOr<data::Tokenizer> small = data::Tokenizer::FromMerges(R"(\S+|\s+)", {});
  ASSERT_TRUE(small.ok());
  const std::string out = FreshTestDir() + "/out";
  absl::StatusOr<NanochatExport> written = ExportNanochat(*nanochat, *small, out);
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(written.status().message(), HasSubstr("the tokenizer has 265 tokens but the model has vocab_size 300"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace gpt_sft::trainer

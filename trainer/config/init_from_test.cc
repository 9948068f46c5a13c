// --init_from's resolution against the nanochat goldens of tests/nanochat/ (real torch.save
// and pickle.dump output): the weights, the tokenizer found where nanochat keeps it, and the
// errors, each naming the flag and the paths looked at.
#include "trainer/config/init_from.h"

#include <cstring>
#include <filesystem>

#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/param_file.h"

namespace gpt_sft::trainer {
namespace {

namespace fs = std::filesystem;
using base::testing::FreshTestDir;
using ::testing::HasSubstr;

const char kDir[] = "tests/nanochat/base/base_checkpoints/d2";
const char kPkl[] = "tests/nanochat/base/tokenizer/tokenizer.pkl";

TEST(InitFrom, LoadsTheWeightsAndFindsTheTokenizerInTheBaseDir) {
  for (const std::string& path : {std::string(kDir), std::string(kDir) + "/model_000007.pt"}) {
    absl::StatusOr<InitSource> init = LoadInitSource(path, "");
    ASSERT_TRUE(init.ok()) << init.status();
    EXPECT_EQ(init->tokenizer_path, kPkl);
    EXPECT_EQ(init->where.step, 7);
    EXPECT_EQ(init->where.model_tag, "d2");
    EXPECT_EQ(init->tokenizer.vocab_size(), 300);
    absl::StatusOr<runtime::ParamStore> same =
        runtime::ReadParamFile("tests/nanochat/same_weights.safetensors", init->checkpoint.params.config());
    ASSERT_TRUE(same.ok()) << same.status();
    for (size_t i = 0; i < same->params().size(); ++i) {
      const runtime::Param& p = init->checkpoint.params.params()[i];
      EXPECT_EQ(std::memcmp(p.data(), same->params()[i].data(), p.numel() * 4), 0) << p.name;
    }
  }
}

TEST(InitFrom, TheTokenizerBesideTheCheckpointOrNamedByTheFlag) {
  const std::string dir = FreshTestDir() + "/ckpt";
  fs::create_directories(dir);
  for (const char* f : {"model_000007.pt", "meta_000007.json"}) fs::copy_file(std::string(kDir) + "/" + f, dir + "/" + f);
  absl::StatusOr<InitSource> none = LoadInitSource(dir, "");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("no tokenizer.pkl at " + dir + "/tokenizer.pkl or "));
  EXPECT_THAT(none.status().message(), HasSubstr("--init_tokenizer"));

  absl::StatusOr<InitSource> named = LoadInitSource(dir, kPkl);
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->tokenizer_path, kPkl);

  fs::copy_file(kPkl, dir + "/tokenizer.pkl");
  absl::StatusOr<InitSource> beside = LoadInitSource(dir, "");
  ASSERT_TRUE(beside.ok()) << beside.status();
  EXPECT_EQ(beside->tokenizer_path, dir + "/tokenizer.pkl");
}

TEST(InitFrom, ErrorsNameTheFlag) {
  absl::StatusOr<InitSource> missing = LoadInitSource("/nonexistent/d2", "");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("--init_from: /nonexistent/d2: no such file or directory"));

  const std::string bad_tok = FreshTestDir() + "/tokenizer.pkl";
  base::testing::WriteBytes(bad_tok, "not a pickle");
  absl::StatusOr<InitSource> garbage = LoadInitSource(kDir, bad_tok);
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.status().message(), HasSubstr("--init_tokenizer: " + bad_tok));
}

}  // namespace
}  // namespace gpt_sft::trainer

#include "tests/golden/golden_file.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::tests {
namespace {

using ::testing::HasSubstr;

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

class CommittedGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CommittedGolden, LoadsWithEveryTensorOfTheCase) {
  absl::StatusOr<GoldenFile> g = LoadGoldenFile("tests/golden/" + GetParam() + ".gold");
  ASSERT_TRUE(g.ok()) << g.status();
  auto config = *compiler::ModelConfig::FromJson(g->config_json);
  runtime::ParamStore store = *runtime::ParamStore::Create(config);
  for (const char* name : {"inputs", "targets", "segment_ids", "positions"}) {
    ASSERT_TRUE(g->tensors.count(name)) << name;
    EXPECT_EQ(g->tensors.at(name).shape, (std::vector<int64_t>{2, 64})) << name;
  }
  EXPECT_EQ(g->tensors.at("losses").f32.size(), 3u);
  for (const runtime::Param& p : store.params()) {
    for (const char* prefix : {"grad/", "step1/", "step3/"}) {
      auto it = g->tensors.find(prefix + p.name);
      ASSERT_NE(it, g->tensors.end()) << prefix << p.name;
      EXPECT_EQ(it->second.shape, p.shape) << prefix << p.name;
    }
  }
}

TEST_P(CommittedGolden, ParamStoreDrawsTheReferenceInitialWeights) {
  GoldenFile g = *LoadGoldenFile("tests/golden/" + GetParam() + ".gold");
  const nlohmann::json header = nlohmann::json::parse(g.header_json);
  runtime::ParamStore store = *runtime::ParamStore::Create(*compiler::ModelConfig::FromJson(g.config_json));
  store.InitNanochat(header.at("init_seed").get<uint64_t>(), header.at("zero_output_projections").get<bool>());
  for (const runtime::Param& p : store.params()) {
    const std::vector<double> want = header.at("init_samples").at(p.name).get<std::vector<double>>();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(p.data()[i], static_cast<float>(want[i])) << p.name << "[" << i << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CommittedGolden, ::testing::Values("padded", "packed"));

TEST(GoldenFile, StaleOrForeignFilesSayHowToRegenerate) {
  const std::string good = Bytes("tests/golden/padded.gold");
  std::string wrong_version = good;
  wrong_version[8] = 9;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated.gold", good.substr(0, good.size() - 100)},
      {"foreign.gold", "PK\x03\x04 this is a zip file, not a golden file"},
      {"version.gold", wrong_version},
      {"trailing.gold", good + "xx"},
  };
  for (const auto& [name, bytes] : cases) {
    absl::StatusOr<GoldenFile> g = LoadGoldenFile(WriteTemp(name, bytes));
    ASSERT_FALSE(g.ok()) << name;
    EXPECT_THAT(g.status().message(), HasSubstr(name)) << name;
    EXPECT_THAT(g.status().message(), HasSubstr(kRegenerateCommand)) << name;
  }
  EXPECT_THAT(LoadGoldenFile("/nonexistent.gold").status().message(), HasSubstr("cannot open"));
}

}  // namespace
}  // namespace gpt_sft::tests

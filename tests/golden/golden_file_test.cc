// GoldenFile: the committed golden files load and are self-consistent (header vs shapes vs
// the ParamStore's names), they are as new as make_golden.py says they should be, and
// stale or foreign bytes fail with a message naming the file and the regenerate command.
#include "tests/golden/golden_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::tests {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kCases = {"padded", "packed", "accum2"};

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

std::string U32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A golden file from a header object and raw data, laid out as FORMAT.md says.
std::string Compose(const nlohmann::json& header, const std::string& data, uint32_t version = kGoldenFormatVersion) {
  const std::string text = header.dump();
  return std::string("GPTGOLD\0", 8) + U32(version) + U32(text.size()) + text + data;
}

// Two tensors: "a" f32 [2] = {1.5, -2}, "b" i32 [1, 1] = {7}.
nlohmann::json SmallHeader() {
  return {{"case", "small"},
          {"config", {{"n_layer", 1}}},
          {"tensors",
           {{{"name", "a"}, {"dtype", "f32"}, {"shape", {2}}, {"offset", 0}, {"nbytes", 8}},
            {{"name", "b"}, {"dtype", "i32"}, {"shape", {1, 1}}, {"offset", 8}, {"nbytes", 4}}}}};
}

std::string SmallData() {
  const float a[2] = {1.5f, -2.0f};
  const int32_t b = 7;
  std::string data(12, '\0');
  std::memcpy(data.data(), a, 8);
  std::memcpy(data.data() + 8, &b, 4);
  return data;
}

// The integer assigned to `name` at the start of a line of make_golden.py ("NAME = 2").
int ScriptConstant(const std::string& name) {
  const std::string script = Bytes("tests/golden/make_golden.py");
  std::smatch m;
  if (!std::regex_search(script, m, std::regex("\\n" + name + " = ([0-9]+)"))) return -1;
  return std::stoi(m[1]);
}

class CommittedGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<GoldenFile> g = GoldenFile::Load("tests/golden/" + GetParam() + ".gold");
    ASSERT_TRUE(g.ok()) << g.status();
    g_ = *std::move(g);
    header_ = nlohmann::json::parse(g_.header_json);
  }
  const GoldenTensor& At(const std::string& name) const { return g_.tensors.at(name); }
  GoldenFile g_;
  nlohmann::json header_;
};

TEST_P(CommittedGolden, IsAsNewAsTheGeneratorScript) {
  EXPECT_EQ(g_.case_name, GetParam());
  EXPECT_EQ(ScriptConstant("FORMAT_VERSION"), static_cast<int>(kGoldenFormatVersion));
  EXPECT_EQ(header_.at("generator_version").get<int>(), ScriptConstant("GENERATOR_VERSION"))
      << g_.path << " was written by an older make_golden.py; run " << kGoldenRegenerateCommand;
}

TEST_P(CommittedGolden, ConfigIsDepthTwoThroughNanochatsRules) {
  absl::StatusOr<compiler::ModelConfig> config = compiler::ModelConfig::FromJson(g_.config_json);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(*config, *compiler::ModelConfig::FromDepth(2, 512, 64));  // C 128, 1 head of 128
  EXPECT_EQ(header_.at("math_dtype"), "float64");
  EXPECT_EQ(header_.at("storage_dtype"), "float32");
}

TEST_P(CommittedGolden, BatchTensorsAreWellFormed) {
  const int M = header_.at("grad_accum_steps").get<int>(), B = 2, T = 64, V = 512;
  EXPECT_EQ(M, GetParam() == "accum2" ? 2 : 1);
  for (const char* name : {"inputs", "targets", "segment_ids", "positions"}) {
    EXPECT_EQ(At(name).dtype, GoldenDtype::kI32) << name;
    EXPECT_EQ(At(name).shape, (std::vector<int64_t>{M, B, T})) << name;
  }
  const auto &in = At("inputs").i32, &tg = At("targets").i32, &seg = At("segment_ids").i32, &pos = At("positions").i32;
  ASSERT_EQ(At("counted_targets").shape, (std::vector<int64_t>{M}));
  for (int m = 0; m < M; ++m) {
    int counted = 0;
    for (int b = 0; b < B; ++b) {
      for (int t = 0; t < T; ++t) {
        const size_t i = (size_t(m) * B + b) * T + t;
        EXPECT_TRUE(in[i] >= 0 && in[i] < V) << i;
        EXPECT_TRUE(tg[i] >= -1 && tg[i] < V) << i;
        counted += tg[i] != -1;
        // Positions restart at 0 exactly where a segment starts and count up inside it.
        const bool starts = t == 0 || seg[i] != seg[i - 1];
        EXPECT_EQ(pos[i], starts ? 0 : pos[i - 1] + 1) << i;
        const int32_t want_segment = t == 0 ? 0 : seg[i - 1] + (starts ? 1 : 0);
        EXPECT_EQ(seg[i], want_segment) << i;
      }
    }
    EXPECT_EQ(At("counted_targets").i32[m], counted) << "micro-step " << m;
  }
}

TEST_P(CommittedGolden, EveryParameterHasInitGradAndTwoSnapshotsShapedAsTheParamStore) {
  runtime::ParamStore store = *runtime::ParamStore::Create(*compiler::ModelConfig::FromJson(g_.config_json));
  std::set<std::string> expected = {"inputs", "targets", "segment_ids", "positions", "counted_targets",
                                    "logits", "loss", "losses", "micro_losses"};
  for (const runtime::Param& p : store.params()) {
    for (const char* prefix : {"init/", "grad/", "step1/", "step3/"}) {
      const std::string name = prefix + p.name;
      expected.insert(name);
      absl::StatusOr<const GoldenTensor*> t = g_.Get(name);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ((*t)->dtype, GoldenDtype::kF32) << name;
      EXPECT_EQ((*t)->shape, p.shape) << name;
      for (float v : (*t)->f32) ASSERT_TRUE(std::isfinite(v)) << name;
    }
    // Every parameter moved in the first step and had a non-zero gradient.
    double moved = 0, grad = 0;
    for (int64_t i = 0; i < p.numel(); ++i) {
      moved += std::abs(At("step1/" + p.name).f32[i] - At("init/" + p.name).f32[i]);
      grad += std::abs(At("grad/" + p.name).f32[i]);
    }
    EXPECT_GT(moved, 0) << p.name;
    EXPECT_GT(grad, 0) << p.name;
  }
  std::set<std::string> got;
  for (const auto& [name, t] : g_.tensors) got.insert(name);
  EXPECT_EQ(got, expected);
}

// Micro-batch 0's softcapped logits at the initial weights: [B, T, V], finite, inside the cap.
TEST_P(CommittedGolden, LogitsAreMicroBatchZerosAndSoftcapped) {
  const GoldenTensor& logits = At("logits");
  EXPECT_EQ(logits.dtype, GoldenDtype::kF32);
  ASSERT_EQ(logits.shape, (std::vector<int64_t>{2, 64, 512}));
  const double cap = header_.at("softcap").get<double>();
  double largest = 0;
  for (float v : logits.f32) {
    ASSERT_TRUE(std::isfinite(v));
    largest = std::max(largest, double(std::abs(v)));
  }
  EXPECT_GT(largest, 0);
  EXPECT_LT(largest, cap);
}

TEST_P(CommittedGolden, LossesAgreeWithTheFloat64HeaderValues) {
  const std::vector<double> f64 = header_.at("losses_float64").get<std::vector<double>>();
  ASSERT_EQ(f64.size(), 3u);
  ASSERT_EQ(At("losses").shape, (std::vector<int64_t>{3}));
  const int M = header_.at("grad_accum_steps").get<int>();
  ASSERT_EQ(At("micro_losses").shape, (std::vector<int64_t>{3, M}));
  EXPECT_EQ(At("loss").f32, (std::vector<float>{At("losses").f32[0]}));
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(At("losses").f32[s], static_cast<float>(f64[s])) << s;
    double mean = 0;
    for (int m = 0; m < M; ++m) mean += At("micro_losses").f32[s * M + m] / M;
    EXPECT_NEAR(mean, f64[s], 1e-6) << "the step loss is the mean of the micro-step token means";
    EXPECT_GT(f64[s], 1.0);
    EXPECT_LT(f64[s], 12.0);
    if (s > 0) {
      EXPECT_LT(f64[s], f64[s - 1]) << "3 steps on one batch should lower its loss";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CommittedGolden, ::testing::ValuesIn(kCases));

TEST(GoldenFile, PaddedCaseIsNanochatsCollate) {
  GoldenFile g = *GoldenFile::Load("tests/golden/padded.gold");
  const nlohmann::json header = nlohmann::json::parse(g.header_json);
  const int pad = header.at("pad_id").get<int>();
  EXPECT_EQ(pad, 507);  // <|assistant_end|> of a 512 vocabulary
  const auto &in = g.tensors.at("inputs").i32, &tg = g.tensors.at("targets").i32;
  for (int i = 0; i < 128; ++i) EXPECT_EQ(g.tensors.at("segment_ids").i32[i], 0) << i;
  // Row 1 holds a 30-token conversation: inputs[29:] are pad, targets[29:] are -1.
  for (int t = 29; t < 64; ++t) {
    EXPECT_EQ(in[64 + t], pad) << t;
    EXPECT_EQ(tg[64 + t], -1) << t;
  }
  EXPECT_EQ(tg[64 + 28], pad) << "the last counted target predicts <|assistant_end|>";
  EXPECT_EQ(in[0], 503) << "rows start with <|bos|>";
}

TEST(GoldenFile, AValidFileRoundTripsItsValues) {
  absl::StatusOr<GoldenFile> g = GoldenFile::Load(WriteTemp("small.gold", Compose(SmallHeader(), SmallData())));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->case_name, "small");
  EXPECT_EQ(nlohmann::json::parse(g->config_json).at("n_layer"), 1);
  EXPECT_EQ(g->tensors.at("a").f32, (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(g->tensors.at("b").i32, (std::vector<int32_t>{7}));
  EXPECT_EQ(g->tensors.at("b").shape, (std::vector<int64_t>{1, 1}));
  EXPECT_THAT(std::string(g->Get("c").status().message()), HasSubstr("no tensor 'c'"));
}

TEST(GoldenFile, StaleOrForeignFilesSayHowToRegenerate) {
  const std::string good = Compose(SmallHeader(), SmallData());
  const std::string committed = Bytes("tests/golden/packed.gold");
  auto with = [](nlohmann::json h, const std::string& key, const nlohmann::json& value) {
    h["tensors"][0][key] = value;
    return h;
  };
  nlohmann::json twice = SmallHeader();
  twice["tensors"][1]["name"] = "a";
  nlohmann::json no_case = SmallHeader();
  no_case.erase("case");
  struct Case {
    std::string file, bytes, why;
  };
  const std::vector<Case> cases = {
      {"truncated_data.gold", committed.substr(0, committed.size() - 100), "truncated: tensor"},
      {"truncated_header.gold", committed.substr(0, 200), "truncated: the header claims"},
      {"truncated_preamble.gold", good.substr(0, 10), "not a golden file"},
      {"wrong_magic.gold", "PK\x03\x04 this is a zip file, not a golden file", "not a golden file"},
      {"wrong_version.gold", Compose(SmallHeader(), SmallData(), 1), "format version 1, this reader reads version 2"},
      {"trailing.gold", good + "xx", "cover 12 data bytes, the file has 14"},
      {"shape_mismatch.gold", Compose(with(SmallHeader(), "shape", {3}), SmallData()), "shape [3] needs 12"},
      {"offset_gap.gold", Compose(with(SmallHeader(), "offset", 4), SmallData()), "previous tensor ends at 0"},
      {"dtype.gold", Compose(with(SmallHeader(), "dtype", "bf16"), SmallData()), "unknown dtype 'bf16'"},
      {"twice.gold", Compose(twice, SmallData()), "listed twice"},
      {"no_case.gold", Compose(no_case, SmallData()), "header field missing"},
      {"not_json.gold", std::string("GPTGOLD\0", 8) + U32(kGoldenFormatVersion) + U32(5) + "{oops", "not a JSON object"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<GoldenFile> g = GoldenFile::Load(WriteTemp(c.file, c.bytes));
    ASSERT_FALSE(g.ok()) << c.file;
    const std::string message(g.status().message());
    EXPECT_THAT(message, HasSubstr(c.file)) << c.file;
    EXPECT_THAT(message, HasSubstr(c.why)) << c.file;
    EXPECT_THAT(message, HasSubstr("/usr/bin/python3 tests/golden/make_golden.py")) << c.file;
  }
  absl::StatusOr<GoldenFile> missing = GoldenFile::Load("/nonexistent.gold");
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("make_golden.py"));
}

}  // namespace
}  // namespace gpt_sft::tests

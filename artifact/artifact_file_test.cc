// Round trips of the artifact file format, and the refusals of damaged or inconsistent files.
#include "artifact/artifact_file.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace gpt_sft::artifact {
namespace {

Artifact Small() {
  Artifact a;
  a.key = "0123456789abcdef";
  a.compiler_version = "test";
  a.target = "opencl";
  a.target_description = "spir64";
  a.compile_seconds = 0.25;
  a.slots.push_back({"inputs", ElementType::kI32, {2, 8}, std::make_pair<int64_t, int64_t>(0, 256)});
  a.slots.push_back({"w", ElementType::kF32, {8, 8}, std::nullopt});
  a.modules.push_back({"kernels", ModuleFormat::kSpir, std::string("\x00\x01\x02spir", 7), {"k0", "k1"}});
  a.constants = std::string(64, '\x7f');
  Function f;
  f.name = "micro_step";
  f.arena_bytes = 1024;
  f.argument_slots = {0, 1};
  f.results.push_back({"loss", ElementType::kF32, {}, std::nullopt});
  f.result_refs.push_back({BufferRef::Space::kArena, -1, 512, 4});
  Launch k;
  k.kind = LaunchKind::kKernel;
  k.op = "gpt.matmul";
  k.where = "gpt.matmul at loc(\"x\")";
  k.module = 0;
  k.name = "k1";
  k.grid = {4, 2, 1};
  k.block = {64, 1, 1};
  k.workgroup_bytes = 256;
  k.args = {Arg::Buffer({BufferRef::Space::kSlot, 1, 0, 256}), Arg::Buffer({BufferRef::Space::kArena, -1, 0, 256}),
            Arg::Buffer({BufferRef::Space::kConstants, -1, 32, 32}), Arg::Of({Scalar::Type::kF32, 0, 0.5}),
            Arg::Of({Scalar::Type::kI64, -7, 0})};
  f.launches.push_back(k);
  Launch c;
  c.kind = LaunchKind::kCollective;
  c.op = "gpt.all_reduce";
  c.where = "all_reduce";
  c.name = "all_reduce";
  c.reduction = "avg";
  c.args = {Arg::Buffer({BufferRef::Space::kSlot, 1, 0, 256})};
  f.launches.push_back(c);
  Launch fill;
  fill.kind = LaunchKind::kFill;
  fill.op = "zero";
  fill.where = "zero";
  fill.args = {Arg::Buffer({BufferRef::Space::kArena, -1, 256, 256}), Arg::Of({Scalar::Type::kI64, 0, 0})};
  f.launches.push_back(fill);
  a.functions.push_back(f);
  return a;
}

TEST(ArtifactFileTest, RoundTripsEveryField) {
  const Artifact a = Small();
  ASSERT_TRUE(Validate(a).ok()) << Validate(a);
  const std::string bytes = SerializeArtifact(a);
  absl::StatusOr<Artifact> b = ParseArtifact(bytes, "mem");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(SerializeArtifact(*b), bytes);
  EXPECT_EQ(b->slots[0].valid_range, a.slots[0].valid_range);
  EXPECT_EQ(b->modules[0].bytes, a.modules[0].bytes);
  EXPECT_EQ(b->functions[0].launches[0].args[3].scalar.f, 0.5);
  EXPECT_EQ(b->functions[0].launches[0].args[4].scalar.i, -7);
  EXPECT_EQ(b->MaxArenaBytes(), 1024);
  EXPECT_EQ(b->FindSlot("w"), 1);
  EXPECT_NE(LaunchListText(*b).find("kernel k1 grid [4,2,1] block [64,1,1] wg 256"), std::string::npos)
      << LaunchListText(*b);
}

TEST(ArtifactFileTest, DamagedBlobIsDataLossNamingIt) {
  std::string bytes = SerializeArtifact(Small());
  bytes[bytes.size() - 70] ^= 1;  // inside the module blob
  absl::StatusOr<Artifact> b = ParseArtifact(bytes, "step.gptart");
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(absl::IsDataLoss(b.status()));
  EXPECT_TRUE(absl::StrContains(b.status().message(), "step.gptart: modules[0].blob: hash")) << b.status();
}

TEST(ArtifactFileTest, TruncatedAndForeignFilesAreRefused) {
  const std::string bytes = SerializeArtifact(Small());
  EXPECT_TRUE(absl::IsDataLoss(ParseArtifact(bytes.substr(0, bytes.size() - 10), "f").status()));
  EXPECT_TRUE(absl::IsDataLoss(ParseArtifact(bytes.substr(0, 12), "f").status()));
  EXPECT_TRUE(absl::IsDataLoss(ParseArtifact("not an artifact at all", "f").status()));
}

TEST(ArtifactFileTest, ValidateNamesTheLaunchAndField) {
  Artifact a = Small();
  a.functions[0].launches[0].args[1].buffer.offset = 900;  // 900 + 256 > arena 1024
  absl::Status s = Validate(a);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "@micro_step launch 0 (kernel k1, from gpt.matmul at loc(\"x\")) argument 1"))
      << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "outside the arena of 1024 bytes")) << s;
  a = Small();
  a.functions[0].launches[0].name = "nope";
  EXPECT_TRUE(absl::StrContains(Validate(a).message(), "defines no kernel 'nope'"));
}

}  // namespace
}  // namespace gpt_sft::artifact

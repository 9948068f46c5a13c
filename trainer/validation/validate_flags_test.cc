#include "trainer/validation/validate_flags.h"

#include "gtest/gtest.h"

namespace gpt_sft::trainer::validation {
namespace {

TEST(ParseValidateFlags, OwnFlagsAreTakenAndTheRestPassThroughInOrder) {
  absl::StatusOr<ValidateOptions> o =
      ParseValidateFlags({"validate", "--model_tag=d20", "--demo", "--max_iterations=100", "--nproc_per_node=4",
                          "--base_dir=/b", "--run_dir=/r", "--notest_only_plant_recompile", "--packing=pad",
                          "--strict_targets=true", "--test_timeout_s=90", "--torch_eager=none"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->trainer_flags, (std::vector<std::string>{"--model_tag=d20", "--max_iterations=100", "--packing=pad"}));
  EXPECT_TRUE(o->demo);
  EXPECT_EQ(o->nproc_per_node, 4);
  EXPECT_EQ(o->base_dir, "/b");
  EXPECT_EQ(o->run_dir, "/r");
  EXPECT_FALSE(o->plant_recompile);
  EXPECT_TRUE(o->strict_targets);
  EXPECT_DOUBLE_EQ(o->test_timeout_s, 90);
  EXPECT_EQ(o->torch_eager, "none");
  EXPECT_EQ(o->argv.size(), 12u);
}

TEST(ParseValidateFlags, Defaults) {
  absl::StatusOr<ValidateOptions> o = ParseValidateFlags({"validate"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->nproc_per_node, 2);
  EXPECT_EQ(o->warmup_steps, 5);
  EXPECT_EQ(o->python, "/usr/bin/python3");
  EXPECT_FALSE(o->demo);
  EXPECT_EQ(o->torch_eager, "auto");
  EXPECT_TRUE(o->trainer_flags.empty());
}

TEST(ParseValidateFlags, ErrorsNameTheFlag) {
  auto error = [](std::vector<std::string> args) {
    args.insert(args.begin(), "validate");
    absl::StatusOr<ValidateOptions> o = ParseValidateFlags(args);
    return o.ok() ? std::string("accepted") : std::string(o.status().message());
  };
  EXPECT_EQ(error({"--output_dir=/x"}), "--output_dir is set by validate for each test; leave it out");
  EXPECT_EQ(error({"--compile=false"}), "--compile is set by validate for each test; leave it out");
  EXPECT_EQ(error({"--test_only_force_recompile"}),
            "--test_only_force_recompile is set by validate for each test; leave it out");
  EXPECT_EQ(error({"--nproc_per_node=1"}), "--nproc_per_node=1 must be an integer >= 2");
  EXPECT_EQ(error({"--demo=maybe"}), "--demo=maybe is not true or false");
  EXPECT_EQ(error({"d20"}), "unexpected argument 'd20': flags only (--name=value); see --help");
  EXPECT_EQ(error({"--run_dir"}), "--run_dir needs =VALUE");
  EXPECT_EQ(error({"--torch_eager="}), "--torch_eager needs =VALUE");
}

}  // namespace
}  // namespace gpt_sft::trainer::validation

// BuildDecodeModule: both entry points named as their signatures, with the cache types, and
// the ops that make them differ: @prefill attends like training (gpt.attention), @decode
// appends to the caches and attends over them (gpt.concat, gpt.cached_attention).
#include "compiler/builder/decode_builder.h"

#include <map>
#include <string>

#include "ir/gpt_ops.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

namespace gpt_sft::compiler {
namespace {

DecodeConfig Small() {
  DecodeConfig c;
  c.model = *ModelConfig::FromDepth(2, 512, 64, 128, 2, 1);  // GQA: 2 query heads, 1 kv head
  return c;
}

std::map<std::string, int> OpCounts(mlir::func::FuncOp func) {
  std::map<std::string, int> counts;
  func.walk([&](mlir::Operation* op) { ++counts[op->getName().getStringRef().str()]; });
  return counts;
}

std::vector<std::string> Names(mlir::func::FuncOp func, bool results) {
  std::vector<std::string> names;
  const unsigned n = results ? func.getNumResults() : func.getNumArguments();
  for (unsigned i = 0; i < n; ++i) {
    auto attr = results ? func.getResultAttrOfType<mlir::StringAttr>(i, "gpt.name")
                        : func.getArgAttrOfType<mlir::StringAttr>(i, "gpt.name");
    names.push_back(attr ? attr.str() : "");
  }
  return names;
}

TEST(DecodeBuilder, EntryPointsNamedAsTheirSignatures) {
  mlir::MLIRContext context;
  const DecodeConfig config = Small();
  auto module = BuildDecodeModule(context, config);
  ASSERT_TRUE(module.ok()) << module.status();
  auto prefill = (**module).lookupSymbol<mlir::func::FuncOp>(kPrefillFunction);
  auto decode = (**module).lookupSymbol<mlir::func::FuncOp>(kDecodeFunction);
  ASSERT_TRUE(prefill && decode);
  EXPECT_EQ(Names(prefill, false), PrefillSignature(config).arguments);
  EXPECT_EQ(Names(prefill, true), PrefillSignature(config).results);
  EXPECT_EQ(Names(decode, false), DecodeSignature(config).arguments);
  EXPECT_EQ(Names(decode, true), DecodeSignature(config).results);
  ASSERT_EQ(DecodeSignature(config).results.size(), 5u);  // logits + 2 layers x (k, v)
  EXPECT_EQ(DecodeSignature(config).results[3], "k_cache/1");
}

TEST(DecodeBuilder, CachesAreDynamicInLengthWithKvHeads) {
  mlir::MLIRContext context;
  auto module = BuildDecodeModule(context, Small());
  ASSERT_TRUE(module.ok()) << module.status();
  auto decode = (**module).lookupSymbol<mlir::func::FuncOp>(kDecodeFunction);
  auto cache = llvm::cast<mlir::RankedTensorType>(decode.getResultTypes()[1]);
  EXPECT_EQ(cache.getDimSize(0), 1);
  EXPECT_TRUE(cache.isDynamicDim(1));
  EXPECT_EQ(cache.getDimSize(2), 1);   // Hkv
  EXPECT_EQ(cache.getDimSize(3), 64);  // D = 128 / 2
  auto logits = llvm::cast<mlir::RankedTensorType>(decode.getResultTypes()[0]);
  EXPECT_EQ(logits.getDimSize(2), 512);
}

TEST(DecodeBuilder, PrefillAttendsLikeTrainingAndDecodeOverTheCache) {
  mlir::MLIRContext context;
  auto module = BuildDecodeModule(context, Small());
  ASSERT_TRUE(module.ok()) << module.status();
  auto prefill = OpCounts((**module).lookupSymbol<mlir::func::FuncOp>(kPrefillFunction));
  auto decode = OpCounts((**module).lookupSymbol<mlir::func::FuncOp>(kDecodeFunction));
  EXPECT_EQ(prefill["gpt.attention"], 2);
  EXPECT_EQ(prefill["gpt.concat"], 0);
  EXPECT_EQ(prefill["gpt.cached_attention"], 0);
  EXPECT_EQ(decode["gpt.attention"], 0);
  EXPECT_EQ(decode["gpt.concat"], 4);
  EXPECT_EQ(decode["gpt.cached_attention"], 2);
  EXPECT_EQ(decode["gpt.rotary"], 4);
}

TEST(DecodeBuilder, InvalidConfigNamesTheField) {
  mlir::MLIRContext context;
  DecodeConfig config = Small();
  config.batch_size = 0;
  auto module = BuildDecodeModule(context, config);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(std::string(module.status().message()).find("batch_size"), std::string::npos);
}

}  // namespace
}  // namespace gpt_sft::compiler

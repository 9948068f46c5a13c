//===- vjp_test_pass.h - --gpt-test-vjp, a test-only pass ------------------===//
//
// Registers --gpt-test-vjp: for every op implementing VjpOpInterface it builds
// the op's VJP rule right after the op, with the op's own results standing in
// as cotangents (same types), and tags each operand cotangent with a
// `gpt.vjp_of` string attribute. Only for dialect/test/vjp_rules.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_VJP_TEST_PASS_H_
#define GPT_SFT_IR_VJP_TEST_PASS_H_

namespace gpt_sft::compiler::gpt {

/// Adds --gpt-test-vjp to the global pass registry (for gpt-opt and gptc-opt).
void RegisterVjpTestPass();

}  // namespace gpt_sft::compiler::gpt

#endif  // GPT_SFT_IR_VJP_TEST_PASS_H_

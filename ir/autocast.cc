#include "ir/autocast.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

namespace gpt_sft::compiler {

bool UnderBf16Autocast(mlir::Operation* op) {
  auto module = op->getParentOfType<mlir::ModuleOp>();
  auto autocast = module ? module->getAttrOfType<mlir::StringAttr>(kAutocastAttr) : nullptr;
  return autocast && autocast.getValue() == "bf16";
}

}  // namespace gpt_sft::compiler

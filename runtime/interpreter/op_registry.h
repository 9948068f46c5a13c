// OpRegistry: the interpreter's implementations of ops, keyed by op name ("gpt.matmul").
// Each op family registers its ops from its own file under ops/ (see ops/ops.h);
// BuiltinOps() holds them all.
#ifndef GPT_SFT_RUNTIME_INTERPRETER_OP_REGISTRY_H_
#define GPT_SFT_RUNTIME_INTERPRETER_OP_REGISTRY_H_

#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/status.h"

namespace gpt_sft::runtime::interp {

class OpContext;

/// Runs one op: reads its operands from the context, writes every result into it.
using OpFn = absl::Status (*)(OpContext& ctx);

class OpRegistry {
 public:
  void Register(std::string name, OpFn fn) { fns_[std::move(name)] = fn; }
  /// Null when `name` has no implementation.
  OpFn Find(std::string_view name) const {
    auto it = fns_.find(std::string(name));
    return it == fns_.end() ? nullptr : it->second;
  }
  size_t size() const { return fns_.size(); }

 private:
  std::unordered_map<std::string, OpFn> fns_;
};

/// Every op family's implementations (built once, on first use).
const OpRegistry& BuiltinOps();

}  // namespace gpt_sft::runtime::interp

#endif  // GPT_SFT_RUNTIME_INTERPRETER_OP_REGISTRY_H_

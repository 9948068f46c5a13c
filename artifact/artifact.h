// Artifact: a compiled training step as data - what the compiler emits and the device
// runtime runs, with every lowering decision already made (DESIGN.md "Devices"):
//
//   * kernel modules, each tagged with its format: a host shared object (the cpu driver
//     dlopens it), SPIR 1.2 bitcode (the opencl driver builds it), PTX (cuda);
//   * named buffer slots: the step's arguments (parameters, gradients, optimizer state, the
//     batch), shared by name across entry points, bound by the caller to device buffers;
//   * per entry point: its arena size, its argument and result slots, and the launch list:
//     kernel launches (module, symbol, grid, workgroup, workgroup-memory bytes, arguments as
//     buffer+offset or scalars), driver builtins (the cpu driver's BLAS matmul, ...), copies,
//     fills and collectives, in order;
//   * a constants blob uploaded once at load (rotary tables, dense constants).
//
// MLIR-free and LLVM-free on purpose: the runtime and the artifact runner read it
// (artifact_file.h holds the on-disk format, FORMAT.md documents it).
#ifndef GPT_SFT_ARTIFACT_ARTIFACT_H_
#define GPT_SFT_ARTIFACT_ARTIFACT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::artifact {

/// Bumped whenever the artifact's layout or meaning changes: artifacts of another format
/// version are refused at load.
inline constexpr int kFormatVersion = 1;

enum class ElementType { kF32, kF64, kI32, kI64, kBF16 };

/// "f32", "f64", "i32", "i64", "bf16" (MLIR's spelling).
const char* ElementTypeName(ElementType type);
absl::StatusOr<ElementType> ParseElementType(std::string_view name);
int64_t ElementBytes(ElementType type);

/// A named tensor of static shape: a buffer slot, or an entry point's result.
struct TensorSpec {
  std::string name;  // gpt.name: "transformer.wte.weight", "grad/lm_head.weight", "inputs", ...
  ElementType type = ElementType::kF32;
  std::vector<int64_t> shape;
  /// Integer inputs the kernels index with (token ids, targets, positions): every value must
  /// lie in [first, second), checked by the runtime before the data reaches a device, so a
  /// bad id is an error naming the slot instead of an out-of-bounds read on a GPU.
  std::optional<std::pair<int64_t, int64_t>> valid_range;

  int64_t elements() const;
  int64_t bytes() const { return elements() * ElementBytes(type); }
};

/// Where bytes are: the running entry point's arena, a bound slot, or the constants buffer.
struct BufferRef {
  enum class Space { kArena, kSlot, kConstants };
  Space space = Space::kArena;
  int slot = -1;        // index into Artifact::slots when space == kSlot
  int64_t offset = 0;   // bytes from the start of that buffer
  int64_t bytes = 0;
};

struct Scalar {
  enum class Type { kI64, kF64, kI32, kF32 };
  Type type = Type::kI64;
  int64_t i = 0;   // kI64, kI32
  double f = 0;    // kF64, kF32
};

/// A launch argument: a buffer range or a scalar passed by value.
struct Arg {
  bool is_buffer = true;
  BufferRef buffer;
  Scalar scalar;

  static Arg Buffer(BufferRef ref) { return Arg{true, ref, {}}; }
  static Arg Of(Scalar s) { return Arg{false, {}, s}; }
};

enum class LaunchKind {
  kKernel,      // a kernel of one of the artifact's modules
  kBuiltin,     // a kernel the driver provides (cpu: library kernels over BLAS, ...)
  kCopy,        // args: [src, dst], equal sizes
  kFill,        // args: [dst, scalar i64 32-bit pattern]
  kCollective,  // `name` = "all_reduce"; args: [buffer]; `reduction` = sum|avg|max|min
};
const char* LaunchKindName(LaunchKind kind);

struct Launch {
  LaunchKind kind = LaunchKind::kKernel;
  std::string op;     // what it computes, for profiles: "gpt.matmul", "fusion(round_bf16,add)", ...
  std::string where;  // the op and its location, for errors: "gpt.matmul at loc(...)"
  int module = -1;    // kKernel: index into Artifact::modules
  std::string name;   // kKernel: the kernel's symbol; kBuiltin: the builtin; kCollective: its kind
  std::array<int64_t, 3> grid = {1, 1, 1};   // kKernel: workgroups per dimension
  std::array<int64_t, 3> block = {1, 1, 1};  // kKernel: work-items per workgroup
  int64_t workgroup_bytes = 0;  // kKernel: dynamic workgroup memory (0: none)
  std::string reduction;        // kCollective
  ElementType element_type = ElementType::kF32;  // kCollective: of the buffer
  std::vector<Arg> args;
};

enum class ModuleFormat {
  kHostSharedObject,  // an ELF shared object for the host CPU; kernels are range kernels
                      // void(void* const* buffers, int64 begin, int64 end) over grid[0] elements
  kSpir,              // SPIR 1.2 bitcode (OpenCL: clCreateProgramWithBinary, "-x spir")
  kPtx,               // PTX text (CUDA: cuModuleLoadData; the driver JIT-compiles it at load)
  kCudaFatbin,        // a CUDA fat binary: SASS for the chip it was assembled for, and the PTX
                      // for any other GPU (cuModuleLoadData picks; no JIT on that chip)
};
const char* ModuleFormatName(ModuleFormat format);
absl::StatusOr<ModuleFormat> ParseModuleFormat(std::string_view name);

struct KernelModule {
  std::string name;  // "fusions", "kernels"
  ModuleFormat format = ModuleFormat::kSpir;
  std::string bytes;
  std::vector<std::string> symbols;  // the kernels it defines, for load-time checks
  /// The text the bytes were assembled from, when they are not text themselves (cuda-fatbin:
  /// its PTX): what tools that read the kernels' code (the cost model) read. Empty otherwise.
  std::string source;
  /// What the assembler said of each kernel when the compiler assembled the module
  /// (`ptxas -v`: registers, stack frame, spills, shared memory); empty when nothing was
  /// assembled at compile time.
  std::string assembler_report;
};

struct Function {
  std::string name;                 // "micro_step", "optimizer_step", ...
  int64_t arena_bytes = 0;          // this entry point's arena (entry points run one at a time)
  std::vector<int> argument_slots;  // slot of each argument, in the function's order
  std::vector<TensorSpec> results;  // name, type and shape of each result
  std::vector<BufferRef> result_refs;  // where each result is when the launches are done
  std::vector<Launch> launches;
};

struct Artifact {
  std::string key;               // the cache key (compiler/codegen/artifact_key.h)
  std::string compiler_version;  // the compiler that made it
  std::string target;            // "cpu", "opencl", "cuda"
  std::string target_description;  // e.g. the host CPU and features, the SPIR-V version
  double compile_seconds = 0;
  /// What it was compiled from: compiler/builder's StepConfig as JSON (model, batch shape,
  /// packing, accumulation, ranks, optimizer), so a runner needs nothing but the file.
  std::string step_config;
  std::vector<TensorSpec> slots;
  std::vector<KernelModule> modules;
  std::string constants;         // uploaded once into the constants buffer
  std::vector<Function> functions;

  /// The largest arena of any entry point: the size the runtime allocates.
  int64_t MaxArenaBytes() const;
  /// The function named `name`, or null.
  const Function* FindFunction(std::string_view name) const;
  /// The index of the slot named `name`, or -1.
  int FindSlot(std::string_view name) const;
  /// Launches per function, the kernels they use, per kind: "micro_step: 120 launches
  /// (96 kernel, 20 builtin, 4 copy), 31 distinct kernels".
  std::string Summary() const;
};

/// Checks what a loader relies on: every buffer ref inside its buffer, every kernel launch
/// naming a module and symbol that exist, grids and blocks positive, slots with distinct
/// names and result refs in range. The error names the function, the launch's `where` and
/// the field at fault.
absl::Status Validate(const Artifact& artifact);

}  // namespace gpt_sft::artifact

#endif  // GPT_SFT_ARTIFACT_ARTIFACT_H_

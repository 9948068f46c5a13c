// Implements CostReportText and CostReportJson. Units in text: GF = 1e9 FLOPs, MB = 1e6
// bytes, us = microseconds; JSON carries plain FLOPs, bytes and seconds.
#include "compiler/cost/cost_report_format.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace gpt_sft::compiler::cost {
namespace {

using nlohmann::ordered_json;

constexpr double kGiga = 1e9, kMega = 1e6, kMicro = 1e-6, kMilli = 1e-3, kTera = 1e12;

const char* kUnitColumns[] = {"bf16 GF", "tf32 GF", "fp32 GF"};

std::string PtxasColumns(const LaunchRow& row, bool have_ptxas) {
  if (row.kind != "kernel") return absl::StrFormat("%5s %6s %6s %6s %6s", "-", "-", "-", "-", "-");
  if (!have_ptxas) return absl::StrFormat("%-33s", "n/a (no ptxas)");
  if (!row.cost.resources) return absl::StrFormat("%-33s", "n/a (not in ptxas report)");
  const KernelResources& r = *row.cost.resources;
  return absl::StrFormat("%5d %6d %6d %6d %6d", r.registers, r.stack_frame_bytes, r.spill_store_bytes,
                         r.spill_load_bytes, r.shared_bytes);
}

std::string RowText(const LaunchRow& row, bool have_ptxas) {
  const LaunchCost& c = row.cost;
  std::string flops;
  for (ComputeUnit unit : kReportedUnits) {
    absl::StrAppend(&flops, absl::StrFormat(" %9.3f", c.work.unit == unit ? c.work.flops / kGiga : 0.0));
  }
  std::string text = absl::StrFormat(
      "  %5d  %-10s %-30s %-7s%s %10.3f %9.3f %9.3f %10.2f  %-7s  %s  %s", row.index, row.kind, row.name,
      ComputeUnitName(c.work.unit), flops, c.work.bytes_read / kMega, c.work.bytes_written / kMega,
      c.local_bytes / kMega, c.seconds / kMicro, BoundName(c.bound), PtxasColumns(row, have_ptxas), row.op);
  if (c.resources && c.resources->UsesLocalMemory()) absl::StrAppend(&text, "  LOCAL MEMORY");
  if (!c.work.note.empty()) absl::StrAppend(&text, "  (", c.work.note, ")");
  return text + "\n";
}

std::string TotalsText(const std::string& what, const CostTotals& t) {
  return absl::StrFormat(
      "  total %s: %.3f ms; FLOPs bf16-tc %.1f GF, tf32-tc %.1f GF, fp32 %.1f GF; bytes read %.3f GB, written "
      "%.3f GB, local %.3f GB; %d launches (%d with local memory, %d not priced)\n",
      what, t.seconds / kMilli, t.flops[0] / kGiga, t.flops[1] / kGiga, t.flops[2] / kGiga, t.bytes_read / kGiga,
      t.bytes_written / kGiga, t.local_bytes / kGiga, t.launches, t.local_memory_launches, t.unpriced_launches);
}

std::string HeaderText(const CostReport& r) {
  const GpuSpec& g = r.gpu;
  std::string text = absl::StrFormat(
      "gptc cost model for %s (predictions, not measurements): artifact %s\n"
      "  peaks: bf16 tensor %.1f TFLOP/s, tf32 tensor %.1f, fp32 %.1f; HBM %.2f TB/s, L2 %.1f TB/s (%s)\n"
      "  efficiencies: vendor library %.2f, generated tensor-core %.2f, generated fp32 %.2f, bandwidth %.2f\n"
      "  step: batch [%d, %d], %s, grad_accum_steps %d, dp_world_size %d, dtype %s; ptxas: %s\n",
      g.description, r.artifact_key, g.bf16_tensor_flops / kTera, g.tf32_tensor_flops / kTera, g.fp32_flops / kTera,
      g.dram_bytes_per_second / kTera, g.l2_bytes_per_second / kTera, g.source, kVendorLibraryEfficiency,
      kGeneratedTensorCoreEfficiency, kGeneratedCudaCoreEfficiency, kBandwidthEfficiency, r.config.batch_size,
      r.config.seq_len, r.config.packed ? "packed" : "padded", r.config.grad_accum_steps, r.config.dp_world_size,
      DtypeName(r.config.dtype), r.ptxas);
  for (const std::string& a : CostAssumptions(r)) absl::StrAppend(&text, "  assumes: ", a, "\n");
  return text;
}

std::string FunctionText(const FunctionCost& f, bool have_ptxas) {
  std::string text = absl::StrFormat("\nfunc @%s: %d launches\n", f.name, f.rows.size());
  absl::StrAppend(&text, absl::StrFormat("  %5s  %-10s %-30s %-7s %9s %9s %9s %10s %9s %9s %10s  %-7s  %s  %s\n", "#",
                                         "kind", "name", "unit", kUnitColumns[0], kUnitColumns[1], kUnitColumns[2],
                                         "read MB", "write MB", "local MB", "time us", "bound",
                                         absl::StrFormat("%5s %6s %6s %6s %6s", "regs", "stack", "spl_st", "spl_ld",
                                                         "smem"),
                                         "op"));
  for (const LaunchRow& row : f.rows) absl::StrAppend(&text, RowText(row, have_ptxas));
  absl::StrAppend(&text, TotalsText("@" + f.name, f.totals));
  return text;
}

int64_t ShortLaunches(const CostReport& r) {
  int64_t n = 0;
  for (const FunctionCost& f : r.functions) {
    if (f.name != kMicroStepFunction && f.name != kOptimizerStepFunction) continue;
    const int times = f.name == kMicroStepFunction ? r.config.grad_accum_steps : 1;
    for (const LaunchRow& row : f.rows) n += row.cost.seconds < kShortLaunchSeconds ? times : 0;
  }
  return n;
}

std::string StepText(const CostReport& r) {
  const StepCost& s = *r.step;
  const FunctionCost* micro = nullptr;
  const FunctionCost* optimizer = nullptr;
  for (const FunctionCost& f : r.functions) {
    if (f.name == kMicroStepFunction) micro = &f;
    if (f.name == kOptimizerStepFunction) optimizer = &f;
  }
  std::string text = absl::StrFormat(
      "\ntraining step on one %s (micro_step x %d + optimizer_step):\n"
      "  micro_step      %10.3f ms  %6d launches\n"
      "  optimizer_step  %10.3f ms  %6d launches\n"
      "  step            %10.3f ms  %6d launches for %d tokens (B %d x T %d x grad_accum %d, positions incl. "
      "padding)\n"
      "  tokens/s        %10.0f  per GPU%s\n"
      "  model FLOPs     %10.3f TFLOP per step: nanochat's estimate_flops, 6 (N - N_wte) + 12 L H D T = %d per "
      "token (full, not causal, attention)\n"
      "  MFU             %10.2f %%  of the bf16 tensor peak %.0f TFLOP/s\n"
      "  executed FLOPs  %10.3f TFLOP per step (what the launches compute: backward recomputation, optimizer, "
      "norms)\n"
      "  short launches  %10d  predicted under %.0f us each: launch overhead is not modelled\n"
      "  local memory    %10.3f ms  of the step is local-memory traffic; without it: %.3f ms, %.0f tokens/s, MFU "
      "%.2f %%\n",
      r.gpu.name, s.grad_accum_steps, micro->totals.seconds / kMilli, s.micro_step_launches,
      optimizer->totals.seconds / kMilli, s.optimizer_step_launches, s.seconds / kMilli,
      s.micro_step_launches * s.grad_accum_steps + s.optimizer_step_launches, s.tokens, r.config.batch_size,
      r.config.seq_len, s.grad_accum_steps, s.tokens_per_second,
      s.dp_world_size > 1 ? absl::StrFormat(" (x %d ranks = %.0f, collectives not priced)", s.dp_world_size,
                                            s.tokens_per_second * s.dp_world_size)
                          : "",
      s.model_flops / kTera, s.model_flops_per_token, s.mfu * 100, r.gpu.bf16_tensor_flops / kTera,
      s.executed_flops / kTera, ShortLaunches(r), kShortLaunchSeconds / kMicro,
      (s.seconds - s.seconds_without_local) / kMilli, s.seconds_without_local / kMilli,
      s.seconds_without_local > 0 ? s.tokens / s.seconds_without_local : 0.0,
      s.seconds_without_local > 0 ? 100 * s.model_flops / (s.seconds_without_local * r.gpu.bf16_tensor_flops) : 0.0);
  absl::StrAppend(&text, "  where the time goes (launch classes, longest first):\n");
  for (int i = 0; i < kTopClasses && i < static_cast<int>(s.classes.size()); ++i) {
    const ClassCost& c = s.classes[i];
    absl::StrAppend(&text, absl::StrFormat("    %5.1f %%  %10.3f ms  %6d launches  %s\n",
                                           s.seconds > 0 ? 100 * c.seconds / s.seconds : 0.0, c.seconds / kMilli,
                                           c.launches, c.launch_class));
  }
  return text;
}

ordered_json RowJson(const LaunchRow& row) {
  const LaunchCost& c = row.cost;
  ordered_json flops = ordered_json::object();
  for (ComputeUnit unit : kReportedUnits) flops[ComputeUnitName(unit)] = c.work.unit == unit ? c.work.flops : 0.0;
  ordered_json j = {{"index", row.index},
                    {"kind", row.kind},
                    {"name", row.name},
                    {"op", row.op},
                    {"class", row.launch_class},
                    {"unit", ComputeUnitName(c.work.unit)},
                    {"flops", flops},
                    {"bytes_read", c.work.bytes_read},
                    {"bytes_written", c.work.bytes_written},
                    {"local_bytes", c.local_bytes},
                    {"compute_seconds", c.compute_seconds},
                    {"memory_seconds", c.memory_seconds},
                    {"seconds", c.seconds},
                    {"seconds_without_local", c.seconds_without_local},
                    {"bound", BoundName(c.bound)},
                    {"rule", c.work.rule},
                    {"note", c.work.note}};
  if (c.resources) {
    const KernelResources& r = *c.resources;
    j["ptxas"] = {{"registers", r.registers},
                  {"stack_frame_bytes", r.stack_frame_bytes},
                  {"spill_store_bytes", r.spill_store_bytes},
                  {"spill_load_bytes", r.spill_load_bytes},
                  {"shared_bytes", r.shared_bytes},
                  {"local_memory", r.UsesLocalMemory()}};
  } else {
    j["ptxas"] = nullptr;
  }
  return j;
}

ordered_json TotalsJson(const CostTotals& t) {
  ordered_json flops = ordered_json::object();
  for (size_t u = 0; u < kReportedUnits.size(); ++u) flops[ComputeUnitName(kReportedUnits[u])] = t.flops[u];
  return {{"seconds", t.seconds},
          {"seconds_without_local", t.seconds_without_local},
          {"flops", flops},
          {"bytes_read", t.bytes_read},
          {"bytes_written", t.bytes_written},
          {"local_bytes", t.local_bytes},
          {"launches", t.launches},
          {"local_memory_launches", t.local_memory_launches},
          {"unpriced_launches", t.unpriced_launches}};
}

ordered_json StepJson(const CostReport& r) {
  const StepCost& s = *r.step;
  ordered_json classes = ordered_json::array();
  for (const ClassCost& c : s.classes) {
    classes.push_back({{"class", c.launch_class}, {"seconds", c.seconds}, {"launches", c.launches}});
  }
  return {{"grad_accum_steps", s.grad_accum_steps},
          {"dp_world_size", s.dp_world_size},
          {"tokens", s.tokens},
          {"seconds", s.seconds},
          {"seconds_without_local", s.seconds_without_local},
          {"tokens_per_second", s.tokens_per_second},
          {"model_flops_per_token", s.model_flops_per_token},
          {"model_flops_rule", "nanochat estimate_flops: 6 (N - N_wte) + 12 L H D T, full attention"},
          {"model_flops", s.model_flops},
          {"mfu", s.mfu},
          {"executed_flops", s.executed_flops},
          {"micro_step_launches", s.micro_step_launches},
          {"optimizer_step_launches", s.optimizer_step_launches},
          {"short_launches", ShortLaunches(r)},
          {"classes", classes}};
}

}  // namespace

std::vector<std::string> CostAssumptions(const CostReport& r) {
  std::vector<std::string> out = {
      "time per launch = max(FLOPs / (unit peak x efficiency), global bytes / (HBM x bandwidth efficiency) + "
      "local bytes / (L2 x bandwidth efficiency)); launches run one after another",
      "gemm.f32 (cuBLASLt): 2 M N K FLOPs on tf32 tensor cores when its inputs are bf16 values, else fp32 cores; "
      "gemm.bf16 (bf16 operands): on bf16 tensor cores",
      absl::StrFormat("attention kernels: causal pairs B H T (T+1) / 2 x D x 4 (forward), 8 (dk/dv), 6 (dq) FLOPs "
                      "on fp32 cores, on bf16 tensor cores for the warp-tile kernels (flash_attention*)%s",
                      r.config.packed ? "; packed rows are document-causal, so this is an upper bound" : ""),
      absl::StrFormat("other kernels: elementwise, %.0f FLOPs per element of their largest buffer, fp32 cores",
                      kElementwiseFlopsPerElement),
      "kernel bytes: each argument its PTX loads from read once, each it stores to written once; embedding "
      "gathers and scatters move only the rows they index",
      absl::StrFormat("local bytes (kernels ptxas reports a stack frame or spills for): frame x work-items x %.0f "
                      "touches per work-item; attention kernels %.1f frame accesses per visible key",
                      kFrameTouchesPerWorkItem, kAttentionFrameAccessesPerPair),
      "collectives are listed with 0 s (no network model); launch overhead is not modelled",
  };
  return out;
}

std::string CostReportText(const CostReport& report) {
  std::string text = HeaderText(report);
  for (const FunctionCost& f : report.functions) absl::StrAppend(&text, FunctionText(f, report.have_ptxas));
  if (report.step) absl::StrAppend(&text, StepText(report));
  return text;
}

std::string CostReportJson(const CostReport& r) {
  const GpuSpec& g = r.gpu;
  ordered_json functions = ordered_json::array();
  for (const FunctionCost& f : r.functions) {
    ordered_json rows = ordered_json::array();
    for (const LaunchRow& row : f.rows) rows.push_back(RowJson(row));
    functions.push_back({{"name", f.name}, {"totals", TotalsJson(f.totals)}, {"launches", rows}});
  }
  ordered_json j = {
      {"gpu",
       {{"name", g.name},
        {"description", g.description},
        {"bf16_tensor_flops", g.bf16_tensor_flops},
        {"tf32_tensor_flops", g.tf32_tensor_flops},
        {"fp32_flops", g.fp32_flops},
        {"dram_bytes_per_second", g.dram_bytes_per_second},
        {"l2_bytes_per_second", g.l2_bytes_per_second},
        {"source", g.source}}},
      {"efficiencies",
       {{"vendor_library", kVendorLibraryEfficiency},
        {"generated_tensor_core", kGeneratedTensorCoreEfficiency},
        {"generated_cuda_core", kGeneratedCudaCoreEfficiency},
        {"bandwidth", kBandwidthEfficiency}}},
      {"assumptions", CostAssumptions(r)},
      {"artifact", r.artifact_key},
      {"step_config", ordered_json::parse(r.config.ToJson())},
      {"ptxas", r.ptxas},
      {"functions", functions},
  };
  j["step"] = r.step ? StepJson(r) : ordered_json(nullptr);
  return j.dump(1) + "\n";
}

}  // namespace gpt_sft::compiler::cost

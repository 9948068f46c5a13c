#include "trainer/validation/report_json.h"

#include "base/json_fields.h"

namespace gpt_sft::trainer::validation {

using base::Json;
using base::ReadField;
using base::ReadOptionalField;
using base::WriteOptionalField;

namespace {

Json ToJson(const std::optional<Spread>& s) {
  if (!s) return nullptr;
  return {{"count", s->count}, {"median", s->median}, {"min", s->min},
          {"max", s->max},     {"p25", s->p25},       {"p75", s->p75}};
}

absl::Status SpreadFromJson(const Json& j, const char* key, std::optional<Spread>& out, const std::string& where) {
  out.reset();
  if (!j.contains(key) || j[key].is_null()) return absl::OkStatus();
  const Json& s = j[key];
  const std::string at = where + " " + key;
  Spread v;
  for (absl::Status st : {ReadField(s, "count", v.count, at), ReadField(s, "median", v.median, at),
                          ReadField(s, "min", v.min, at), ReadField(s, "max", v.max, at),
                          ReadField(s, "p25", v.p25, at), ReadField(s, "p75", v.p75, at)}) {
    if (!st.ok()) return st;
  }
  out = v;
  return absl::OkStatus();
}

Json PairsToJson(const std::vector<std::pair<std::string, std::string>>& pairs, const char* first,
                 const char* second) {
  Json list = Json::array();
  for (const auto& [a, b] : pairs) list.push_back({{first, a}, {second, b}});
  return list;
}

absl::Status PairsFromJson(const Json& j, const char* key, const char* first, const char* second,
                           std::vector<std::pair<std::string, std::string>>& out, const std::string& where) {
  out.clear();
  if (!j.contains(key) || !j[key].is_array()) return absl::DataLossError(where + ": no list \"" + key + "\"");
  for (const Json& item : j[key]) {
    std::pair<std::string, std::string> p;
    for (absl::Status s : {ReadField(item, first, p.first, where), ReadField(item, second, p.second, where)}) {
      if (!s.ok()) return s;
    }
    out.push_back(p);
  }
  return absl::OkStatus();
}

Json FiguresToJson(const TestFigures& f) {
  Json j;
  j["steps"] = f.steps;
  j["measured_steps"] = f.measured_steps;
  Json shapes = Json::array();
  for (const BatchShape& s : f.batch_shapes) shapes.push_back({s[0], s[1]});
  j["batch_shapes"] = shapes;
  j["seconds_per_step"] = ToJson(f.seconds_per_step);
  j["tokens_per_second"] = ToJson(f.tokens_per_second);
  j["supervised_tokens_per_second"] = ToJson(f.supervised_tokens_per_second);
  WriteOptionalField(j, "first_loss", f.first_loss);
  WriteOptionalField(j, "final_loss", f.final_loss);
  WriteOptionalField(j, "final_loss_mean", f.final_loss_mean);
  WriteOptionalField(j, "val_loss", f.val_loss);
  WriteOptionalField(j, "cache_hit", f.cache_hit);
  WriteOptionalField(j, "compile_seconds", f.compile_seconds);
  WriteOptionalField(j, "artifact_key", f.artifact_key);
  WriteOptionalField(j, "recompilations_training", f.recompilations_training);
  WriteOptionalField(j, "recompilations_evaluation", f.recompilations_evaluation);
  WriteOptionalField(j, "peak_rss_bytes", f.peak_rss_bytes);
  return j;
}

absl::StatusOr<TestFigures> FiguresFromJson(const Json& j, const std::string& where) {
  TestFigures f;
  std::vector<std::vector<int64_t>> shapes;
  for (absl::Status s : {ReadField(j, "steps", f.steps, where), ReadField(j, "measured_steps", f.measured_steps, where),
                         ReadField(j, "batch_shapes", shapes, where),
                         SpreadFromJson(j, "seconds_per_step", f.seconds_per_step, where),
                         SpreadFromJson(j, "tokens_per_second", f.tokens_per_second, where),
                         SpreadFromJson(j, "supervised_tokens_per_second", f.supervised_tokens_per_second, where),
                         ReadOptionalField(j, "first_loss", f.first_loss, where),
                         ReadOptionalField(j, "final_loss", f.final_loss, where),
                         ReadOptionalField(j, "final_loss_mean", f.final_loss_mean, where),
                         ReadOptionalField(j, "val_loss", f.val_loss, where),
                         ReadOptionalField(j, "cache_hit", f.cache_hit, where),
                         ReadOptionalField(j, "compile_seconds", f.compile_seconds, where),
                         ReadOptionalField(j, "artifact_key", f.artifact_key, where),
                         ReadOptionalField(j, "recompilations_training", f.recompilations_training, where),
                         ReadOptionalField(j, "recompilations_evaluation", f.recompilations_evaluation, where),
                         ReadOptionalField(j, "peak_rss_bytes", f.peak_rss_bytes, where)}) {
    if (!s.ok()) return s;
  }
  for (const std::vector<int64_t>& s : shapes) {
    if (s.size() != 2) return absl::DataLossError(where + ": a batch shape is not [B, T]");
    f.batch_shapes.push_back({s[0], s[1]});
  }
  return f;
}

Json TestToJson(const TestRun& t) {
  Json j;
  j["id"] = t.id;
  j["title"] = t.title;
  j["role"] = RoleName(t.role);
  j["world_size"] = t.world_size;
  j["status"] = t.passed() ? "passed" : "failed";
  j["command"] = t.command;
  j["output_dir"] = t.output_dir;
  j["log"] = t.log_path;
  j["ran"] = t.ran;
  j["exit_code"] = t.exit_code;
  j["term_signal"] = t.term_signal;
  j["wall_seconds"] = t.wall_seconds;
  j["failures"] = t.failures;
  j["error_tail"] = t.error_tail;
  j["figures"] = FiguresToJson(t.figures);
  j["summary"] = t.summary ? ToJson(*t.summary) : Json(nullptr);
  Json steps = Json::array();
  for (const StepMetrics& m : t.steps) steps.push_back(ToJson(m));
  j["steps"] = steps;
  return j;
}

absl::StatusOr<TestRun> TestFromJson(const Json& j, const std::string& where) {
  TestRun t;
  std::string role;
  for (absl::Status s : {ReadField(j, "id", t.id, where), ReadField(j, "title", t.title, where),
                         ReadField(j, "role", role, where), ReadField(j, "world_size", t.world_size, where),
                         ReadField(j, "command", t.command, where), ReadField(j, "output_dir", t.output_dir, where),
                         ReadField(j, "log", t.log_path, where), ReadField(j, "ran", t.ran, where),
                         ReadField(j, "exit_code", t.exit_code, where),
                         ReadField(j, "term_signal", t.term_signal, where),
                         ReadField(j, "wall_seconds", t.wall_seconds, where),
                         ReadField(j, "failures", t.failures, where),
                         ReadField(j, "error_tail", t.error_tail, where)}) {
    if (!s.ok()) return s;
  }
  const std::string at = where + " " + t.id;
  std::optional<TestRole> r = RoleFromName(role);
  if (!r) return absl::DataLossError(at + ": unknown role \"" + role + "\"");
  t.role = *r;
  if (!j.contains("figures")) return absl::DataLossError(at + ": no field \"figures\"");
  absl::StatusOr<TestFigures> figures = FiguresFromJson(j["figures"], at + " figures");
  if (!figures.ok()) return figures.status();
  t.figures = *figures;
  if (j.contains("summary") && !j["summary"].is_null()) {
    absl::StatusOr<RunSummary> summary = RunSummaryFromJson(j["summary"], at + " summary");
    if (!summary.ok()) return summary.status();
    t.summary = *summary;
  }
  if (!j.contains("steps") || !j["steps"].is_array()) return absl::DataLossError(at + ": no list \"steps\"");
  for (const Json& step : j["steps"]) {
    absl::StatusOr<StepMetrics> m = StepMetricsFromJson(step, at + " steps");
    if (!m.ok()) return m.status();
    t.steps.push_back(*m);
  }
  return t;
}

Json CriterionToJson(const Criterion& c) {
  Json j;
  j["id"] = c.id;
  j["title"] = c.title;
  j["kind"] = KindName(c.kind);
  j["threshold"] = c.threshold;
  j["status"] = StatusName(c.status);
  WriteOptionalField(j, "value", c.value);
  j["measured"] = c.measured;
  j["tests"] = c.tests;
  j["optional"] = c.optional;
  return j;
}

absl::StatusOr<Criterion> CriterionFromJson(const Json& j, const std::string& where) {
  Criterion c;
  std::string kind, status;
  for (absl::Status s : {ReadField(j, "id", c.id, where), ReadField(j, "title", c.title, where),
                         ReadField(j, "kind", kind, where), ReadField(j, "threshold", c.threshold, where),
                         ReadField(j, "status", status, where), ReadOptionalField(j, "value", c.value, where),
                         ReadField(j, "measured", c.measured, where), ReadField(j, "tests", c.tests, where)}) {
    if (!s.ok()) return s;
  }
  // Reports written before optional criteria existed have none.
  if (j.contains("optional")) {
    if (absl::Status s = ReadField(j, "optional", c.optional, where); !s.ok()) return s;
  }
  if (kind == KindName(CriterionKind::kCorrectness)) c.kind = CriterionKind::kCorrectness;
  else if (kind == KindName(CriterionKind::kTarget)) c.kind = CriterionKind::kTarget;
  else return absl::DataLossError(where + " " + c.id + ": unknown kind \"" + kind + "\"");
  bool known = false;
  for (CriterionStatus st : {CriterionStatus::kPass, CriterionStatus::kFail, CriterionStatus::kNotMeasured}) {
    if (status == StatusName(st)) c.status = st, known = true;
  }
  if (!known) return absl::DataLossError(where + " " + c.id + ": unknown status \"" + status + "\"");
  return c;
}

Json TorchEagerToJson(const TorchEagerBaseline& t) {
  Json j = {{"measured", t.measured}, {"why_not", t.why_not},     {"python", t.python},
            {"source", t.source},     {"torch_version", t.torch_version}, {"dtype", t.dtype},
            {"attention", t.attention}, {"kernels", t.kernels},   {"command", t.command},
            {"batch", t.batch},       {"seq", t.seq},             {"grad_accum", t.grad_accum},
            {"threads", t.threads},   {"warmup", t.warmup},       {"steps", t.steps}};
  WriteOptionalField(j, "seconds_per_step", t.seconds_per_step);
  WriteOptionalField(j, "peak_rss_bytes", t.peak_rss_bytes);
  return j;
}

absl::Status TorchEagerFromJson(const Json& j, TorchEagerBaseline& t, const std::string& where) {
  for (absl::Status s :
       {ReadField(j, "measured", t.measured, where), ReadField(j, "why_not", t.why_not, where),
        ReadField(j, "python", t.python, where), ReadField(j, "source", t.source, where),
        ReadField(j, "torch_version", t.torch_version, where), ReadField(j, "dtype", t.dtype, where),
        ReadField(j, "attention", t.attention, where), ReadField(j, "kernels", t.kernels, where),
        ReadField(j, "command", t.command, where), ReadField(j, "batch", t.batch, where),
        ReadField(j, "seq", t.seq, where), ReadField(j, "grad_accum", t.grad_accum, where),
        ReadField(j, "threads", t.threads, where), ReadField(j, "warmup", t.warmup, where),
        ReadField(j, "steps", t.steps, where), ReadOptionalField(j, "seconds_per_step", t.seconds_per_step, where),
        ReadOptionalField(j, "peak_rss_bytes", t.peak_rss_bytes, where)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

Json ThresholdsToJson(const Thresholds& t) {
  return {{"min_speedup", t.min_speedup},
          {"max_compile_seconds", t.max_compile_seconds},
          {"max_memory_ratio", t.max_memory_ratio},
          {"max_final_loss_rel_diff", t.max_final_loss_rel_diff},
          {"max_ranks_step_loss_rel_diff", t.max_ranks_step_loss_rel_diff},
          {"max_ranks_val_loss_rel_diff", t.max_ranks_val_loss_rel_diff}};
}

absl::Status ThresholdsFromJson(const Json& j, Thresholds& t, const std::string& where) {
  for (absl::Status s : {ReadField(j, "min_speedup", t.min_speedup, where),
                         ReadField(j, "max_compile_seconds", t.max_compile_seconds, where),
                         ReadField(j, "max_memory_ratio", t.max_memory_ratio, where),
                         ReadField(j, "max_final_loss_rel_diff", t.max_final_loss_rel_diff, where),
                         ReadField(j, "max_ranks_step_loss_rel_diff", t.max_ranks_step_loss_rel_diff, where),
                         ReadField(j, "max_ranks_val_loss_rel_diff", t.max_ranks_val_loss_rel_diff, where)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

Json ReportToJson(const ValidationReport& r) {
  Json j;
  j["schema"] = kReportSchema;
  j["created"] = r.created;
  j["verdict"] = r.verdict;
  j["exit_code"] = r.exit_code;
  j["run_dir"] = r.run_dir;
  j["validate_command"] = r.validate_command;
  j["git_commit"] = r.git_commit;
  j["git_note"] = r.git_note;
  const Environment& e = r.environment;
  j["environment"] = {{"hostname", e.hostname},         {"cpu_model", e.cpu_model},
                      {"cpu_cores", e.cpu_cores},       {"cpus_usable", e.cpus_usable},
                      {"gpu", e.gpu},                   {"os", e.os},
                      {"cxx_compiler", e.cxx_compiler}, {"gptc_version", e.gptc_version},
                      {"packages", PairsToJson(e.packages, "package", "version")}};
  const RunConfig& c = r.config;
  j["config"] = {{"trainer_flags", c.trainer_flags},
                 {"demo", c.demo},
                 {"nproc_per_node", c.nproc_per_node},
                 {"warmup_steps", c.warmup_steps},
                 {"planted_recompile", c.planted_recompile},
                 {"base_dir", c.base_dir},
                 {"compile_cache_dir", c.compile_cache_dir},
                 {"dtype", c.dtype},
                 {"model_config", c.model_config},
                 {"thresholds", ThresholdsToJson(c.thresholds)}};
  j["torch_eager"] = TorchEagerToJson(r.torch_eager);
  Json criteria = Json::array();
  for (const Criterion& k : r.criteria) criteria.push_back(CriterionToJson(k));
  j["criteria"] = criteria;
  j["plots"] = {{"made", r.plots.made}, {"files", PairsToJson(r.plots.files, "title", "file")},
                {"error", r.plots.error}};
  Json tests = Json::array();
  for (const TestRun& t : r.tests) tests.push_back(TestToJson(t));
  j["tests"] = tests;
  return j;
}

absl::StatusOr<ValidationReport> ReportFromJson(const Json& j, const std::string& where) {
  ValidationReport r;
  std::string schema;
  if (absl::Status s = ReadField(j, "schema", schema, where); !s.ok()) return s;
  if (schema != kReportSchema) {
    return absl::DataLossError(where + ": schema \"" + schema + "\", expected \"" + kReportSchema + "\"");
  }
  for (absl::Status s : {ReadField(j, "created", r.created, where), ReadField(j, "verdict", r.verdict, where),
                         ReadField(j, "exit_code", r.exit_code, where), ReadField(j, "run_dir", r.run_dir, where),
                         ReadField(j, "validate_command", r.validate_command, where),
                         ReadField(j, "git_commit", r.git_commit, where),
                         ReadField(j, "git_note", r.git_note, where)}) {
    if (!s.ok()) return s;
  }
  for (const char* key : {"environment", "config", "plots"}) {
    if (!j.contains(key) || !j[key].is_object()) return absl::DataLossError(where + ": no object \"" + key + "\"");
  }
  const Json& e = j["environment"];
  const std::string at_env = where + " environment";
  Environment& env = r.environment;
  for (absl::Status s : {ReadField(e, "hostname", env.hostname, at_env), ReadField(e, "cpu_model", env.cpu_model, at_env),
                         ReadField(e, "cpu_cores", env.cpu_cores, at_env),
                         ReadField(e, "cpus_usable", env.cpus_usable, at_env), ReadField(e, "gpu", env.gpu, at_env),
                         ReadField(e, "os", env.os, at_env), ReadField(e, "cxx_compiler", env.cxx_compiler, at_env),
                         ReadField(e, "gptc_version", env.gptc_version, at_env),
                         PairsFromJson(e, "packages", "package", "version", env.packages, at_env)}) {
    if (!s.ok()) return s;
  }
  const Json& c = j["config"];
  const std::string at_config = where + " config";
  RunConfig& config = r.config;
  for (absl::Status s : {ReadField(c, "trainer_flags", config.trainer_flags, at_config),
                         ReadField(c, "demo", config.demo, at_config),
                         ReadField(c, "nproc_per_node", config.nproc_per_node, at_config),
                         ReadField(c, "warmup_steps", config.warmup_steps, at_config),
                         ReadField(c, "planted_recompile", config.planted_recompile, at_config),
                         ReadField(c, "base_dir", config.base_dir, at_config),
                         ReadField(c, "compile_cache_dir", config.compile_cache_dir, at_config),
                         ReadField(c, "dtype", config.dtype, at_config)}) {
    if (!s.ok()) return s;
  }
  config.model_config = c.contains("model_config") ? c["model_config"] : Json(nullptr);
  if (!c.contains("thresholds")) return absl::DataLossError(at_config + ": no field \"thresholds\"");
  if (absl::Status s = ThresholdsFromJson(c["thresholds"], config.thresholds, at_config + " thresholds"); !s.ok()) {
    return s;
  }
  if (j.contains("torch_eager")) {  // absent from reports written before the torch baseline
    if (absl::Status s = TorchEagerFromJson(j["torch_eager"], r.torch_eager, where + " torch_eager"); !s.ok()) return s;
  }
  const Json& p = j["plots"];
  for (absl::Status s : {ReadField(p, "made", r.plots.made, where + " plots"),
                         PairsFromJson(p, "files", "title", "file", r.plots.files, where + " plots"),
                         ReadField(p, "error", r.plots.error, where + " plots")}) {
    if (!s.ok()) return s;
  }
  for (const char* key : {"criteria", "tests"}) {
    if (!j.contains(key) || !j[key].is_array()) return absl::DataLossError(where + ": no list \"" + key + "\"");
  }
  for (const Json& k : j["criteria"]) {
    absl::StatusOr<Criterion> criterion = CriterionFromJson(k, where + " criteria");
    if (!criterion.ok()) return criterion.status();
    r.criteria.push_back(*criterion);
  }
  for (const Json& t : j["tests"]) {
    absl::StatusOr<TestRun> test = TestFromJson(t, where + " tests");
    if (!test.ok()) return test.status();
    r.tests.push_back(*test);
  }
  return r;
}

}  // namespace gpt_sft::trainer::validation

#include "trainer/eval/evaluation_progress.h"

#include "absl/strings/str_format.h"

namespace gpt_sft::trainer {

void EvaluationProgressLog::Report(std::string_view phase, int64_t done, int64_t total) {
  const Clock::time_point now = Clock::now();
  if (phase != phase_) {
    phase_ = std::string(phase);
    phase_start_ = last_line_ = now;
    printed_in_phase_ = false;
  }
  const bool due = now - last_line_ >= interval_;
  const bool closes = done >= total && printed_in_phase_;
  if (!due && !closes) return;
  out_ << absl::StrFormat("[eval] %s: %d/%d (%.1f s)", phase, done, total,
                          std::chrono::duration<double>(now - phase_start_).count())
       << std::endl;
  last_line_ = now;
  printed_in_phase_ = done < total;  // a phase's last line closes it
}

}  // namespace gpt_sft::trainer

// EvaluationProgress: how a long evaluation tells the user it is moving. Each phase (the
// validation loss, each metric's task) reports (done, total) after every unit of work; the
// log prints "[eval] <phase>: <done>/<total> (<s> s)" at most once per `interval`, and the
// phase's last report when any line of it was printed, so a quick evaluation stays silent and
// a slow one (the final evaluation over every problem) never looks stuck.
#ifndef GPT_SFT_TRAINER_EVAL_EVALUATION_PROGRESS_H_
#define GPT_SFT_TRAINER_EVAL_EVALUATION_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace gpt_sft::trainer {

/// What an evaluation calls after each unit of work of `phase`.
using EvaluationProgress = std::function<void(std::string_view phase, int64_t done, int64_t total)>;

class EvaluationProgressLog {
 public:
  using Clock = std::chrono::steady_clock;
  /// Lines go to `out` (which must outlive the log); interval 0 prints every report.
  EvaluationProgressLog(std::ostream& out, Clock::duration interval) : out_(out), interval_(interval) {}

  void Report(std::string_view phase, int64_t done, int64_t total);
  /// Report, as an EvaluationProgress.
  EvaluationProgress AsCallback() {
    return [this](std::string_view phase, int64_t done, int64_t total) { Report(phase, done, total); };
  }

 private:
  std::ostream& out_;
  Clock::duration interval_;
  std::string phase_;
  Clock::time_point phase_start_, last_line_;
  bool printed_in_phase_ = false;
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_EVAL_EVALUATION_PROGRESS_H_

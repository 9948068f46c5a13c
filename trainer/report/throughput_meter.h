// ThroughputMeter: the step timings the validation instrumentation reports: average
// time/step and tokens/sec excluding warm-up steps (the first five by default), and the peak
// resident memory of the process.
#ifndef GPT_SFT_TRAINER_REPORT_THROUGHPUT_METER_H_
#define GPT_SFT_TRAINER_REPORT_THROUGHPUT_METER_H_

#include <cstdint>

namespace gpt_sft::trainer {

class ThroughputMeter {
 public:
  explicit ThroughputMeter(int warmup_steps = 5) : warmup_steps_(warmup_steps) {}

  /// One optimizer step: its wall seconds, the positions it processed (B*T*accum) and the
  /// supervised tokens among them.
  void AddStep(double seconds, int64_t tokens, int64_t supervised_tokens);

  int steps() const { return steps_; }
  /// Over the steps after the warm-up ones; 0 while there are none.
  int measured_steps() const { return measured_steps_; }
  double SecondsPerStep() const;
  double TokensPerSecond() const;
  double SupervisedTokensPerSecond() const;

  /// ru_maxrss of this process, in bytes.
  static int64_t PeakRssBytes();

 private:
  int warmup_steps_;
  int steps_ = 0, measured_steps_ = 0;
  double seconds_ = 0;
  int64_t tokens_ = 0, supervised_ = 0;
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_REPORT_THROUGHPUT_METER_H_

#include "trainer/report/throughput_meter.h"

#include <sys/resource.h>

namespace gpt_sft::trainer {

void ThroughputMeter::AddStep(double seconds, int64_t tokens, int64_t supervised_tokens) {
  if (steps_++ < warmup_steps_) return;
  ++measured_steps_;
  seconds_ += seconds;
  tokens_ += tokens;
  supervised_ += supervised_tokens;
}

double ThroughputMeter::SecondsPerStep() const { return measured_steps_ ? seconds_ / measured_steps_ : 0; }
double ThroughputMeter::TokensPerSecond() const { return seconds_ > 0 ? tokens_ / seconds_ : 0; }
double ThroughputMeter::SupervisedTokensPerSecond() const { return seconds_ > 0 ? supervised_ / seconds_ : 0; }

int64_t ThroughputMeter::PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return int64_t{usage.ru_maxrss} * 1024;
}

}  // namespace gpt_sft::trainer

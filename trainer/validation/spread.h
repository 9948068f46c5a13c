// Spread: the median of a series and how far it spreads (min, max, quartiles), the figures
// the validation report gives for time/step and tokens/sec. Quartiles interpolate linearly
// between order statistics (numpy's default), so a report can be checked by hand.
#ifndef GPT_SFT_TRAINER_VALIDATION_SPREAD_H_
#define GPT_SFT_TRAINER_VALIDATION_SPREAD_H_

#include <optional>
#include <vector>

namespace gpt_sft::trainer::validation {

struct Spread {
  int count = 0;
  double median = 0, min = 0, max = 0;
  double p25 = 0, p75 = 0;  // the interquartile range is [p25, p75]

  bool operator==(const Spread& o) const {
    return count == o.count && median == o.median && min == o.min && max == o.max && p25 == o.p25 && p75 == o.p75;
  }
};

/// The q-quantile (0 <= q <= 1) of `sorted` (ascending, non-empty), linearly interpolated.
double Quantile(const std::vector<double>& sorted, double q);

/// nullopt for an empty series: a figure of no measurement is missing, never 0.
std::optional<Spread> SpreadOf(std::vector<double> values);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_SPREAD_H_

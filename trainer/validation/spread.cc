#include "trainer/validation/spread.h"

#include <algorithm>
#include <cmath>

namespace gpt_sft::trainer::validation {

double Quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

std::optional<Spread> SpreadOf(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  Spread s;
  s.count = static_cast<int>(values.size());
  s.min = values.front();
  s.max = values.back();
  s.median = Quantile(values, 0.5);
  s.p25 = Quantile(values, 0.25);
  s.p75 = Quantile(values, 0.75);
  return s;
}

}  // namespace gpt_sft::trainer::validation

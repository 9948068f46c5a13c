// Test helpers for the kernels' VJP checks, in float64: random vectors, <a, b>, and the
// worst relative error of an analytic gradient against central differences of a scalar
// loss L(x) = <dy, f(x)>.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_FINITE_DIFFERENCE_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_FINITE_DIFFERENCE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace gpt_sft::runtime::kernels::testing {

using Vec = std::vector<double>;

inline Vec Random(size_t n, uint32_t seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  Vec v(n);
  for (double& x : v) x = u(rng);
  return v;
}

inline double Dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

/// max_i |fd_i - analytic_i| / max(1e-3, |fd_i| + |analytic_i|). The floor keeps an exactly
/// zero gradient (a query that sees only itself) from turning the finite difference's
/// rounding noise (~1e-10) into a large ratio.
inline double MaxFdError(Vec x, const std::function<double(const Vec&)>& loss, const Vec& analytic,
                         double h = 1e-6) {
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double orig = x[i];
    x[i] = orig + h;
    const double up = loss(x);
    x[i] = orig - h;
    const double down = loss(x);
    x[i] = orig;
    const double fd = (up - down) / (2 * h);
    worst = std::max(worst, std::abs(fd - analytic[i]) / std::max(1e-3, std::abs(fd) + std::abs(analytic[i])));
  }
  return worst;
}

inline constexpr double kFdTolerance = 1e-6;

}  // namespace gpt_sft::runtime::kernels::testing

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_FINITE_DIFFERENCE_H_

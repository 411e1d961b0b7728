#include "tests/e2e/chaos/stats.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tephra::chaos {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

double Slope(const std::vector<std::pair<double, double>>& points) {
  if (points.size() < 2) return 0;
  double n = static_cast<double>(points.size()), sx = 0, sy = 0;
  for (const auto& [x, y] : points) {
    sx += x;
    sy += y;
  }
  double mx = sx / n, my = sy / n, num = 0, den = 0;
  for (const auto& [x, y] : points) {
    num += (x - mx) * (y - my);
    den += (x - mx) * (x - mx);
  }
  return den == 0 ? 0 : num / den;
}

std::string FormatFixed(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

}  // namespace tephra::chaos

// Small statistics for the chaos report: percentiles and least-squares slopes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tephra::chaos {

// The p-th percentile (0..100) by nearest rank; 0 for an empty sample.
double Percentile(std::vector<double> values, double p);

// Least-squares slope dy/dx of (x, y) points; 0 with fewer than two distinct x.
double Slope(const std::vector<std::pair<double, double>>& points);

// `v` with `digits` decimals ("12.3").
std::string FormatFixed(double v, int digits = 1);

}  // namespace tephra::chaos

// Go time.Duration text ("1h30m", "90s", "1.5s", "300ms"), which Kubernetes uses for
// metav1.Duration fields such as a lifecycle policy's timeout.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace tephra::api {

using Duration = std::chrono::nanoseconds;

// Parses Go's time.ParseDuration syntax: an optional sign, then one or more decimal numbers
// each with a unit (ns, us, µs, ms, s, m, h). "0" alone is allowed. nullopt when malformed or
// out of the int64-nanosecond range.
std::optional<Duration> ParseDuration(std::string_view text);
// Go's Duration.String(): "1h2m3.5s", "1.5s", "300ms", "0s".
std::string FormatDuration(Duration d);

}  // namespace tephra::api

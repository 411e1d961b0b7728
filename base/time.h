// Kubernetes timestamps (metav1.Time, RFC 3339 in seconds, and metav1.MicroTime in
// microseconds) and Go durations (time.Duration's text, which flags, annotations, plugin
// arguments and metav1.Duration fields use).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tephra::base {

using Clock = std::chrono::system_clock;
using Time = Clock::time_point;

// Parses "2026-11-30T09:28:37Z", "…37.123456Z" or "…37+01:00". nullopt when malformed or
// outside the years 1678..2261 that a nanosecond system_clock can hold.
std::optional<Time> ParseTime(std::string_view text);
// "2026-11-30T09:28:37Z" (metav1.Time truncates to seconds).
std::string FormatTime(Time t);
// "2026-11-30T09:28:37.123456Z" (metav1.MicroTime, used by Leases and events.k8s.io).
std::string FormatMicroTime(Time t);

// Go's time.ParseDuration: a sequence of decimal numbers with units ns, us (or µs), ms, s, m,
// h, optionally signed: "300ms", "1.5h", "2h45m", "-1s", "0".
StatusOr<std::chrono::nanoseconds> ParseDuration(std::string_view text);
// A duration above zero, as annotations and plugin arguments that set a wait want it; nullopt
// when `text` is empty, malformed, zero or negative.
std::optional<std::chrono::nanoseconds> ParsePositiveDuration(std::string_view text);
// Go's Duration.String(): "0s", "500ms", "1.5s", "1m30s", "1h0m0s".
std::string FormatDuration(std::chrono::nanoseconds d);

}  // namespace tephra::base

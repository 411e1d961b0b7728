// Kubernetes timestamps: metav1.Time (RFC 3339, seconds) and metav1.MicroTime (microseconds).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

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

}  // namespace tephra::base

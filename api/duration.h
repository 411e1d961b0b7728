// Go time.Duration values, which Kubernetes uses for metav1.Duration fields such as a lifecycle
// policy's timeout. Their text ("1h30m", "90s", "1.5s") is read and written by
// base::ParseDuration and base::FormatDuration (base/time.h), the one Go-duration parser.
#pragma once

#include <chrono>

namespace tephra::api {

using Duration = std::chrono::nanoseconds;

}  // namespace tephra::api

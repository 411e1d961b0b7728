// tephra-admission put together: the certificates (generated and shared, or given), the
// informer caches, the handlers behind the router, the HTTPS server, the caBundle patcher and
// the health/metrics endpoints. main() parses flags and calls RunAdmission.
//
// Every replica serves (no leader election) and its health endpoints live on its own servers,
// so it keeps this lifecycle rather than kube::DaemonRunner's; it shares kube/daemon.h's client
// flags and connection, default namespace, address parsing and exit codes.
#pragma once

#include "base/process.h"
#include "webhooks/options.h"

namespace tephra::webhooks {

// Runs until `shutdown` is requested; returns the process exit code (0 after a clean stop,
// 1 when a component could not start).
int RunAdmission(const AdmissionOptions& options, base::ShutdownSignal& shutdown);

}  // namespace tephra::webhooks

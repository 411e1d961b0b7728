// tephra-admission: the admission webhook daemon (validates and defaults Jobs, Queues,
// PodGroups and, opt-in, pods; manages its own certificates).
#include <glog/logging.h>

#include "base/flags.h"
#include "base/process.h"
#include "kube/daemon.h"
#include "webhooks/daemon.h"
#include "webhooks/options.h"

int main(int argc, char** argv) {
  tephra::webhooks::AdmissionOptions options;
  tephra::base::FlagSet flags(
      "tephra-admission",
      "Admission webhooks for Volcano-compatible Jobs, Queues, PodGroups and pods.");
  options.Register(flags);
  tephra::base::ShutdownSignal& shutdown = tephra::base::InitProcess(argc, argv, flags);
  // Review bodies of up to 3 MiB arrive in bursts: their memory must not stay resident.
  tephra::base::ReturnFreedMemoryPromptly();
  if (tephra::Status s = options.Finish(); !s.ok()) {
    LOG(ERROR) << s.message();
    return tephra::kube::kExitBadConfiguration;
  }
  return tephra::webhooks::RunAdmission(options, shutdown);
}

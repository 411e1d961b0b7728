// tephra-admission: the admission webhook daemon (validates and defaults Jobs, Queues,
// PodGroups and, opt-in, pods; manages its own certificates).
#include <glog/logging.h>

#include "kube/flags.h"
#include "kube/process.h"
#include "webhooks/daemon.h"
#include "webhooks/options.h"

int main(int argc, char** argv) {
  tephra::webhooks::AdmissionOptions options;
  tephra::kube::FlagSet flags(
      "tephra-admission",
      "Admission webhooks for Volcano-compatible Jobs, Queues, PodGroups and pods.");
  options.Register(flags);
  tephra::kube::ShutdownSignal& shutdown = tephra::kube::InitProcess(argc, argv, flags);
  // Review bodies of up to 3 MiB arrive in bursts: their memory must not stay resident.
  tephra::kube::ReturnFreedMemoryPromptly();
  if (tephra::Status s = options.Finish(); !s.ok()) {
    LOG(ERROR) << s.message();
    return 2;
  }
  return tephra::webhooks::RunAdmission(options, shutdown);
}

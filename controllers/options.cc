#include "controllers/options.h"

#include <iterator>
#include <string>
#include <vector>

#include "base/strings.h"

namespace tephra::controllers {

kube::DaemonOptions ControllerManagerOptions::DefaultDaemonOptions() {
  kube::DaemonOptions daemon;
  daemon.component = "tephra-controller-manager";
  daemon.event_source = "vc-controller-manager";  // what tools that follow Volcano filter on
  daemon.client.qps = 50;
  daemon.client.burst = 100;
  daemon.leader.resource_name = "vc-controller-manager";
  daemon.health = {"healthz-address", "127.0.0.1:11252", true};
  return daemon;
}

void ControllerManagerOptions::Register(base::FlagSet& f) {
  f.SetGroup("API server");
  kube::AddClientFlags(f, &daemon.client);
  f.SetGroup("Controllers");
  const std::vector<std::string> names(std::begin(kControllerNames), std::end(kControllerNames));
  f.AddCommaList("controllers", &enabled,
                 "Controllers to run: '*' for all, 'name' or '+name' to add, '-name' to remove (" +
                     base::Join(names, ", ") + ").");
  f.AddInt("worker-threads", &controllers.worker_threads, "Job controller workers.");
  f.AddInt("worker-threads-for-podgroup", &controllers.worker_threads_for_podgroup,
           "PodGroup controller workers.");
  f.AddInt("worker-threads-for-queue", &controllers.worker_threads_for_queue,
           "Queue controller workers.");
  f.AddInt("worker-threads-for-gc", &controllers.worker_threads_for_gc,
           "Garbage collector workers.");
  f.AddInt("max-pod-writes-in-flight", &controllers.max_pod_writes_in_flight,
           "Pod creations and deletions the job controller has in flight at once, over all "
           "workers; queued in arrival order, so one Job's pods are created together.");
  f.AddInt("max-requeue-num", &controllers.max_requeue_num,
           "Failed passes of a job before it is terminated (-1: never).");
  f.AddStringList("scheduler-name", &controllers.scheduler_names,
                  "Scheduler names whose pods and jobs are ours (repeatable).");
  f.AddString("default-queue", &controllers.default_queue, "Queue of jobs that name none.");
  f.AddString("namespace", &controllers.namespace_,
              "Only Jobs, pods, PodGroups and Commands of this namespace (default: all). The "
              "queue controller then needs --queue-label-selector.");
  f.AddString("queue-label-selector", &controllers.queue_label_selector,
              "Only Queues matching this label selector (default: all).");
  f.AddString("controller-conf-configmap", &controllers.controller_conf_configmap,
              "namespace/name of the ConfigMap whose volcano-controller.conf key configures "
              "HyperNode discovery (networkTopologyDiscovery); empty: none.");
  f.AddDuration("resync-period", &controllers.resync_period,
                "Re-check every object this often (0: only on changes).");
  f.SetGroup("Leader election");
  daemon.leader.Register(f);
  f.SetGroup("Serving");
  f.AddString("healthz-address", &daemon.health.address,
              "host:port of /healthz, /readyz and /metrics ('0' disables).");
}

Status ControllerManagerOptions::Finish() {
  TEPHRA_ASSIGN_OR_RETURN(selected, SelectControllers(enabled));
  if (controllers.scheduler_names.empty()) controllers.scheduler_names = {"volcano"};
  return Status::Ok();
}

}  // namespace tephra::controllers

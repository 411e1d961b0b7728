// What every controller of tephra-controller-manager gets and provides: a shared context
// (API client, informer factory, event recorder, clock, metrics, options) and a small
// lifecycle (register informers and handlers, then run workers until stopped).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/workqueue.h"
#include "kube/client.h"
#include "kube/events.h"
#include "kube/informer.h"

namespace tephra::metrics {
class Registry;
}

namespace tephra::controllers {

struct ControllerOptions {
  int worker_threads = 3;  // job controller
  int worker_threads_for_podgroup = 5;
  int worker_threads_for_queue = 5;
  int worker_threads_for_gc = 1;
  // Pod creations and deletions the job controller has in flight at once, over all its workers,
  // granted in the order asked (docs/controllers.md, "Pod writes in flight").
  int max_pod_writes_in_flight = 48;
  int max_requeue_num = 15;  // −1: retry forever
  std::vector<std::string> scheduler_names = {"volcano"};
  std::string default_queue = "default";
  // Only namespaced objects (Jobs, pods, PodGroups, Commands) in this namespace (empty: all).
  std::string namespace_;
  // Only Queues carrying this label selector (empty: all). With namespace_, lets several
  // controller managers share one cluster, each with its own slice (tests, benchmarks).
  std::string queue_label_selector;
  // Periodic full re-check of every object (0: none).
  std::chrono::milliseconds resync_period{0};
  // namespace/name of the ConfigMap whose volcano-controller.conf holds HyperNode discovery
  // (docs/controllers.md#hypernode-discovery); empty: no discovery.
  std::string controller_conf_configmap;
};

struct ControllerContext {
  std::shared_ptr<kube::Client> client;
  kube::InformerFactory* informers = nullptr;
  kube::EventRecorder* recorder = nullptr;
  base::ClockInterface* clock = nullptr;
  metrics::Registry* metrics = nullptr;
  ControllerOptions options;
};

class Controller {
 public:
  virtual ~Controller() = default;
  virtual std::string_view Name() const = 0;
  // Creates informers (through the factory) and registers handlers. Called once, before the
  // factory starts.
  virtual Status Initialize(ControllerContext& context) = 0;
  // Starts the workers; returns at once.
  virtual void Start() = 0;
  // Stops the workers and waits for them.
  virtual void Stop() = 0;
};

// Every known controller name, in start order.
inline constexpr std::string_view kControllerNames[] = {
    "job-controller", "queue-controller", "pg-controller", "gc-controller", "hyperNode-controller"};

// Volcano's --controllers syntax: "*" enables every controller, "name" or "+name" enables one,
// "-name" disables one; later items win. InvalidArgument for unknown names.
StatusOr<std::vector<std::string>> SelectControllers(const std::vector<std::string>& spec);

// Options of a controller's work queue: metrics under `name`, the context's clock and registry.
base::WorkQueueOptions QueueOptions(const ControllerContext& context, std::string name);

// The InformerScope of namespaced objects, and of Queues, under the options.
kube::InformerScope NamespacedScope(const ControllerOptions& options);
kube::InformerScope QueueScope(const ControllerOptions& options);

}  // namespace tephra::controllers

// Validation shared by the admission webhook and the controllers (docs/compatibility.md
// §3.3-§3.5). Pure functions over typed objects; the cluster state they need (queues,
// namespaces) comes in through small lookup interfaces that the webhook backs with its
// informer cache and tests back with StaticQueueLookup.
//
// Every rule violated produces one FieldError: the path of the offending field in the object
// ("spec.tasks[1].minAvailable") and a message that states the rule ("must be less than or
// equal to replicas (3)").
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/batch.h"
#include "api/core.h"
#include "api/scheduling.h"

namespace tephra::api {

struct FieldError {
  std::string path;
  std::string message;
  bool operator==(const FieldError&) const = default;
};
using FieldErrors = std::vector<FieldError>;

// All errors as one line for an admission response: "path: message; path: message". With
// `max_listed`, only the first that many, then MoreErrorsNote: a Job with 40,000 bad tasks gets a
// readable answer, not megabytes.
std::string FormatFieldErrors(const FieldErrors& errors,
                              size_t max_listed = std::numeric_limits<size_t>::max());
// " (and N more)" when only `listed` of `total` errors were shown; else empty.
std::string MoreErrorsNote(size_t total, size_t listed);

// Read access to the cluster's queues. Implementations must be safe to call from the thread
// running the validation; the objects returned must stay valid while the caller holds them.
class QueueLookup {
 public:
  virtual ~QueueLookup() = default;
  virtual std::shared_ptr<const Queue> Get(std::string_view name) const = 0;
  // Queues whose ParentName() is `parent`.
  virtual std::vector<std::shared_ptr<const Queue>> Children(std::string_view parent) const = 0;
  virtual std::vector<std::shared_ptr<const Queue>> List() const = 0;
  // Whether pods are allocated in the queue. The default reads status.allocated, which the
  // scheduler keeps up to date.
  virtual bool HasAllocatedPods(const Queue& queue) const;
};

// Read access to namespaces (for the namespace default-queue annotation).
class NamespaceLookup {
 public:
  virtual ~NamespaceLookup() = default;
  virtual std::shared_ptr<const Namespace> Get(std::string_view name) const = 0;
};

// An in-memory QueueLookup: for tests, and for callers that already hold every queue.
class StaticQueueLookup : public QueueLookup {
 public:
  StaticQueueLookup() = default;
  explicit StaticQueueLookup(std::vector<std::shared_ptr<const Queue>> queues);
  void Put(std::shared_ptr<const Queue> queue);  // adds or replaces by name

  std::shared_ptr<const Queue> Get(std::string_view name) const override;
  std::vector<std::shared_ptr<const Queue>> Children(std::string_view parent) const override;
  std::vector<std::shared_ptr<const Queue>> List() const override;

 private:
  std::map<std::string, std::shared_ptr<const Queue>, std::less<>> queues_;
};

// ---------------------------------------------------------------------------------------------
// Jobs

// The job plugins Tephra runs.
inline constexpr std::string_view kJobPlugins[] = {"env",     "svc",        "ssh", "mpi",
                                                   "pytorch", "tensorflow", "ray", "hcclrank"};

// CREATE: every §3.3 rule. `queues` may be null (a controller without queue state): the queue
// rules are then skipped.
FieldErrors ValidateJobCreate(const Job& job, const QueueLookup* queues);
// UPDATE: ranges, partition and topology rules, a fixed task count, and only minAvailable,
// priorityClassName, tasks[*].replicas and tasks[*].minAvailable may change.
FieldErrors ValidateJobUpdate(const Job& old_job, const Job& new_job);
// Lifecycle policies of a job (path "spec.policies") or a task ("spec.tasks[i].policies").
FieldErrors ValidateLifecyclePolicies(const std::vector<LifecyclePolicy>& policies,
                                      std::string_view path);
// The subset of Kubernetes pod-template validation that matters for batch pods
// (docs/admission.md): the JSON type of every PodTemplateSpec field Kubernetes defines (command
// a list of strings, ports integers, ...); at least one container; container names present, DNS
// labels and unique; images present; resource names valid, quantities non-negative with
// requests <= limits, extended resources and hugepages with limits; volumes named, unique and
// with one source, mounts naming them; environment variable names; ports; enumerated values
// (restart, pull, DNS and termination-message policies, protocols, toleration operators).
FieldErrors ValidatePodTemplate(const PodTemplate& tmpl, std::string_view path);

// ---------------------------------------------------------------------------------------------
// Queues

struct QueueValidationOptions {
  int max_queue_depth = 5;                         // levels below root
  bool enable_root_queue_protection = true;        // root's capability/deserved/guarantee are fixed
  bool enable_queue_allocated_pods_check = false;  // refuse deleting queues with pods
};

FieldErrors ValidateQueueCreate(const Queue& queue, const QueueLookup& queues,
                                const QueueValidationOptions& options = {});
FieldErrors ValidateQueueUpdate(const Queue& old_queue, const Queue& new_queue,
                                const QueueLookup& queues,
                                const QueueValidationOptions& options = {});
FieldErrors ValidateQueueDelete(const Queue& queue, const QueueLookup& queues,
                                const QueueValidationOptions& options = {});

// ---------------------------------------------------------------------------------------------
// PodGroups

// CREATE: minMember, minTaskMember and minResources non-negative; the queue, when set, exists
// and is Open (skipped when `queues` is null); network topology tier fields are exclusive on the
// PodGroup and each sub-group policy.
FieldErrors ValidatePodGroupCreate(const PodGroup& pg, const QueueLookup* queues);

// ---------------------------------------------------------------------------------------------
// Kubernetes name rules (each returns the problems, empty when valid)

// RFC 1123 label: lowercase alphanumerics and '-', alphanumeric at both ends, <= 63.
std::vector<std::string> DnsLabelProblems(std::string_view value);
// RFC 1123 subdomain: labels joined by '.', <= 253.
std::vector<std::string> DnsSubdomainProblems(std::string_view value);
// Qualified name (label keys, Volcano job and pod names): optional DNS-subdomain prefix and
// '/', then <= 63 alphanumerics, '-', '_' or '.', alphanumeric at both ends.
std::vector<std::string> QualifiedNameProblems(std::string_view value);
// Label value: empty, or <= 63 alphanumerics, '-', '_' or '.', alphanumeric at both ends.
std::vector<std::string> LabelValueProblems(std::string_view value);

}  // namespace tephra::api

// The framework's vocabulary: what plugins answer at each extension point, and the small
// interfaces through which a session's decisions leave the scheduler (binding, eviction).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/model.h"
#include "scheduler/model/prebind.h"

namespace tephra::scheduler {

class Session;

// The verdict of a predicate on one (task, node) pair. Reasons are static strings so that
// failing thousands of nodes costs no allocation; they are aggregated into explanations.
struct Fit {
  enum class Code : uint8_t {
    kFit,
    kUnschedulable,              // could change if resources were freed (preemption helps)
    kUnschedulableUnresolvable,  // preemption cannot help (selector, taints, ...)
  };
  Code code = Code::kFit;
  const char* reason = "";

  bool ok() const { return code == Code::kFit; }
  static Fit Ok() { return {}; }
  static Fit Fail(const char* reason) { return {Code::kUnschedulable, reason}; }
  static Fit Unresolvable(const char* reason) { return {Code::kUnschedulableUnresolvable, reason}; }
};

// Votes at JobPipelined and JobEnqueueable (Volcano's Permit/Abstain/Reject).
enum class Vote : int8_t { kReject = -1, kAbstain = 0, kPermit = 1 };

struct ValidateResult {
  bool pass = true;
  std::string reason;  // e.g. NotEnoughPodsOfTask
  std::string message;
};

using JobCompareFn = std::function<int(const JobInfo& l, const JobInfo& r)>;
using QueueCompareFn = std::function<int(const QueueInfo& l, const QueueInfo& r)>;
using TaskCompareFn = std::function<int(const TaskInfo& l, const TaskInfo& r)>;
using PredicateFn = std::function<Fit(const TaskInfo& task, const NodeInfo& node)>;
using NodeOrderFn = std::function<double(const TaskInfo& task, const NodeInfo& node)>;
// Adds one score per node to `scores` (same order as `nodes`).
using BatchNodeOrderFn = std::function<void(
    const TaskInfo& task, const std::vector<const NodeInfo*>& nodes, std::vector<double>* scores)>;
using JobPredicateFn = std::function<bool(const JobInfo& job)>;
using JobVoteFn = std::function<Vote(const JobInfo& job)>;
// The JobEnqueueable vote. `credit` is what the job could take by preempting lower-priority
// tasks of its own queue (empty on a first vote): plugins that count the cluster's or the
// queue's usage treat it as free.
using JobEnqueueableFn = std::function<Vote(const JobInfo& job, const api::Resources& credit)>;
using JobValidFn = std::function<std::optional<ValidateResult>(const JobInfo& job)>;
using QueuePredicateFn = std::function<bool(const QueueInfo& queue)>;
using QueueTaskPredicateFn = std::function<bool(const QueueInfo& queue, const TaskInfo& task)>;
// Returns the candidates this plugin allows to be evicted for `preemptor`, or nullopt to
// abstain. An empty list vetoes every candidate in this tier.
using VictimsFn = std::function<std::optional<std::vector<const TaskInfo*>>(
    const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates)>;
using JobNotifyFn = std::function<void(const JobInfo& job)>;
// The writes that must complete before `task` is bound to `node` (PreBind, asked at commit).
using PreBindFn =
    std::function<std::vector<PreBindStep>(const TaskInfo& task, const std::string& node)>;

// A job's trial placement inside one HyperNode (network topology), for HyperNodeOrder plugins
// to score: higher goes first; equal scores keep the HyperNodes' order (tier, then name).
struct HyperNodeTrial {
  const HyperNodeInfo* hypernode = nullptr;
  api::Resources allocatable;  // over its nodes
  api::Resources idle_after;   // what its nodes have left once the trial placement is made
  // The same for the lowest HyperNode above it (none at the top).
  const HyperNodeInfo* parent = nullptr;
  api::Resources parent_allocatable;
  api::Resources parent_idle_after;
};
using HyperNodeOrderFn = std::function<double(const JobInfo& job, const HyperNodeTrial& trial)>;

// Allocation changes inside a session, for plugins that keep running sums (drf shares,
// proportion queue usage).
struct TaskEvent {
  const TaskInfo& task;
  const std::string& node;
};
struct EventHandler {
  std::function<void(const TaskEvent&)> allocate;    // task now holds resources
  std::function<void(const TaskEvent&)> deallocate;  // task gave them back
};

// One pod a committed statement binds, and the writes that must complete first.
struct BindRequest {
  const TaskInfo* task = nullptr;  // valid during Binder::Bind
  std::string node;
  std::vector<PreBindStep> steps;
};

// Every bind of one committed statement (a gang, or what of it this session placed): the
// binder completes every member's pre-bind steps before it binds any member, so a gang never
// ends half-bound because one member's volumes failed (docs/scheduler.md, "Storage").
struct BindUnit {
  std::vector<BindRequest> binds;
  bool HasSteps() const;
};

// Where committed allocations go (the binder: assume in the cache, pre-bind steps, then
// pods/binding).
class Binder {
 public:
  virtual ~Binder() = default;
  virtual void Bind(const BindUnit& unit) = 0;
};

// Where committed evictions go (mark releasing, DisruptionTarget condition, delete).
class Evictor {
 public:
  virtual ~Evictor() = default;
  virtual void Evict(const TaskInfo& task, const std::string& reason) = 0;
};

// A scheduler plugin: a new instance per session, configured from its tier entry. It reads its
// arguments when it is built, so that the keys it did not read can be reported.
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  // Volcano's argument keys this plugin knows but does not act on: set, they are reported as
  // such rather than as misspelt (docs/scheduler.md, "Configuration"). A key ending in "."
  // stands for every key under it.
  virtual std::vector<std::string_view> RecognisedArguments() const { return {}; }
  // Registers the plugin's callbacks with the session.
  virtual void OnSessionOpen(Session& session) = 0;
  virtual void OnSessionClose(Session& session) { (void)session; }
};

// A scheduling action (enqueue, allocate, ...), run once per session in configured order.
class Action {
 public:
  virtual ~Action() = default;
  virtual std::string_view name() const = 0;
  // As Plugin::RecognisedArguments, for the action's entry in `configurations`.
  virtual std::vector<std::string_view> RecognisedArguments() const { return {}; }
  virtual void Execute(Session& session) = 0;
};

}  // namespace tephra::scheduler

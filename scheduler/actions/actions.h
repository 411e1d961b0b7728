// Factories of the builtin actions (Volcano's names; behaviour at each definition).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "scheduler/framework/conf.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/registry.h"
#include "scheduler/framework/session.h"

namespace tephra::scheduler {

std::unique_ptr<Action> NewEnqueueAction(const Arguments& arguments);
std::unique_ptr<Action> NewAllocateAction(const Arguments& arguments);
std::unique_ptr<Action> NewBackfillAction(const Arguments& arguments);
std::unique_ptr<Action> NewPreemptAction(const Arguments& arguments);
std::unique_ptr<Action> NewReclaimAction(const Arguments& arguments);

// Every action above, in the order RegisterBuiltins registers them: the one list of them.
std::vector<ActionFactory> BuiltinActionFactories();

// A task allocate may place: Pending, with requests (backfill places the others) and no
// scheduling gate.
bool Schedulable(const TaskInfo& task);

// A priority queue over indexes, ordered by a "goes first" predicate that may read state
// which changes between pops (shares move as tasks are placed).
class IndexHeap {
 public:
  explicit IndexHeap(std::function<bool(size_t, size_t)> first) : first_(std::move(first)) {}
  void Push(size_t i);
  size_t Pop();
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }

 private:
  std::function<bool(size_t, size_t)> first_;
  std::vector<size_t> items_;
};

// Picks a node for `task` among the session's nodes: the best-scored node with enough idle
// resources, else the best whose resources are being released (pipelined). Shared by
// allocate and backfill.
struct Placement {
  std::optional<size_t> node;
  bool pipelined = false;
  FitErrors errors;  // when no node fits
};
class NodePicker {
 public:
  explicit NodePicker(Session& session) : session_(session) {}
  Placement Pick(const TaskInfo& task, bool allow_pipeline);

  // Within one job, identical tasks whose placement cannot affect each other except through
  // node resources (no host ports, pod affinity or spread) reuse the candidate nodes and
  // scores found for the first one: after each placement only the chosen node is looked at
  // again. Call BeginJob before a job's tasks and Placed after each placement.
  void BeginJob() { memo_.reset(); }
  void Placed(const TaskInfo& task, size_t node);
  // Looks only at `nodes` (ascending session node indexes; null: every node) until told
  // otherwise: a job with a network topology is placed inside one HyperNode.
  void Restrict(const std::vector<size_t>* nodes) {
    domain_ = nodes;
    memo_.reset();
  }

 private:
  struct Memo {
    const SchedulingSpec* spec = nullptr;
    std::vector<size_t> nodes;  // candidates with enough idle resources
    std::vector<double> per_node;
    std::vector<double> batch;
  };
  static bool Reusable(const SchedulingSpec& spec);
  Placement FromMemo();

  Session& session_;
  std::optional<Memo> memo_;
  size_t next_start_ = 0;  // rotates so consecutive tasks do not all probe the same nodes
  const std::vector<size_t>* domain_ = nullptr;
  std::vector<const NodeInfo*> candidates_;
  std::vector<size_t> indexes_;
  std::vector<size_t> future_;
  std::vector<double> scores_;
};

}  // namespace tephra::scheduler

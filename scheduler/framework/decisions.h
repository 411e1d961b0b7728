// What one session decided, in a form that can be compared between the live scheduler and an
// offline replay: pods bound (and where), pods evicted, PodGroups admitted.
#pragma once

#include <string>
#include <vector>

#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/session.h"

namespace tephra::scheduler {

struct Decisions {
  struct Bind {
    std::string pod;  // namespace/name
    std::string node;
    std::vector<std::string> steps;  // its pre-bind steps, described (PreBindStep::Describe)
    bool operator==(const Bind&) const = default;
  };
  struct Evict {
    std::string pod;
    std::string reason;
    bool operator==(const Evict&) const = default;
  };
  struct Phase {
    JobId job;
    std::string phase;  // the PodGroup phase the session moved the job to (Inqueue)
    bool operator==(const Phase&) const = default;
  };
  std::vector<Bind> binds;
  std::vector<Evict> evictions;
  std::vector<Phase> phases;

  bool empty() const { return binds.empty() && evictions.empty() && phases.empty(); }
  // Sorts every list so that two sets of decisions compare independent of order.
  void Normalize();
  bool operator==(const Decisions&) const = default;
  // One decision per line: "bind ns/pod node", "bind ns/pod node (provision claim ns/c on node
  // node)", "evict ns/pod (reason)", "phase ns/pg Inqueue".
  std::string ToText() const;
};

// A Binder and Evictor that records every decision and passes it on (to `next`, when set).
class DecisionLog : public Binder, public Evictor {
 public:
  DecisionLog(Binder* next_binder, Evictor* next_evictor)
      : next_binder_(next_binder), next_evictor_(next_evictor) {}
  void Bind(const BindUnit& unit) override;
  void Evict(const TaskInfo& task, const std::string& reason) override;
  // Adds the phase changes of a closed session (jobs it admitted) and hands everything over.
  Decisions Take(const Session& ssn);

 private:
  Binder* next_binder_;
  Evictor* next_evictor_;
  Decisions decisions_;
};

}  // namespace tephra::scheduler

// capacity: queues get what their spec.deserved says, may borrow up to their capability
// (what others' guarantees leave), and give back down to — never below — their guarantee.
// With enableHierarchy, queues form a tree through spec.parent and every ancestor's
// capability and deserved share are checked as well.
//   QueueOrder     lower share (allocated / deserved) first; queues without deserved last
//   Allocatable    the queue is Open and allocated + task <= real capability, for every
//                  ancestor too (hierarchy)
//   Preemptive     allocated + task <= deserved (a queue reclaims only up to its share)
//   Reclaimable    victims from queues above deserved, never taking one below its guarantee
//   JobEnqueueable minResources + allocated + admitted-but-unstarted <= real capability
#include <algorithm>
#include <map>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/notes.h"

namespace tephra::scheduler {
namespace {

using api::Resources;

struct Attr {
  const QueueInfo* queue = nullptr;
  Resources allocated, inqueue, deserved, guarantee, capability, real_capability;
  std::string parent;
};

class CapacityPlugin : public Plugin {
 public:
  explicit CapacityPlugin(bool hierarchy) : hierarchy_(hierarchy) {}
  std::string_view name() const override { return "capacity"; }
  // Volcano's limit on which ancestors' deserved shares reclaim checks.
  std::vector<std::string_view> RecognisedArguments() const override {
    return {"ancestorReclaimLevel"};
  }

  void OnSessionOpen(Session& ssn) override {
    session_ = &ssn;
    Resources total = WithoutPods(ssn.total_resource());
    Resources guarantees;
    for (const auto& [name, q] : ssn.queues()) {
      Attr& a = attrs_[name];
      a.queue = q.get();
      a.deserved = q->deserved;
      if (q->GuaranteeFits(total)) a.guarantee = q->guarantee;  // else not honoured at all
      a.capability = q->capability;
      a.parent = hierarchy_ && name != "root" ? (q->parent.empty() ? "root" : q->parent) : "";
      guarantees.Add(a.guarantee);
    }
    for (auto& [name, a] : attrs_) {
      a.real_capability = total;
      a.real_capability.Sub(guarantees);
      a.real_capability.Add(a.guarantee);
      for (const auto& dim : a.capability.Names()) {
        if (dim != api::kResourcePods)
          a.real_capability.Set(dim, std::min(a.real_capability.Get(dim), a.capability.Get(dim)));
      }
    }
    for (size_t j = 0; j < ssn.job_count(); ++j) {
      const JobInfo& job = ssn.job(j);
      for (Attr* a : Chain(job.queue)) {
        a->allocated.Add(WithoutPods(job.allocated));
        if (job.phase == api::PodGroupPhase::kInqueue && job.min_resources)
          a->inqueue.Add(WithoutPods(job.UngatedMinResources()));
      }
    }

    ssn.AddQueueOrderFn(name(), [this](const QueueInfo& l, const QueueInfo& r) {
      double ls = Share(l.name), rs = Share(r.name);
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    ssn.AddAllocatableFn(name(), [this](const QueueInfo& q, const TaskInfo& task) {
      if (!q.IsOpen()) return false;
      for (Attr* a : Chain(q.name)) {
        Resources future = a->allocated;
        future.Add(WithoutPods(task.request()));
        if (!future.LessEqualInDims(a->real_capability, task.request())) return false;
      }
      return true;
    });
    ssn.AddPreemptiveFn(name(), [this](const QueueInfo& q, const TaskInfo& task) {
      for (Attr* a : Chain(q.name)) {
        if (a->deserved.IsEmpty()) continue;
        Resources future = a->allocated;
        future.Add(WithoutPods(task.request()));
        if (!future.LessEqualInDims(a->deserved, task.request())) return false;
      }
      return true;
    });
    ssn.AddReclaimableFn(
        name(),
        [this](const TaskInfo&, const std::vector<const TaskInfo*>& candidates)
            -> std::optional<std::vector<const TaskInfo*>> {
          std::map<std::string, Resources> left;  // queue → allocated after the victims so far
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* c : candidates) {
            auto j = session_->JobIndex(c->job());
            if (!j) continue;
            bool ok = true;
            std::vector<std::pair<std::string, Resources>> after;
            for (Attr* a : Chain(session_->job(*j).queue)) {
              std::string name = a->queue != nullptr ? a->queue->name : "";
              auto it = left.try_emplace(name, a->allocated).first;
              Resources now = it->second;
              // Only what a queue holds above its deserved share can be taken ...
              if (now.LessEqualInDims(a->deserved, c->request())) {
                ok = false;
                break;
              }
              now.Sub(WithoutPods(c->request()));
              // ... and never below its guarantee, in the resources the victim gives back.
              if (!a->guarantee.LessEqualInDims(now, c->request())) {
                ok = false;
                break;
              }
              after.emplace_back(name, now);
            }
            if (!ok) continue;
            for (auto& [name, r] : after) left[name] = r;
            victims.push_back(c);
          }
          return victims;
        });
    Session* s = &ssn;
    ssn.AddJobEnqueueableFn(name(), [this, s](const JobInfo& job, const Resources& credit) {
      const Attr* leaf = Find(job.queue);
      if (leaf == nullptr || leaf->queue == nullptr || !leaf->queue->IsOpen()) {
        NoteJob(*s, job,
                QueueNotOpenNote(name(), job.queue, leaf == nullptr ? nullptr : leaf->queue));
        return Vote::kReject;
      }
      if (!job.min_resources) return Vote::kPermit;
      Resources min = WithoutPods(*job.min_resources);
      for (Attr* a : Chain(job.queue)) {
        Resources want = min;
        want.Add(a->allocated);
        want.Add(a->inqueue);
        Resources capability = a->real_capability;
        capability.Add(credit);  // the leaf's own tasks, so every ancestor's too
        if (!want.LessEqualInDims(capability, min)) {
          NoteJob(
              *s, job,
              AdmissionShortfallNote(name(), a->queue != nullptr ? a->queue->name : job.queue, min,
                                     a->allocated, a->inqueue, a->real_capability, a->capability));
          return Vote::kReject;
        }
      }
      return Vote::kPermit;
    });
    ssn.AddJobEnqueuedFn(name(), [this](const JobInfo& job) {
      if (!job.min_resources) return;
      for (Attr* a : Chain(job.queue)) a->inqueue.Add(WithoutPods(*job.min_resources));
    });
    EventHandler h;
    h.allocate = [this](const TaskEvent& e) { Move(e.task, +1); };
    h.deallocate = [this](const TaskEvent& e) { Move(e.task, -1); };
    ssn.AddEventHandler(name(), h);
  }

  // Explanations show every queue's entitlement as this session ended.
  void OnSessionClose(Session& ssn) override {
    for (const auto& [queue, a] : attrs_) {
      ssn.ReportQueueShare(queue, {std::string(name()), a.deserved, a.allocated, a.real_capability,
                                   a.inqueue, Share(queue)});
    }
  }

 private:
  Attr* Find(const std::string& name) {
    auto it = attrs_.find(name);
    return it == attrs_.end() ? nullptr : &it->second;
  }
  // The queue and, with hierarchy, its ancestors up to root.
  std::vector<Attr*> Chain(const std::string& queue) {
    std::vector<Attr*> out;
    std::string name = queue;
    for (int depth = 0; depth < 16 && !name.empty(); ++depth) {
      Attr* a = Find(name);
      if (a == nullptr) break;
      out.push_back(a);
      name = a->parent;
    }
    return out;
  }
  double Share(const std::string& queue) {
    const Attr* a = Find(queue);
    if (a == nullptr || a->deserved.IsEmpty()) return 1.0;
    double share = 0;
    for (const auto& n : a->allocated.Names()) {
      int64_t d = a->deserved.Get(n), v = a->allocated.Get(n);
      if (v <= 0) continue;
      share = std::max(share, d <= 0 ? 1.0 : static_cast<double>(v) / static_cast<double>(d));
    }
    return share;
  }
  void Move(const TaskInfo& task, int sign) {
    auto j = session_->JobIndex(task.job());
    if (!j) return;
    for (Attr* a : Chain(session_->job(*j).queue)) {
      if (sign > 0) {
        a->allocated.Add(WithoutPods(task.request()));
      } else {
        a->allocated.Sub(WithoutPods(task.request()));
      }
    }
  }

  const bool hierarchy_;
  Session* session_ = nullptr;
  std::map<std::string, Attr> attrs_;
};

}  // namespace

std::unique_ptr<Plugin> NewCapacityPlugin(const PluginOption& option) {
  return std::make_unique<CapacityPlugin>(option.enable_hierarchy.value_or(false));
}

}  // namespace tephra::scheduler

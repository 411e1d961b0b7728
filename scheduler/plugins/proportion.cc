// proportion: queues share the cluster by weight.
//
// Each session computes every queue's `deserved` by water-filling: the cluster's resources are
// handed out in proportion to weight, a queue stops growing at its demand (allocated + pending
// requests) or its real capability (capability, and what others' guarantees leave), never
// below its guarantee, and what it does not need is handed out again among the others.
//   QueueOrder   higher queue priority, then lower share (max over resources of
//                allocated / deserved)
//   Overused     allocated >= deserved in every resource
//   Allocatable  the queue is Open and allocated + task <= deserved in the task's resources
//   Preemptive   same test, for reclaim
//   JobEnqueueable / JobEnqueued   admission against real capability, counting admitted jobs
//   Reclaimable  victims from queues above their deserved share
#include <algorithm>
#include <map>

#include <glog/logging.h>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/plugins.h"
#include "scheduler/plugins/support/notes.h"

namespace tephra::scheduler {
namespace {

using api::Resources;

struct QueueAttr {
  const QueueInfo* queue = nullptr;
  Resources deserved;
  Resources allocated;
  Resources request;
  Resources inqueue;
  Resources elastic;     // allocated above minResources in running jobs: could be given back
  Resources capability;  // from the Queue; empty = unlimited
  Resources real_capability;
  Resources guarantee;
  double share = 0;
};

// Applies fn(name) over the union of dimensions of a and b.
template <typename Fn>
void ForDims(const Resources& a, const Resources& b, Fn fn) {
  std::vector<std::string> names = a.Names();
  for (const auto& n : b.Names()) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  for (const auto& n : names) fn(n);
}

// Per dimension min(a, b); a dimension missing from `limit` does not limit.
Resources MinUnlimited(const Resources& a, const Resources& limit) {
  Resources out = a;
  for (const auto& n : a.Names()) {
    if (limit.Has(n)) out.Set(n, std::min(a.Get(n), limit.Get(n)));
  }
  return out;
}

// Per dimension min(a, b); a dimension missing from `limit` counts as 0.
Resources MinZero(const Resources& a, const Resources& limit) {
  Resources out;
  ForDims(a, limit, [&](const std::string& n) { out.Set(n, std::min(a.Get(n), limit.Get(n))); });
  return out;
}

double Share(const Resources& allocated, const Resources& deserved) {
  double share = 0;
  for (const auto& n : allocated.Names()) {
    int64_t a = allocated.Get(n);
    if (a <= 0) continue;
    int64_t d = deserved.Get(n);
    double s = d <= 0 ? 1.0 : static_cast<double>(a) / static_cast<double>(d);
    share = std::max(share, s);
  }
  return share;
}

class ProportionPlugin : public Plugin {
 public:
  std::string_view name() const override { return "proportion"; }

  void OnSessionOpen(Session& ssn) override {
    const Resources total = WithoutPods(ssn.total_resource());
    Resources total_guarantee;  // a guarantee beyond the cluster is not honoured
    for (const auto& [name, q] : ssn.queues()) {
      if (q->GuaranteeFits(total)) total_guarantee.Add(q->guarantee);
    }
    const std::string* last_queue = nullptr;  // jobs of one queue tend to be adjacent
    QueueAttr* last_attr = nullptr;
    for (size_t i = 0; i < ssn.job_count(); ++i) {
      const JobInfo& job = ssn.job(i);
      if (last_queue == nullptr || *last_queue != job.queue) {
        last_queue = &job.queue;
        last_attr = &Attr(ssn, job.queue);
      }
      QueueAttr& attr = *last_attr;
      attr.allocated.Add(WithoutPods(job.allocated));
      Resources request = WithoutPods(job.allocated);
      request.Add(WithoutPods(job.pending));
      // A PodGroup not admitted yet may have no pods; its minResources are then its demand,
      // which gives its queue a deserved share to reclaim for (see reclaim). When its pods
      // already exist (plain pods, operators that create pods first) they are that demand:
      // adding both would double the queue's request and starve lighter queues.
      if (job.IsPending() && job.min_resources) request.MaxWith(WithoutPods(*job.min_resources));
      attr.request.Add(request);
      if (job.phase == api::PodGroupPhase::kInqueue && job.min_resources)
        attr.inqueue.Add(job.UngatedMinResources());
      if (job.phase == api::PodGroupPhase::kRunning && job.min_resources) {
        Resources elastic = WithoutPods(job.allocated);
        elastic.Sub(*job.min_resources);
        attr.elastic.Add(elastic);
      }
    }
    for (auto& [name, attr] : attrs_) {
      // What this queue could get if everyone else only kept their guarantees.
      attr.real_capability = total;
      attr.real_capability.Sub(total_guarantee);
      attr.real_capability.Add(attr.guarantee);
      if (!attr.capability.IsEmpty()) {
        attr.real_capability = MinUnlimited(attr.real_capability, attr.capability);
      }
    }
    WaterFill(total);
    for (auto& [name, attr] : attrs_) attr.share = Share(attr.allocated, attr.deserved);

    ssn.AddQueueOrderFn(name(), [this](const QueueInfo& l, const QueueInfo& r) {
      if (l.priority != r.priority) return l.priority > r.priority ? -1 : 1;
      double ls = ShareOf(l.name), rs = ShareOf(r.name);
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    ssn.AddOverusedFn(name(), [this](const QueueInfo& q) {
      auto it = attrs_.find(q.name);
      if (it == attrs_.end()) return false;
      return it->second.deserved.LessEqual(it->second.allocated, Resources::Missing::kZero);
    });
    ssn.AddAllocatableFn(name(), [this](const QueueInfo& q, const TaskInfo& task) {
      if (!q.IsOpen()) return false;
      auto it = attrs_.find(q.name);
      if (it == attrs_.end()) return true;
      Resources future = it->second.allocated;
      future.Add(WithoutPods(task.request()));
      return future.LessEqualInDims(it->second.deserved, task.request());
    });
    ssn.AddPreemptiveFn(name(), [this](const QueueInfo& q, const TaskInfo& task) {
      auto it = attrs_.find(q.name);
      if (it == attrs_.end()) return true;
      Resources future = it->second.allocated;
      future.Add(WithoutPods(task.request()));
      return future.LessEqualInDims(it->second.deserved, task.request());
    });
    Session* s = &ssn;
    ssn.AddJobEnqueueableFn(name(), [this, s](const JobInfo& job, const Resources& credit) {
      const QueueInfo* q = s->queue(job.queue);
      if (q == nullptr || !q->IsOpen()) {
        NoteJob(*s, job, QueueNotOpenNote(name(), job.queue, q));
        return Vote::kReject;
      }
      if (!job.min_resources) return Vote::kPermit;
      auto it = attrs_.find(job.queue);
      if (it == attrs_.end()) return Vote::kPermit;
      const QueueAttr& a = it->second;
      Resources want = *job.min_resources;
      want.Add(a.allocated);
      want.Add(a.inqueue);
      want.Sub(a.elastic);
      Resources capability = a.real_capability;
      capability.Add(credit);  // the queue's own tasks the job may preempt
      if (want.LessEqualInDims(capability, *job.min_resources)) return Vote::kPermit;
      Resources allocated = a.allocated;
      allocated.Sub(a.elastic);
      NoteJob(*s, job,
              AdmissionShortfallNote(name(), job.queue, WithoutPods(*job.min_resources), allocated,
                                     a.inqueue, a.real_capability, a.capability));
      return Vote::kReject;
    });
    ssn.AddJobEnqueuedFn(name(), [this](const JobInfo& job) {
      auto it = attrs_.find(job.queue);
      if (it != attrs_.end() && job.min_resources) it->second.inqueue.Add(*job.min_resources);
    });
    ssn.AddReclaimableFn(
        name(),
        [this, s](const TaskInfo& reclaimer, const std::vector<const TaskInfo*>& candidates)
            -> std::optional<std::vector<const TaskInfo*>> {
          std::map<std::string, Resources> left;  // queue → allocated after the victims so far
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* c : candidates) {
            auto j = s->JobIndex(c->job());
            if (!j) continue;
            const std::string& queue = s->job(*j).queue;
            auto it = attrs_.find(queue);
            if (it == attrs_.end()) continue;
            auto [l, inserted] = left.try_emplace(queue, it->second.allocated);
            Resources& allocated = l->second;
            (void)reclaimer;
            // Only a queue above its deserved share in the victim's resources gives back.
            if (allocated.LessEqualInDims(it->second.deserved, c->request())) continue;
            allocated.Sub(WithoutPods(c->request()));
            victims.push_back(c);
          }
          return victims;
        });
    EventHandler h;
    h.allocate = [this, s](const TaskEvent& e) { Move(*s, e.task, +1); };
    h.deallocate = [this, s](const TaskEvent& e) { Move(*s, e.task, -1); };
    ssn.AddEventHandler(name(), h);
  }

  // Explanations show every queue's entitlement as this session ended.
  void OnSessionClose(Session& ssn) override {
    for (const auto& [queue, a] : attrs_) {
      ssn.ReportQueueShare(queue, {std::string(name()), a.deserved, a.allocated, a.real_capability,
                                   a.inqueue, a.share});
    }
  }

 private:
  QueueAttr& Attr(const Session& ssn, const std::string& queue) {
    auto it = attrs_.find(queue);
    if (it != attrs_.end()) return it->second;
    QueueAttr& a = attrs_[queue];
    a.queue = ssn.queue(queue);
    if (a.queue != nullptr) {
      a.capability = a.queue->capability;
      if (a.queue->GuaranteeFits(WithoutPods(ssn.total_resource())))
        a.guarantee = a.queue->guarantee;
    }
    return a;
  }

  double ShareOf(const std::string& queue) const {
    auto it = attrs_.find(queue);
    return it == attrs_.end() ? 0 : it->second.share;
  }

  void Move(const Session& ssn, const TaskInfo& task, int sign) {
    auto j = ssn.JobIndex(task.job());
    if (!j) return;
    auto it = attrs_.find(ssn.job(*j).queue);
    if (it == attrs_.end()) return;
    if (sign > 0) {
      it->second.allocated.Add(WithoutPods(task.request()));
    } else {
      it->second.allocated.Sub(WithoutPods(task.request()));
    }
    it->second.share = Share(it->second.allocated, it->second.deserved);
  }

  void WaterFill(const Resources& total) {
    Resources remaining = total;
    std::map<std::string, bool> met;
    for (int round = 0; round < 64; ++round) {
      int64_t total_weight = 0;
      for (const auto& [name, attr] : attrs_) {
        if (!met[name]) total_weight += attr.queue != nullptr ? attr.queue->weight : 1;
      }
      if (total_weight == 0) break;
      Resources before = remaining;
      Resources handed_out;
      for (auto& [name, attr] : attrs_) {
        if (met[name]) continue;
        int64_t weight = attr.queue != nullptr ? attr.queue->weight : 1;
        Resources old = attr.deserved;
        Resources slice = remaining;
        slice.Scale(static_cast<double>(weight) / static_cast<double>(total_weight));
        attr.deserved.Add(slice);
        attr.deserved = MinUnlimited(attr.deserved, attr.real_capability);
        attr.deserved = MinZero(attr.deserved, attr.request);
        attr.deserved.MaxWith(attr.guarantee);
        if (attr.request.LessEqual(attr.deserved, Resources::Missing::kZero) ||
            (!attr.real_capability.IsEmpty() &&
             attr.real_capability.LessEqual(attr.deserved, Resources::Missing::kUnlimited))) {
          met[name] = true;
        }
        Resources grew = attr.deserved;
        grew.Sub(old);
        handed_out.Add(grew);
      }
      remaining.Sub(handed_out);
      if (remaining.IsZero() || remaining == before) break;
    }
  }

  std::map<std::string, QueueAttr> attrs_;
};

}  // namespace

std::unique_ptr<Plugin> NewProportionPlugin(const PluginOption&) {
  return std::make_unique<ProportionPlugin>();
}

}  // namespace tephra::scheduler

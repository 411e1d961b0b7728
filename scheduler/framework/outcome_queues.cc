// Queue status.allocated rolled up the hierarchy, and the queues whose guarantee cannot be
// honoured: the piece of ComputeOutcome (outcome.h) for queues.
#include "scheduler/framework/outcome.h"

namespace tephra::scheduler {

std::map<std::string, api::Resources> RollUpQueueAllocations(
    const std::map<std::string, api::Resources>& own,
    const std::map<std::string, std::shared_ptr<const QueueInfo>>& queues) {
  auto find = [&](const std::string& name) -> const QueueInfo* {
    auto it = queues.find(name);
    return it == queues.end() ? nullptr : it->second.get();
  };
  std::map<std::string, api::Resources> rolled = own;
  for (const auto& [name, used] : own) {
    std::string parent = find(name) != nullptr ? find(name)->parent : "";
    for (int depth = 0; !parent.empty() && depth < 16; ++depth) {
      rolled[parent].Add(used);
      const QueueInfo* p = find(parent);
      parent = p != nullptr && p->name != "root" ? p->parent : "";
    }
  }
  return rolled;
}

std::vector<QueueUpdate> QueueUpdatesFor(
    const std::map<std::string, api::Resources>& rolled,
    const std::map<std::string, std::shared_ptr<const QueueInfo>>& queues) {
  std::vector<QueueUpdate> out;
  for (const auto& [name, q] : queues) {
    auto sum = rolled.find(name);
    api::Resources want = sum != rolled.end() ? sum->second : api::Resources{};
    api::Resources have = q->queue
                              ? WithoutPods(api::Resources::FromList(q->queue->status.allocated))
                              : api::Resources{};
    // Compare on the values that matter, ignoring dimensions present with zero.
    if (want.LessEqual(have, api::Resources::Missing::kZero) &&
        have.LessEqual(want, api::Resources::Missing::kZero)) {
      continue;
    }
    api::ResourceList list = want.ToList();
    list.Erase(api::kResourcePods);
    out.push_back({name, std::move(list)});
  }
  return out;
}

std::vector<QueueWarning> QueueWarningsFor(
    const std::map<std::string, std::shared_ptr<const QueueInfo>>& queues,
    const api::Resources& total) {
  std::vector<QueueWarning> out;
  const api::Resources cluster = WithoutPods(total);
  for (const auto& [name, q] : queues) {
    std::vector<std::string> beyond =
        cluster.IsEmpty() ? std::vector<std::string>{} : q->GuaranteeBeyond(cluster);
    if (beyond.empty()) continue;
    api::Resources asked, has;
    for (const auto& r : beyond) {
      asked.Set(r, q->guarantee.Get(r));
      has.Set(r, cluster.Get(r));
    }
    out.push_back({name, "GuaranteeNotHonoured",
                   "guarantee " + asked.ToString() + " exceeds the whole cluster (" +
                       has.ToString() +
                       "): it is not honoured, and the queue shares the cluster by "
                       "weight until the guarantee fits"});
  }
  return out;
}

}  // namespace tephra::scheduler

// The queue pieces of a session's outcome (scheduler/framework/outcome.h), on hand-made
// queues: usage rolled up the hierarchy, the status.allocated writes it asks for, and the
// guarantees the cluster cannot honour.
#include "scheduler/framework/outcome.h"

#include <catch2/catch.hpp>

namespace tephra::scheduler {
namespace {

using Queues = std::map<std::string, std::shared_ptr<const QueueInfo>>;

std::shared_ptr<const QueueInfo> MakeQueue(const std::string& name, const std::string& parent,
                                           api::ResourceList allocated = {}) {
  auto q = std::make_shared<QueueInfo>();
  q->name = name;
  q->parent = parent;
  auto queue = std::make_shared<api::Queue>();
  queue->metadata.name = name;
  queue->status.allocated = std::move(allocated);
  q->queue = queue;
  return q;
}

api::Resources Cpu(int64_t milli) {
  return api::Resources().SetMilliCpu(milli);
}

TEST_CASE("Queue usage rolls up to every ancestor and stops at root") {
  // root ← a ← a1 ← a11; b has no parent; ghost names a parent that is not known. Nothing is
  // above root, even when its object says so.
  Queues queues = {{"root", MakeQueue("root", "above")},
                   {"a", MakeQueue("a", "root")},
                   {"a1", MakeQueue("a1", "a")},
                   {"a11", MakeQueue("a11", "a1")},
                   {"b", MakeQueue("b", "")},
                   {"ghost", MakeQueue("ghost", "gone")}};
  std::map<std::string, api::Resources> own = {
      {"a11", Cpu(1000)}, {"a1", Cpu(500)}, {"b", Cpu(250)}, {"ghost", Cpu(100)}};
  std::map<std::string, api::Resources> rolled = RollUpQueueAllocations(own, queues);
  CHECK(rolled["a11"] == Cpu(1000));
  CHECK(rolled["a1"] == Cpu(1500));
  CHECK(rolled["a"] == Cpu(1500));
  CHECK(rolled["root"] == Cpu(1500));
  CHECK(rolled.count("above") == 0);
  CHECK(rolled["b"] == Cpu(250));
  // An unknown parent still gets its child's usage, and the walk ends there.
  CHECK(rolled["gone"] == Cpu(100));
  CHECK(rolled["ghost"] == Cpu(100));
}

TEST_CASE("A parent loop is walked at most 16 levels") {
  Queues queues = {{"x", MakeQueue("x", "y")}, {"y", MakeQueue("y", "x")}};
  std::map<std::string, api::Resources> rolled = RollUpQueueAllocations({{"x", Cpu(1)}}, queues);
  // x's own 1, then 16 additions alternating y, x, y, ...: 8 each.
  CHECK(rolled["x"] == Cpu(9));
  CHECK(rolled["y"] == Cpu(8));
}

TEST_CASE("Only queues whose status.allocated changed are written, zeros aside") {
  Queues queues = {
      {"same", MakeQueue("same", "",
                         api::ResourceList{{"cpu", api::Quantity::FromMilli(1000)},
                                           {"pods", api::Quantity::FromInt(3)}})},
      {"zero", MakeQueue("zero", "", api::ResourceList{{"memory", api::Quantity::FromInt(0)}})},
      {"grew", MakeQueue("grew", "", api::ResourceList{{"cpu", api::Quantity::FromMilli(500)}})},
      {"emptied",
       MakeQueue("emptied", "", api::ResourceList{{"cpu", api::Quantity::FromMilli(500)}})}};
  std::map<std::string, api::Resources> rolled = {{"same", Cpu(1000)}, {"grew", Cpu(750)}};
  std::vector<QueueUpdate> updates = QueueUpdatesFor(rolled, queues);
  REQUIRE(updates.size() == 2);
  CHECK(updates[0].name == "emptied");
  CHECK(updates[0].allocated.empty());
  CHECK(updates[1].name == "grew");
  CHECK(api::Resources::FromList(updates[1].allocated) == Cpu(750));
}

TEST_CASE("A guarantee beyond the whole cluster is named, and none while the cluster is empty") {
  auto big = std::make_shared<QueueInfo>(*MakeQueue("big", ""));
  big->guarantee = Cpu(8000);
  auto fits = std::make_shared<QueueInfo>(*MakeQueue("fits", ""));
  fits->guarantee = Cpu(2000);
  Queues queues = {{"big", big}, {"fits", fits}};
  std::vector<QueueWarning> warnings = QueueWarningsFor(queues, Cpu(4000).SetPods(110));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].name == "big");
  CHECK(warnings[0].reason == "GuaranteeNotHonoured");
  CHECK(warnings[0].message.rfind("guarantee ", 0) == 0);
  CHECK(QueueWarningsFor(queues, api::Resources().SetPods(110)).empty());
}

}  // namespace
}  // namespace tephra::scheduler

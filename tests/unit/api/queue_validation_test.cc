// Queue and PodGroup admission rules (docs/compatibility.md §3.4, §3.5), each with the exact
// errors expected.
#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "api/labels.h"
#include "api/validation.h"
#include "tests/unit/api/testing.h"

namespace tephra::api {
namespace {

ResourceList RL(const char* text) {
  return Resources::FromString(text)->ToList();
}

struct QueueBuilder {
  std::shared_ptr<Queue> q = std::make_shared<Queue>();
  explicit QueueBuilder(const std::string& name) {
    q->metadata.name = name;
    q->status.state = "Open";
  }
  QueueBuilder& Parent(const std::string& p) {
    q->spec.parent = p;
    return *this;
  }
  QueueBuilder& Capability(const char* r) {
    q->spec.capability = RL(r);
    return *this;
  }
  QueueBuilder& Deserved(const char* r) {
    q->spec.deserved = RL(r);
    return *this;
  }
  QueueBuilder& Guarantee(const char* r) {
    q->spec.guarantee = RL(r);
    return *this;
  }
  QueueBuilder& Allocated(const char* r) {
    q->status.allocated = RL(r);
    return *this;
  }
  std::shared_ptr<const Queue> Build() const { return q; }
  Queue Copy() const { return *q; }
};

// root
//  ├─ default
//  ├─ eng        capability cpu 100, deserved cpu 60, guarantee cpu 20
//  │   ├─ ml     capability cpu 80,  deserved cpu 40, guarantee cpu 10
//  │   │   └─ ml-a capability cpu 50
//  │   └─ web    deserved cpu 10, guarantee cpu 5
//  └─ busy       allocated cpu 3 (a leaf with pods)
StaticQueueLookup Tree() {
  return StaticQueueLookup({
      QueueBuilder("root").Build(),
      QueueBuilder("default").Build(),
      QueueBuilder("eng").Capability("cpu=100").Deserved("cpu=60").Guarantee("cpu=20").Build(),
      QueueBuilder("ml")
          .Parent("eng")
          .Capability("cpu=80")
          .Deserved("cpu=40")
          .Guarantee("cpu=10")
          .Build(),
      QueueBuilder("ml-a").Parent("ml").Capability("cpu=50").Build(),
      QueueBuilder("web").Parent("eng").Deserved("cpu=10").Guarantee("cpu=5").Build(),
      QueueBuilder("busy").Allocated("cpu=3").Build(),
  });
}

struct Case {
  const char* rule;
  std::function<Queue()> make;
  FieldErrors expected;
};

TEST_CASE("Queue CREATE rules") {
  StaticQueueLookup tree = Tree();
  const Case cases[] = {
      {"a plain queue is valid", [] { return QueueBuilder("new").Copy(); }, {}},
      {"capability >= deserved >= guarantee is valid",
       [] {
         return QueueBuilder("new")
             .Capability("cpu=8,memory=8Gi")
             .Deserved("cpu=4")
             .Guarantee("cpu=2")
             .Copy();
       },
       {}},
      {"deserved <= capability",
       [] { return QueueBuilder("new").Capability("cpu=4").Deserved("cpu=8").Copy(); },
       {{"spec.deserved.cpu", "must be less than or equal to capability (4)"}}},
      {"guarantee resources also appear in deserved",
       [] { return QueueBuilder("new").Deserved("cpu=4").Guarantee("memory=1Gi").Copy(); },
       {{"spec.guarantee.resource.memory", "must also be set in spec.deserved"}}},
      {"guarantee <= deserved",
       [] { return QueueBuilder("new").Deserved("cpu=4").Guarantee("cpu=5").Copy(); },
       {{"spec.guarantee.resource.cpu", "must be less than or equal to deserved (4)"}}},
      {"guarantee without deserved is refused, as Volcano does, and stays <= capability",
       [] { return QueueBuilder("new").Capability("cpu=1").Guarantee("cpu=2").Copy(); },
       {{"spec.guarantee.resource.cpu", "must also be set in spec.deserved"},
        {"spec.guarantee.resource.cpu", "must be less than or equal to capability (1)"}}},
      {"extended resources and pods are whole numbers; native ones need not be",
       [] {
         auto q = [](const char* text) { return *Quantity::Parse(text); };
         Queue queue = QueueBuilder("new").Copy();
         queue.spec.capability = {{"cpu", q("500m")},
                                  {"example.com/gpu", q("1500m")},
                                  {"hugepages-2Mi", q("1500m")},
                                  {"pods", q("2500m")}};
         queue.spec.deserved = {{"example.com/gpu", q("500m")},
                                {"requests.example.com/x", q("500m")}};
         queue.spec.guarantee = ResourceList{{"example.com/gpu", q("500m")}};
         return queue;
       },
       {{"spec.capability.example.com/gpu", "must be a whole number, not 1500m"},
        {"spec.capability.pods", "must be a whole number, not 2500m"},
        {"spec.deserved.example.com/gpu", "must be a whole number, not 500m"},
        {"spec.guarantee.resource.example.com/gpu", "must be a whole number, not 500m"}}},
      {"quantities are non-negative",
       [] {
         Queue q = QueueBuilder("new").Copy();
         q.spec.capability.Set("cpu", *Quantity::Parse("-1"));
         return q;
       },
       {{"spec.capability.cpu", "must be a non-negative quantity, not -1"}}},
      {"quantities fit in int64 accounting",
       [] {
         Queue q = QueueBuilder("new").Copy();
         q.spec.capability.Set("cpu", *Quantity::Parse("9223372036854775808m"));
         q.spec.capability.Set("memory", *Quantity::Parse("9223372036854775807"));
         q.spec.deserved.Set("cpu", *Quantity::Parse("9223372036854775807m"));
         q.spec.deserved.Set("pods", *Quantity::Parse("1e19"));
         return q;
       },
       {{"spec.capability.cpu",
         "must be at most 9223372036854775807m (Kubernetes counts cpu in int64 milli-units), not "
         "9223372036854775808m"},
        {"spec.deserved.pods",
         "must be at most 9223372036854775807 (Kubernetes counts pods in int64 units), not "
         "10e18"}}},
      {"status.state is Open or Closed",
       [] {
         Queue q = QueueBuilder("new").Copy();
         q.status.state = "Closing";
         return q;
       },
       {{"status.state", "must be Open or Closed, not \"Closing\""}}},
      {"hierarchy annotations have matching lengths and positive weights",
       [] {
         Queue q = QueueBuilder("new").Copy();
         q.metadata.annotations[std::string(kQueueHierarchyAnnotation)] = "root/x/new";
         q.metadata.annotations[std::string(kQueueHierarchyWeightsAnnotation)] = "1/0";
         return q;
       },
       {{"metadata.annotations[volcano.sh/hierarchy-weights]",
         "must have as many weights (2) as the hierarchy has levels (3)"},
        {"metadata.annotations[volcano.sh/hierarchy-weights]",
         "weight \"0\" must be a number greater than 0"}}},
      {"a hierarchy may not be the parent of another queue's",
       [] {
         Queue q = QueueBuilder("new").Copy();
         q.metadata.annotations[std::string(kQueueHierarchyAnnotation)] = "root/eng";
         q.metadata.annotations[std::string(kQueueHierarchyWeightsAnnotation)] = "1/2";
         return q;
       },
       {{"metadata.annotations[volcano.sh/hierarchy]",
         "hierarchy \"root/eng\" is a parent of queue \"legacy\"'s hierarchy \"root/eng/x\"; a "
         "queue may not be an inner node of the legacy hierarchy"}}},
      {"parent is not the queue itself",
       [] { return QueueBuilder("new").Parent("new").Copy(); },
       {{"spec.parent", "a queue cannot be its own parent"}}},
      {"parent exists",
       [] { return QueueBuilder("new").Parent("ghost").Copy(); },
       {{"spec.parent", "parent queue \"ghost\" does not exist"}}},
      {"depth within the maximum",
       [] { return QueueBuilder("new").Parent("ml-a").Copy(); },
       {{"spec.parent", "the queue would be 4 levels below root; at most 3 are allowed"}}},
      {"a leaf with pods cannot become a parent",
       [] { return QueueBuilder("new").Parent("busy").Copy(); },
       {{"spec.parent",
         "queue \"busy\" already has allocated pods; a leaf queue with pods cannot become a "
         "parent queue"}}},
      {"capability <= nearest ancestor's",
       [] { return QueueBuilder("new").Parent("ml").Capability("cpu=90,memory=1Gi").Copy(); },
       {{"spec.capability.cpu",
         "must be less than or equal to the capability of ancestor queue \"ml\" (80)"}}},
      {"an ancestor further up limits resources the parent does not",
       [] { return QueueBuilder("new").Parent("web").Capability("cpu=120").Copy(); },
       {{"spec.capability.cpu",
         "must be less than or equal to the capability of ancestor queue \"eng\" (100)"}}},
      {"siblings' guarantees fit the parent's",
       [] {
         return QueueBuilder("new").Parent("eng").Deserved("cpu=10").Guarantee("cpu=6").Copy();
       },
       {{"spec.guarantee.resource.cpu",
         "the guarantee of queue \"eng\"'s children would add up to 21, more than its own "
         "guarantee (20)"}}},
      {"siblings' deserved fits the parent's",
       [] { return QueueBuilder("new").Parent("eng").Deserved("cpu=11").Copy(); },
       {{"spec.deserved.cpu",
         "the deserved of queue \"eng\"'s children would add up to 61, more than its own "
         "deserved (60)"}}},
  };
  QueueValidationOptions options;
  options.max_queue_depth = 3;
  StaticQueueLookup with_legacy = tree;
  auto legacy = std::make_shared<Queue>();
  legacy->metadata.name = "legacy";
  legacy->metadata.annotations[std::string(kQueueHierarchyAnnotation)] = "root/eng/x";
  with_legacy.Put(legacy);
  for (const Case& c : cases) {
    INFO("rule: " << c.rule);
    CHECK(ValidateQueueCreate(c.make(), with_legacy, options) == c.expected);
  }
}

TEST_CASE("Queue UPDATE rules") {
  StaticQueueLookup tree = Tree();
  QueueValidationOptions options;

  // A descendant's capability bounds its ancestors' capability from below.
  Queue eng = *tree.Get("eng");
  Queue smaller = eng;
  smaller.spec.capability = RL("cpu=70");
  CHECK(ValidateQueueUpdate(eng, smaller, tree, options) ==
        FieldErrors{{"spec.capability.cpu",
                     "must be greater than or equal to the capability of descendant queue \"ml\" "
                     "(80)"}});

  // Raising a child's guarantee re-checks the siblings' sum, counting the new value once.
  Queue web = *tree.Get("web");
  Queue more = web;
  more.spec.guarantee = RL("cpu=11");
  more.spec.deserved = RL("cpu=11");
  CHECK(ValidateQueueUpdate(web, more, tree, options) ==
        FieldErrors{{"spec.guarantee.resource.cpu",
                     "the guarantee of queue \"eng\"'s children would add up to 21, more than its "
                     "own guarantee (20)"}});
  Queue fits = web;
  fits.spec.guarantee = RL("cpu=10");
  CHECK(ValidateQueueUpdate(web, fits, tree, options) == FieldErrors{});

  // Unrelated updates do not re-run the hierarchy checks.
  Queue weight = web;
  weight.spec.weight = 7;
  CHECK(ValidateQueueUpdate(web, weight, tree, options) == FieldErrors{});

  // Moving a queue re-checks its new parent.
  Queue moved = web;
  moved.spec.parent = "busy";
  CHECK(ValidateQueueUpdate(web, moved, tree, options) ==
        FieldErrors{{"spec.parent",
                     "queue \"busy\" already has allocated pods; a leaf queue with pods cannot "
                     "become a parent queue"}});

  // Root protection.
  Queue root = *tree.Get("root");
  Queue root_changed = root;
  root_changed.spec.capability = RL("cpu=1");
  root_changed.spec.deserved = RL("cpu=1");
  root_changed.spec.guarantee = RL("cpu=1");
  CHECK(ValidateQueueUpdate(root, root_changed, tree, options) ==
        FieldErrors{{"spec.capability", "the root queue's capability may not be changed"},
                    {"spec.deserved", "the root queue's deserved may not be changed"},
                    {"spec.guarantee", "the root queue's guarantee may not be changed"}});
  options.enable_root_queue_protection = false;
  CHECK(ValidateQueueUpdate(root, root_changed, tree, options) == FieldErrors{});
}

TEST_CASE("Queue DELETE rules") {
  StaticQueueLookup tree = Tree();
  QueueValidationOptions options;
  CHECK(ValidateQueueDelete(*tree.Get("root"), tree, options) ==
        FieldErrors{{"metadata.name", "queue \"root\" cannot be deleted"}});
  CHECK(ValidateQueueDelete(*tree.Get("default"), tree, options) ==
        FieldErrors{{"metadata.name", "queue \"default\" cannot be deleted"}});
  CHECK(ValidateQueueDelete(*tree.Get("eng"), tree, options) ==
        FieldErrors{{"metadata.name", "queue \"eng\" has child queues and cannot be deleted"}});
  CHECK(ValidateQueueDelete(*tree.Get("busy"), tree, options) == FieldErrors{});
  options.enable_queue_allocated_pods_check = true;
  CHECK(ValidateQueueDelete(*tree.Get("busy"), tree, options) ==
        FieldErrors{{"metadata.name", "queue \"busy\" has allocated pods and cannot be deleted"}});
  CHECK(ValidateQueueDelete(*tree.Get("web"), tree, options) == FieldErrors{});
}

TEST_CASE("StaticQueueLookup finds children through the implied root parent") {
  StaticQueueLookup tree = Tree();
  std::vector<std::string> names;
  for (const auto& q : tree.Children("root")) names.push_back(q->metadata.name);
  CHECK(names == std::vector<std::string>{"busy", "default", "eng"});
  CHECK(tree.Children("ml").size() == 1);
  CHECK(tree.Get("nope") == nullptr);
  CHECK(tree.List().size() == 7);
}

TEST_CASE("PodGroup CREATE rules") {
  StaticQueueLookup queues({QueueBuilder("open").Build(), [] {
                              auto q = std::make_shared<Queue>();
                              q->metadata.name = "closed";
                              q->status.state = "Closed";
                              return std::shared_ptr<const Queue>(q);
                            }()});
  PodGroup pg;
  pg.metadata.name = "pg";
  pg.spec.queue = "open";
  CHECK(ValidatePodGroupCreate(pg, &queues) == FieldErrors{});
  pg.spec.queue = "missing";
  CHECK(ValidatePodGroupCreate(pg, &queues) ==
        FieldErrors{{"spec.queue", "queue \"missing\" does not exist"}});
  CHECK(ValidatePodGroupCreate(pg, nullptr) == FieldErrors{});
  pg.spec.queue = "closed";
  CHECK(ValidatePodGroupCreate(pg, &queues) ==
        FieldErrors{{"spec.queue",
                     "can only submit PodGroup to queue with state Open; queue \"closed\" is "
                     "\"Closed\""}});
  pg.spec.queue.clear();
  // Negative gang demands: Volcano's schema refuses minMember < 0; Tephra refuses all three.
  PodGroup negative = pg;
  negative.spec.min_member = -1;
  negative.spec.min_task_member = {{"ps", 1}, {"worker", -2}};
  negative.spec.min_resources =
      ResourceList{{"cpu", *Quantity::Parse("-1")}, {"memory", *Quantity::Parse("1Gi")}};
  CHECK(ValidatePodGroupCreate(negative, &queues) ==
        FieldErrors{{"spec.minMember", "must be greater than or equal to 0"},
                    {"spec.minTaskMember.worker", "must be greater than or equal to 0"},
                    {"spec.minResources.cpu", "must be a non-negative quantity, not -1"}});
  pg.spec.network_topology = NetworkTopologySpec{"soft", 2, "spine"};
  pg.spec.sub_group_policy.push_back(
      SubGroupPolicy{"w", NetworkTopologySpec{"hard", 1, "leaf"}, 2, 1, std::nullopt, {}});
  CHECK(
      ValidatePodGroupCreate(pg, &queues) ==
      FieldErrors{{"spec.networkTopology",
                   "highestTierAllowed and highestTierName are mutually exclusive; set only one"},
                  {"spec.subGroupPolicy[0].networkTopology",
                   "highestTierAllowed and highestTierName are mutually exclusive; set only one"}});
}

}  // namespace
}  // namespace tephra::api

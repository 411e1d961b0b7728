// Queue and PodGroup admission rules (docs/compatibility.md §3.4, §3.5).
#include <cstdlib>
#include <set>

#include "api/labels.h"
#include "api/validation.h"
#include "api/validation_internal.h"

namespace tephra::api {
namespace {

using validation::Field;
using validation::Index;

constexpr std::string_view kCapabilityPath = "spec.capability";
constexpr std::string_view kDeservedPath = "spec.deserved";
constexpr std::string_view kGuaranteePath = "spec.guarantee.resource";

std::string AnnotationPath(std::string_view key) {
  return "metadata.annotations[" + std::string(key) + "]";
}

const ResourceList& GuaranteeOf(const Queue& q) {
  static const ResourceList kNone;
  return q.spec.guarantee ? *q.spec.guarantee : kNone;
}

// capability >= deserved >= guarantee inside one queue (every guaranteed resource deserved
// too), all non-negative, counted resources whole.
void ValidateOwnResources(const Queue& q, FieldErrors* errors) {
  const ResourceList& capability = q.spec.capability;
  const ResourceList& deserved = q.spec.deserved;
  const ResourceList& guarantee = GuaranteeOf(q);
  for (const auto& [list, path] :
       {std::pair{&capability, kCapabilityPath}, std::pair{&deserved, kDeservedPath},
        std::pair{&guarantee, kGuaranteePath}}) {
    validation::ValidateQuantities(*list, std::string(path), errors);
    validation::ValidateCountedQuantities(*list, std::string(path), errors);
  }
  for (const auto& [name, d] : deserved) {
    const Quantity* cap = capability.Find(name);
    if (cap != nullptr && d > *cap) {
      errors->push_back({Field(kDeservedPath, name),
                         "must be less than or equal to capability (" + cap->String() + ")"});
    }
  }
  for (const auto& [name, g] : guarantee) {
    // As in Volcano, a guarantee needs a deserved share at least as large, even in a queue
    // with no deserved at all.
    const Quantity* d = deserved.Find(name);
    if (d == nullptr) {
      errors->push_back({Field(kGuaranteePath, name), "must also be set in spec.deserved"});
    } else if (g > *d) {
      errors->push_back({Field(kGuaranteePath, name),
                         "must be less than or equal to deserved (" + d->String() + ")"});
    }
    const Quantity* cap = capability.Find(name);
    if (cap != nullptr && g > *cap) {
      errors->push_back({Field(kGuaranteePath, name),
                         "must be less than or equal to capability (" + cap->String() + ")"});
    }
  }
}

void ValidateState(const Queue& q, FieldErrors* errors) {
  const std::string& state = q.status.state;
  if (!state.empty() && state != queue_state::kOpen && state != queue_state::kClosed) {
    errors->push_back({"status.state", "must be Open or Closed, not \"" + state + "\""});
  }
}

std::vector<std::string> SplitPath(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t slash = s.find('/', start);
    out.emplace_back(s.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

// The legacy hierarchy annotations ("root/a/b" with weights "1/2/3").
void ValidateHierarchyAnnotations(const Queue& q, const QueueLookup& queues, FieldErrors* errors) {
  const auto& ann = q.metadata.annotations;
  auto path_it = ann.find(std::string(kQueueHierarchyAnnotation));
  auto weights_it = ann.find(std::string(kQueueHierarchyWeightsAnnotation));
  if (path_it == ann.end() && weights_it == ann.end()) return;
  std::string hierarchy = path_it == ann.end() ? std::string() : path_it->second;
  std::string weights = weights_it == ann.end() ? std::string() : weights_it->second;
  std::vector<std::string> parts =
      hierarchy.empty() ? std::vector<std::string>{} : SplitPath(hierarchy);
  std::vector<std::string> ws = weights.empty() ? std::vector<std::string>{} : SplitPath(weights);
  std::string weights_path = AnnotationPath(kQueueHierarchyWeightsAnnotation);
  if (parts.size() != ws.size()) {
    errors->push_back({weights_path, "must have as many weights (" + std::to_string(ws.size()) +
                                         ") as the hierarchy has levels (" +
                                         std::to_string(parts.size()) + ")"});
  }
  for (const std::string& w : ws) {
    char* end = nullptr;
    double value = std::strtod(w.c_str(), &end);
    if (w.empty() || end != w.c_str() + w.size() || !(value > 0)) {
      errors->push_back({weights_path, "weight \"" + w + "\" must be a number greater than 0"});
    }
  }
  if (hierarchy.empty()) return;
  for (const auto& other : queues.List()) {
    if (other->metadata.name == q.metadata.name) continue;
    std::string other_path = other->metadata.Annotation(kQueueHierarchyAnnotation);
    if (other_path.size() > hierarchy.size() && other_path.rfind(hierarchy + "/", 0) == 0) {
      errors->push_back({AnnotationPath(kQueueHierarchyAnnotation),
                         "hierarchy \"" + hierarchy + "\" is a parent of queue \"" +
                             other->metadata.name + "\"'s hierarchy \"" + other_path +
                             "\"; a queue may not be an inner node of the legacy hierarchy"});
    }
  }
}

// Parent exists, is not the queue itself, no cycle, depth within bounds, and a leaf with pods
// does not become a parent.
void ValidateParent(const Queue& q, const QueueLookup& queues,
                    const QueueValidationOptions& options, FieldErrors* errors) {
  const std::string& name = q.metadata.name;
  if (name == kRootQueue) {
    if (!q.spec.parent.empty()) errors->push_back({"spec.parent", "the root queue has no parent"});
    return;
  }
  std::string parent = q.ParentName();
  if (parent == name) {
    errors->push_back({"spec.parent", "a queue cannot be its own parent"});
    return;
  }
  std::shared_ptr<const Queue> parent_queue = queues.Get(parent);
  if (parent_queue == nullptr && parent != kRootQueue) {
    errors->push_back({"spec.parent", "parent queue \"" + parent + "\" does not exist"});
    return;
  }
  int depth = 1;  // levels below root
  std::set<std::string> seen{name};
  for (std::string cur = parent; !cur.empty() && cur != kRootQueue;) {
    if (!seen.insert(cur).second) {
      errors->push_back({"spec.parent", "the parent chain through \"" + cur + "\" forms a cycle"});
      return;
    }
    ++depth;
    std::shared_ptr<const Queue> ancestor = queues.Get(cur);
    if (ancestor == nullptr) break;
    cur = ancestor->ParentName();
  }
  if (depth > options.max_queue_depth) {
    errors->push_back({"spec.parent", "the queue would be " + std::to_string(depth) +
                                          " levels below root; at most " +
                                          std::to_string(options.max_queue_depth) +
                                          " are allowed"});
  }
  if (parent_queue != nullptr && parent != kRootQueue) {
    bool leaf = true;
    for (const auto& child : queues.Children(parent)) leaf = leaf && child->metadata.name == name;
    if (leaf && queues.HasAllocatedPods(*parent_queue)) {
      errors->push_back({"spec.parent", "queue \"" + parent +
                                            "\" already has allocated pods; a leaf queue with "
                                            "pods cannot become a parent queue"});
    }
  }
}

std::string QuantityText(const Resources& r, const std::string& name) {
  ResourceList list = r.ToList();
  const Quantity* q = list.Find(name);
  return q == nullptr ? "0" : q->String();
}

// Within the hierarchy: capability <= nearest ancestor's, siblings' guarantee and deserved sums
// <= the parent's, and capability >= every descendant's.
void ValidateHierarchicalResources(const Queue& q, const QueueLookup& queues, FieldErrors* errors) {
  const std::string& name = q.metadata.name;
  if (name == kRootQueue) return;
  for (const auto& [resource, cap] : q.spec.capability) {
    std::set<std::string> seen{name};
    for (std::string cur = q.ParentName(); !cur.empty() && seen.insert(cur).second;) {
      std::shared_ptr<const Queue> ancestor = queues.Get(cur);
      if (ancestor == nullptr) break;
      if (const Quantity* limit = ancestor->spec.capability.Find(resource)) {
        if (cap > *limit) {
          errors->push_back({Field(kCapabilityPath, resource),
                             "must be less than or equal to the capability of ancestor queue \"" +
                                 cur + "\" (" + limit->String() + ")"});
        }
        break;
      }
      cur = ancestor->ParentName();
    }
  }

  std::string parent_name = q.ParentName();
  if (std::shared_ptr<const Queue> parent = queues.Get(parent_name)) {
    // Only resources the parent limits are summed: Resources interns every name it sees for
    // good, and the request's own names must not grow that table.
    auto limited = [](const ResourceList& list, const ResourceList& limit) {
      ResourceList out;
      for (const auto& [resource, quantity] : list) {
        if (limit.Contains(resource)) out.Set(resource, quantity);
      }
      return Resources::FromList(out);
    };
    const ResourceList& parent_guarantee = GuaranteeOf(*parent);
    Resources guarantees = limited(GuaranteeOf(q), parent_guarantee);
    Resources deserved = limited(q.spec.deserved, parent->spec.deserved);
    for (const auto& sibling : queues.Children(parent_name)) {
      if (sibling->metadata.name == name) continue;  // the stored version of this queue
      guarantees.Add(limited(GuaranteeOf(*sibling), parent_guarantee));
      deserved.Add(limited(sibling->spec.deserved, parent->spec.deserved));
    }
    auto check_sum = [&](const Resources& sum, const ResourceList& limit, std::string_view path,
                         std::string_view what) {
      if (limit.empty()) return;
      Resources limit_values = Resources::FromList(limit);
      for (const std::string& resource :
           sum.Exceeding(limit_values, Resources::Missing::kUnlimited)) {
        errors->push_back({Field(path, resource),
                           "the " + std::string(what) + " of queue \"" + parent_name +
                               "\"'s children would add up to " + QuantityText(sum, resource) +
                               ", more than its own " + std::string(what) + " (" +
                               QuantityText(limit_values, resource) + ")"});
      }
    };
    check_sum(guarantees, parent_guarantee, kGuaranteePath, "guarantee");
    check_sum(deserved, parent->spec.deserved, kDeservedPath, "deserved");
  }

  if (q.spec.capability.empty()) return;
  std::vector<std::string> frontier{name};
  std::set<std::string> seen{name};
  while (!frontier.empty()) {
    std::string cur = frontier.back();
    frontier.pop_back();
    for (const auto& child : queues.Children(cur)) {
      if (!seen.insert(child->metadata.name).second) continue;
      frontier.push_back(child->metadata.name);
      for (const auto& [resource, cap] : child->spec.capability) {
        const Quantity* own = q.spec.capability.Find(resource);
        if (own != nullptr && cap > *own) {
          errors->push_back({Field(kCapabilityPath, resource),
                             "must be greater than or equal to the capability of descendant "
                             "queue \"" +
                                 child->metadata.name + "\" (" + cap.String() + ")"});
        }
      }
    }
  }
}

void ValidateCommon(const Queue& q, const QueueLookup& queues, FieldErrors* errors) {
  ValidateOwnResources(q, errors);
  ValidateState(q, errors);
  ValidateHierarchyAnnotations(q, queues, errors);
}

bool ResourcesChanged(const Queue& a, const Queue& b) {
  return a.spec.capability != b.spec.capability || a.spec.deserved != b.spec.deserved ||
         a.spec.guarantee != b.spec.guarantee;
}

}  // namespace

FieldErrors ValidateQueueCreate(const Queue& queue, const QueueLookup& queues,
                                const QueueValidationOptions& options) {
  FieldErrors errors;
  ValidateCommon(queue, queues, &errors);
  ValidateParent(queue, queues, options, &errors);
  ValidateHierarchicalResources(queue, queues, &errors);
  return errors;
}

FieldErrors ValidateQueueUpdate(const Queue& old_queue, const Queue& new_queue,
                                const QueueLookup& queues, const QueueValidationOptions& options) {
  FieldErrors errors;
  ValidateCommon(new_queue, queues, &errors);
  bool parent_changed = old_queue.ParentName() != new_queue.ParentName();
  if (parent_changed) ValidateParent(new_queue, queues, options, &errors);
  if (new_queue.metadata.name == kRootQueue && options.enable_root_queue_protection) {
    auto fixed = [&](bool same, std::string_view path, std::string_view what) {
      if (!same) {
        errors.push_back(
            {std::string(path), "the root queue's " + std::string(what) + " may not be changed"});
      }
    };
    fixed(old_queue.spec.capability == new_queue.spec.capability, kCapabilityPath, "capability");
    fixed(old_queue.spec.deserved == new_queue.spec.deserved, kDeservedPath, "deserved");
    fixed(old_queue.spec.guarantee == new_queue.spec.guarantee, "spec.guarantee", "guarantee");
  }
  if (parent_changed || ResourcesChanged(old_queue, new_queue)) {
    ValidateHierarchicalResources(new_queue, queues, &errors);
  }
  return errors;
}

FieldErrors ValidateQueueDelete(const Queue& queue, const QueueLookup& queues,
                                const QueueValidationOptions& options) {
  FieldErrors errors;
  const std::string& name = queue.metadata.name;
  if (name == kRootQueue || name == kDefaultQueue) {
    errors.push_back({"metadata.name", "queue \"" + name + "\" cannot be deleted"});
    return errors;
  }
  if (!queues.Children(name).empty()) {
    errors.push_back(
        {"metadata.name", "queue \"" + name + "\" has child queues and cannot be deleted"});
  }
  if (options.enable_queue_allocated_pods_check && queues.HasAllocatedPods(queue)) {
    errors.push_back(
        {"metadata.name", "queue \"" + name + "\" has allocated pods and cannot be deleted"});
  }
  return errors;
}

FieldErrors ValidatePodGroupCreate(const PodGroup& pg, const QueueLookup* queues) {
  FieldErrors errors;
  // Volcano's CRD schema refuses a negative minMember; Tephra also refuses negative task
  // minimums and minResources, which would make the gang's demand negative (docs/admission.md).
  if (pg.spec.min_member < 0) {
    errors.push_back({"spec.minMember", "must be greater than or equal to 0"});
  }
  for (const auto& [task, n] : pg.spec.min_task_member) {
    if (n < 0)
      errors.push_back({Field("spec.minTaskMember", task), "must be greater than or equal to 0"});
  }
  if (pg.spec.min_resources) {
    validation::ValidateQuantities(*pg.spec.min_resources, "spec.minResources", &errors);
  }
  if (queues != nullptr && !pg.spec.queue.empty()) {
    std::shared_ptr<const Queue> queue = queues->Get(pg.spec.queue);
    if (queue == nullptr) {
      errors.push_back({"spec.queue", "queue \"" + pg.spec.queue + "\" does not exist"});
    } else if (queue->status.state != queue_state::kOpen) {
      errors.push_back(
          {"spec.queue", "can only submit PodGroup to queue with state Open; queue \"" +
                             pg.spec.queue + "\" is \"" + queue->status.state + "\""});
    }
  }
  validation::ValidateNetworkTopology(pg.spec.network_topology, "spec.networkTopology", &errors);
  for (size_t i = 0; i < pg.spec.sub_group_policy.size(); ++i) {
    validation::ValidateNetworkTopology(pg.spec.sub_group_policy[i].network_topology,
                                        Field(Index("spec.subGroupPolicy", i), "networkTopology"),
                                        &errors);
  }
  return errors;
}

}  // namespace tephra::api

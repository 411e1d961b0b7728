// Test helper: the fields in which two decoded PodInfos differ, by name, so a failing check says
// which field a decoder got wrong. Both must come from the same SpecInterner (equal scheduling
// specs are then the same object).
#pragma once

#include <string>
#include <vector>

#include "scheduler/model/pod_info.h"

namespace tephra::testing {

inline std::vector<std::string> PodInfoDifferences(const scheduler::PodInfo& a,
                                                   const scheduler::PodInfo& b) {
  std::vector<std::string> out;
  auto check = [&](bool same, const char* field) {
    if (!same) out.emplace_back(field);
  };
  check(a.api_version == b.api_version, "apiVersion");
  check(a.kind == b.kind, "kind");
  check(a.metadata == b.metadata, "metadata");
  check(a.spec == b.spec, "spec");
  check(a.node_name == b.node_name, "node_name");
  check(a.phase == b.phase, "phase");
  check(a.terminating == b.terminating, "terminating");
  check(a.group_name == b.group_name, "group_name");
  check(a.sched_plugins_group == b.sched_plugins_group, "sched_plugins_group");
  check(a.implicit_group == b.implicit_group, "implicit_group");
  check((a.implicit_pod_group == nullptr) == (b.implicit_pod_group == nullptr),
        "implicit_pod_group");
  if (a.implicit_pod_group && b.implicit_pod_group) {
    check(a.implicit_pod_group->metadata == b.implicit_pod_group->metadata,
          "implicit_pod_group.metadata");
    check(a.implicit_pod_group->spec.min_member == b.implicit_pod_group->spec.min_member,
          "implicit_pod_group.spec.minMember");
    check(a.implicit_pod_group->spec.min_resources == b.implicit_pod_group->spec.min_resources,
          "implicit_pod_group.spec.minResources");
  }
  check(a.task_role == b.task_role, "task_role");
  check(a.task_priority == b.task_priority, "task_priority");
  check(a.preemptable == b.preemptable, "preemptable");
  check(a.nominated_node == b.nominated_node, "nominated_node");
  check(a.scheduled == nullptr ? b.scheduled == nullptr
                               : b.scheduled != nullptr && *a.scheduled == *b.scheduled,
        "scheduled");
  check(a.restarts == b.restarts, "restarts");
  return out;
}

}  // namespace tephra::testing

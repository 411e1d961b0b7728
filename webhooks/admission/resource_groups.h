// Resource groups for /pods/mutate (docs/compatibility.md §3.6): the admission
// configuration file (--admission-conf, Volcano's volcano-admission.conf format) lists groups;
// the first group matching a new pod (by namespace, or by annotation) gives it nodeSelector
// labels, an affinity (only when it has none), tolerations and a scheduler name.
//
//   resourceGroups:
//   - resourceGroup: management
//     object: {key: namespace, value: [mng-ns-1]}
//     schedulerName: default-scheduler
//     tolerations: [{key: taint, operator: Exists, effect: NoSchedule}]
//     labels: {volcano.sh/nodetype: management}
//   - resourceGroup: gpu        # no object: matches annotation volcano.sh/resource-group: gpu
//     labels: {volcano.sh/nodetype: gpu}
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json_patch.h"
#include "base/status.h"
#include "json/json.h"
#include "sync/mutex.h"

namespace tephra::webhooks {

struct ResourceGroup {
  enum class Match { kAnnotation, kNamespace };
  std::string name;
  Match match = Match::kAnnotation;
  std::vector<std::string> namespaces;                           // Match::kNamespace
  std::vector<std::pair<std::string, std::string>> annotations;  // Match::kAnnotation: key, value
  std::string scheduler_name;
  std::map<std::string, std::string> node_selector;  // "labels"
  std::string tolerations_json;                      // JSON array, empty when none
  std::string affinity_json;                         // JSON object, empty when none
};

struct ResourceGroups {
  std::vector<ResourceGroup> groups;
};

// Parses the YAML configuration; errors name the group and field
// ("resourceGroups[1].object.key: must be namespace or annotation").
StatusOr<ResourceGroups> ParseResourceGroups(std::string_view yaml);

// The first group that matches a pod in `namespace_` with `annotations`, or null.
const ResourceGroup* MatchResourceGroup(const ResourceGroups& groups, std::string_view namespace_,
                                        const std::map<std::string, std::string>& annotations);

// The JSON Patch applying `group` to `pod` (the pod object being created).
api::JsonPatch ResourceGroupPatch(const ResourceGroup& group, const json::Reader& pod);

// Where the pod mutator gets the current groups from. Thread-safe.
class ResourceGroupSource {
 public:
  virtual ~ResourceGroupSource() = default;
  virtual std::shared_ptr<const ResourceGroups> Current() const = 0;
};

class StaticResourceGroups : public ResourceGroupSource {
 public:
  explicit StaticResourceGroups(ResourceGroups groups)
      : groups_(std::make_shared<const ResourceGroups>(std::move(groups))) {}
  std::shared_ptr<const ResourceGroups> Current() const override { return groups_; }

 private:
  std::shared_ptr<const ResourceGroups> groups_;
};

// The configuration file, re-read when it changes (a ConfigMap volume swaps a symlink, which
// changes the inode). A file that fails to parse keeps the previous groups in force.
class ResourceGroupFile : public ResourceGroupSource {
 public:
  // Reads the file once; an unreadable or invalid file at start-up is an error.
  static StatusOr<std::shared_ptr<ResourceGroupFile>> Open(std::string path);

  std::shared_ptr<const ResourceGroups> Current() const override;
  // Re-reads the file if its inode, size or modification time changed. Returns whether new
  // groups took effect; a read or parse error is returned and the old groups stay.
  StatusOr<bool> ReloadIfChanged();

 private:
  explicit ResourceGroupFile(std::string path) : path_(std::move(path)) {}

  const std::string path_;
  mutable sync::Mutex mu_;
  std::shared_ptr<const ResourceGroups> groups_ GUARDED_BY(mu_);
  std::string stamp_ GUARDED_BY(mu_);  // inode, size, mtime
};

}  // namespace tephra::webhooks

// A pod being built from a task template's raw JSON. Every field of the template survives;
// the job controller and the job plugins add what they own through the methods below, each of
// which is idempotent (adding what is already there changes nothing), so re-running a plugin
// never duplicates an env var, a volume or a port.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kube/meta/object.h"

namespace tephra::controllers::job {

class PodDraft {
 public:
  // The template is a PodTemplateSpec ({metadata, spec}); an empty text is {}.
  static StatusOr<PodDraft> FromTemplate(std::string_view template_json);
  PodDraft(PodDraft&&) noexcept;
  PodDraft& operator=(PodDraft&&) noexcept;
  ~PodDraft();

  // ---- metadata ----
  void SetNameAndNamespace(std::string_view name, std::string_view namespace_);
  std::string Name() const;
  void SetLabel(std::string_view key, std::string_view value);
  void SetAnnotation(std::string_view key, std::string_view value);
  std::string Label(std::string_view key) const;
  std::string Annotation(std::string_view key) const;
  void SetControllerReference(const kube::OwnerReference& owner);

  // ---- spec ----
  // spec.<key> as a string ("" when absent or not a string).
  std::string SpecString(std::string_view key) const;
  // Sets spec.<key> unless it already holds a non-empty string.
  void SetSpecStringIfEmpty(std::string_view key, std::string_view value);

  // Container names of spec.containers (init containers excluded).
  std::vector<std::string> ContainerNames() const;
  // Adds env {name, value} to every container (and init container when `init`) that has no
  // variable of that name.
  void AddEnv(std::string_view name, std::string_view value, bool init = true);
  // The same for one container, by index in spec.containers.
  void AddEnvTo(size_t container, std::string_view name, std::string_view value);
  // env {name, valueFrom.configMapKeyRef {name: config_map, key}}.
  void AddEnvFromConfigMap(std::string_view name, std::string_view config_map, std::string_view key,
                           bool init = true);
  // Adds a volume (JSON object with a "name") unless one of that name exists.
  void AddVolume(std::string_view volume_json);
  // Adds a volume mount (JSON object with "mountPath") to every container (and init container
  // when `init`) that mounts nothing at that path yet.
  void AddVolumeMount(std::string_view mount_json, bool init);
  // Opens a container port on every container unless it has a port of that name or number.
  void AddContainerPort(std::string_view name, int32_t port);
  // Appends an init container (JSON object) unless one of that name exists.
  void AddInitContainer(std::string_view container_json);

  // The pod: {"apiVersion":"v1","kind":"Pod","metadata":...,"spec":...}.
  std::string Json() const;

 private:
  struct Impl;
  explicit PodDraft(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tephra::controllers::job

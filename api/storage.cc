#include "api/storage.h"

#include <algorithm>

#include <rapidjson/document.h>

namespace tephra::api {
namespace {

bool Contains(const std::vector<std::string>& modes, std::string_view mode) {
  return std::find(modes.begin(), modes.end(), mode) != modes.end();
}

std::optional<Quantity> StorageQuantity(const json::Reader& list) {
  json::Reader storage = list["storage"];
  if (!storage.present()) return std::nullopt;
  return DecodeQuantity(storage);
}

std::optional<std::string> Annotation(const kube::ObjectMeta& meta, std::string_view key) {
  auto it = meta.annotations.find(std::string(key));
  if (it == meta.annotations.end()) return std::nullopt;
  return it->second;
}

// Writes `value` under annotation `key`, or removes it.
void SetAnnotation(kube::ObjectMeta& meta, std::string_view key,
                   const std::optional<std::string>& value) {
  if (value) {
    meta.annotations[std::string(key)] = *value;
  } else {
    meta.annotations.erase(std::string(key));
  }
}

void FillClaim(const json::Reader& r, PersistentVolumeClaim* claim) {
  json::Reader spec = r["spec"];
  claim->spec.access_modes = spec["accessModes"].StringList();
  if (spec["selector"].present()) {
    LabelSelector selector;
    DecodeLabelSelector(spec["selector"], &selector);
    claim->spec.selector = std::move(selector);
  }
  claim->spec.storage_request = StorageQuantity(spec["resources"]["requests"]);
  claim->spec.volume_name = spec["volumeName"].String();
  claim->spec.storage_class_name = spec["storageClassName"].OptString();
  claim->spec.volume_mode = spec["volumeMode"].OptString();
  claim->phase = r["status"]["phase"].String();
  const kube::ObjectMeta& meta = claim->metadata;
  claim->selected_node = Annotation(meta, storage::kSelectedNodeAnnotation).value_or("");
  claim->bind_completed = Annotation(meta, storage::kBindCompletedAnnotation).has_value();
  claim->class_annotation = Annotation(meta, storage::kBetaStorageClassAnnotation);
}

void FillVolume(const json::Reader& r, PersistentVolume* volume) {
  json::Reader spec = r["spec"];
  volume->spec.capacity = StorageQuantity(spec["capacity"]);
  volume->spec.access_modes = spec["accessModes"].StringList();
  if (json::Reader ref = spec["claimRef"]; ref.present()) {
    ClaimReference c;
    c.api_version = ref["apiVersion"].String();
    c.kind = ref["kind"].String();
    c.namespace_ = ref["namespace"].String();
    c.name = ref["name"].String();
    c.uid = ref["uid"].String();
    c.resource_version = ref["resourceVersion"].String();
    volume->spec.claim_ref = std::move(c);
  }
  volume->spec.storage_class_name = spec["storageClassName"].String();
  volume->spec.volume_mode = spec["volumeMode"].OptString();
  if (json::Reader terms = spec["nodeAffinity"]["required"]["nodeSelectorTerms"]; terms.present()) {
    std::vector<NodeSelectorTerm> out;
    out.reserve(terms.size());
    terms.ForEach([&](const json::Reader& t) { DecodeNodeSelectorTerm(t, &out.emplace_back()); });
    volume->spec.node_affinity = std::move(out);
  }
  if (json::Reader csi = spec["csi"]; csi.present()) {
    volume->spec.csi = CsiVolumeSource{csi["driver"].String(), csi["volumeHandle"].String()};
  }
  volume->phase = r["status"]["phase"].String();
  const kube::ObjectMeta& meta = volume->metadata;
  volume->bound_by_controller = Annotation(meta, storage::kBoundByControllerAnnotation).has_value();
  volume->class_annotation = Annotation(meta, storage::kBetaStorageClassAnnotation);
}

void FillStorageClass(const json::Reader& r, StorageClass* klass) {
  klass->provisioner = r["provisioner"].String();
  klass->volume_binding_mode = r["volumeBindingMode"].OptString();
  r["allowedTopologies"].ForEach([&](const json::Reader& t) {
    TopologySelectorTerm& term = klass->allowed_topologies.emplace_back();
    t["matchLabelExpressions"].ForEach([&](const json::Reader& e) {
      term.match_label_expressions.push_back({e["key"].String(), e["values"].StringList()});
    });
  });
}

void FillCSINode(const json::Reader& r, CSINode* node) {
  r["spec"]["drivers"].ForEach([&](const json::Reader& d) {
    CSINode::Driver& driver = node->drivers.emplace_back();
    driver.name = d["name"].String();
    driver.node_id = d["nodeID"].String();
    driver.allocatable_count = d["allocatable"]["count"].OptInt32();
  });
}

void FillCSIDriver(const json::Reader& r, CSIDriver* driver) {
  json::Reader spec = r["spec"];
  driver->attach_required = spec["attachRequired"].OptBool();
  driver->storage_capacity = spec["storageCapacity"].OptBool();
  driver->prevent_pod_scheduling_if_missing = spec["preventPodSchedulingIfMissing"].OptBool();
}

void SetStorage(JsonObject& o, std::string_view key, const std::optional<Quantity>& q) {
  ResourceList list;
  if (q) list.Set("storage", *q);
  o.SetQuantities(key, list);
}

}  // namespace

// ---- PersistentVolumeClaim ----

std::string PersistentVolumeClaim::StorageClass() const {
  if (class_annotation) return *class_annotation;
  return spec.storage_class_name.value_or("");
}

bool PersistentVolumeClaim::HasAccessMode(std::string_view mode) const {
  return Contains(spec.access_modes, mode);
}

int64_t PersistentVolumeClaim::RequestBytes() const {
  return spec.storage_request ? spec.storage_request->Value() : 0;
}

// ---- PersistentVolume ----

std::string PersistentVolume::StorageClass() const {
  if (class_annotation) return *class_annotation;
  return spec.storage_class_name;
}

bool PersistentVolume::HasAccessMode(std::string_view mode) const {
  return Contains(spec.access_modes, mode);
}

int64_t PersistentVolume::CapacityBytes() const {
  return spec.capacity ? spec.capacity->Value() : 0;
}

bool PersistentVolume::BoundTo(const PersistentVolumeClaim& claim) const {
  if (!spec.claim_ref) return false;
  const ClaimReference& ref = *spec.claim_ref;
  if (ref.name != claim.metadata.name || ref.namespace_ != claim.metadata.namespace_) return false;
  return ref.uid.empty() || ref.uid == claim.metadata.uid;
}

// ---- StorageClass ----

bool StorageClass::Provisions() const {
  return !provisioner.empty() && provisioner != storage::kNoProvisioner;
}

bool StorageClass::AdmitsNode(const std::map<std::string, std::string>& labels) const {
  if (allowed_topologies.empty()) return true;
  for (const TopologySelectorTerm& term : allowed_topologies) {
    bool all = true;
    for (const auto& e : term.match_label_expressions) {
      auto it = labels.find(e.key);
      if (it == labels.end() ||
          std::find(e.values.begin(), e.values.end(), it->second) == e.values.end()) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

// ---- CSINode ----

const CSINode::Driver* CSINode::FindDriver(std::string_view name) const {
  for (const Driver& d : drivers) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// ---- codecs ----

StatusOr<std::shared_ptr<PersistentVolumeClaim>> DecodePersistentVolumeClaim(
    const json::Value& value, const DecodeOptions& options) {
  return DecodeTypedObject<PersistentVolumeClaim>(value, options, "PersistentVolumeClaim",
                                                  FillClaim);
}

StatusOr<std::shared_ptr<PersistentVolumeClaim>> DecodePersistentVolumeClaim(
    std::string_view text, const DecodeOptions& options) {
  return DecodeTypedObjectText<PersistentVolumeClaim>(text, options, "PersistentVolumeClaim",
                                                      FillClaim);
}

StatusOr<std::shared_ptr<PersistentVolume>> DecodePersistentVolume(const json::Value& value,
                                                                   const DecodeOptions& options) {
  return DecodeTypedObject<PersistentVolume>(value, options, "PersistentVolume", FillVolume);
}

StatusOr<std::shared_ptr<PersistentVolume>> DecodePersistentVolume(std::string_view text,
                                                                   const DecodeOptions& options) {
  return DecodeTypedObjectText<PersistentVolume>(text, options, "PersistentVolume", FillVolume);
}

StatusOr<std::shared_ptr<StorageClass>> DecodeStorageClass(const json::Value& value,
                                                           const DecodeOptions& options) {
  return DecodeTypedObject<StorageClass>(value, options, "StorageClass", FillStorageClass);
}

StatusOr<std::shared_ptr<CSINode>> DecodeCSINode(const json::Value& value,
                                                 const DecodeOptions& options) {
  return DecodeTypedObject<CSINode>(value, options, "CSINode", FillCSINode);
}

StatusOr<std::shared_ptr<CSIDriver>> DecodeCSIDriver(const json::Value& value,
                                                     const DecodeOptions& options) {
  return DecodeTypedObject<CSIDriver>(value, options, "CSIDriver", FillCSIDriver);
}

std::string EncodePersistentVolumeClaim(const PersistentVolumeClaim& claim) {
  kube::Object header = claim;
  // The annotation fields are the annotations' one home: write them back where they came from.
  SetAnnotation(
      header.metadata, storage::kSelectedNodeAnnotation,
      claim.selected_node.empty() ? std::nullopt : std::optional<std::string>(claim.selected_node));
  SetAnnotation(
      header.metadata, storage::kBindCompletedAnnotation,
      claim.bind_completed
          ? std::optional<std::string>(
                Annotation(claim.metadata, storage::kBindCompletedAnnotation).value_or("yes"))
          : std::nullopt);
  SetAnnotation(header.metadata, storage::kBetaStorageClassAnnotation, claim.class_annotation);
  return EncodeObject(header, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) {
      s.SetStringList("accessModes", claim.spec.access_modes);
      s.EditIf("selector", claim.spec.selector.has_value(),
               [&](JsonObject& sel) { EncodeLabelSelectorInto(*claim.spec.selector, sel); });
      s.Edit("resources",
             [&](JsonObject& r) { SetStorage(r, "requests", claim.spec.storage_request); });
      s.SetString("volumeName", claim.spec.volume_name);
      s.SetOptString("storageClassName", claim.spec.storage_class_name);
      s.SetOptString("volumeMode", claim.spec.volume_mode);
    });
    o.Edit("status", [&](JsonObject& s) { s.SetString("phase", claim.phase); });
  });
}

std::string EncodePersistentVolume(const PersistentVolume& volume) {
  kube::Object header = volume;
  SetAnnotation(
      header.metadata, storage::kBoundByControllerAnnotation,
      volume.bound_by_controller
          ? std::optional<std::string>(
                Annotation(volume.metadata, storage::kBoundByControllerAnnotation).value_or("yes"))
          : std::nullopt);
  SetAnnotation(header.metadata, storage::kBetaStorageClassAnnotation, volume.class_annotation);
  return EncodeObject(header, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) {
      SetStorage(s, "capacity", volume.spec.capacity);
      s.SetStringList("accessModes", volume.spec.access_modes);
      s.EditIf("claimRef", volume.spec.claim_ref.has_value(), [&](JsonObject& c) {
        const ClaimReference& ref = *volume.spec.claim_ref;
        c.SetString("apiVersion", ref.api_version);
        c.SetString("kind", ref.kind);
        c.SetString("namespace", ref.namespace_);
        c.SetString("name", ref.name);
        c.SetString("uid", ref.uid);
        c.SetString("resourceVersion", ref.resource_version);
      });
      s.SetString("storageClassName", volume.spec.storage_class_name);
      s.SetOptString("volumeMode", volume.spec.volume_mode);
      s.EditIf("nodeAffinity", volume.spec.node_affinity.has_value(), [&](JsonObject& a) {
        a.Edit("required", [&](JsonObject& req) {
          const auto& terms = *volume.spec.node_affinity;
          req.EditList("nodeSelectorTerms", terms.size(),
                       [&](size_t i, JsonObject& t) { EncodeNodeSelectorTermInto(terms[i], t); });
        });
      });
      s.EditIf("csi", volume.spec.csi.has_value(), [&](JsonObject& c) {
        c.SetString("driver", volume.spec.csi->driver);
        c.SetString("volumeHandle", volume.spec.csi->volume_handle);
      });
    });
    o.Edit("status", [&](JsonObject& s) { s.SetString("phase", volume.phase); });
  });
}

std::string EncodeStorageClass(const StorageClass& klass) {
  return EncodeObject(klass, [&](JsonObject& o) {
    o.SetString("provisioner", klass.provisioner);
    o.SetOptString("volumeBindingMode", klass.volume_binding_mode);
    o.EditList("allowedTopologies", klass.allowed_topologies.size(), [&](size_t i, JsonObject& t) {
      const auto& exprs = klass.allowed_topologies[i].match_label_expressions;
      t.EditList("matchLabelExpressions", exprs.size(), [&](size_t k, JsonObject& e) {
        e.SetString("key", exprs[k].key);
        e.SetStringList("values", exprs[k].values);
      });
    });
  });
}

std::string EncodeCSINode(const CSINode& node) {
  return EncodeObject(node, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) {
      s.EditList(
          "drivers", node.drivers.size(),
          [&](size_t i, JsonObject& d) {
            const CSINode::Driver& driver = node.drivers[i];
            d.SetString("name", driver.name);
            d.SetString("nodeID", driver.node_id);
            d.EditIf("allocatable", driver.allocatable_count.has_value(),
                     [&](JsonObject& a) { a.SetInt("count", *driver.allocatable_count); });
          },
          [&](size_t i) { return node.drivers[i].name; });
    });
  });
}

std::string EncodeCSIDriver(const CSIDriver& driver) {
  return EncodeObject(driver, [&](JsonObject& o) {
    o.Edit("spec", [&](JsonObject& s) {
      s.SetOptBool("attachRequired", driver.attach_required);
      s.SetOptBool("storageCapacity", driver.storage_capacity);
      s.SetOptBool("preventPodSchedulingIfMissing", driver.prevent_pod_scheduling_if_missing);
    });
  });
}

}  // namespace tephra::api

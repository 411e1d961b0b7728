// The storage objects the scheduler reads (api/storage.h): what each decodes to, the
// annotations read as fields, the rules over them, errors naming the field, and encoders that
// keep what Tephra does not model.
#include "api/storage.h"

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "tests/unit/api/testing.h"

namespace tephra::api {
namespace {

constexpr const char* kClaim = R"({
  "apiVersion": "v1", "kind": "PersistentVolumeClaim",
  "metadata": {"name": "data", "namespace": "team", "uid": "c-1", "resourceVersion": "12",
    "annotations": {"volume.kubernetes.io/selected-node": "node-3",
      "volume.beta.kubernetes.io/storage-class": "fast",
      "volume.kubernetes.io/storage-provisioner": "example.com/csi"}},
  "spec": {"accessModes": ["ReadWriteOnce", "ReadWriteOncePod"],
    "selector": {"matchLabels": {"tier": "gold"}},
    "resources": {"requests": {"storage": "10Gi"}},
    "storageClassName": "slow", "volumeMode": "Block", "dataSource": {"kind": "X"}},
  "status": {"phase": "Pending"}})";

constexpr const char* kVolume = R"({
  "apiVersion": "v1", "kind": "PersistentVolume",
  "metadata": {"name": "pv-1", "resourceVersion": "30",
    "labels": {"topology.kubernetes.io/zone": "a"},
    "annotations": {"pv.kubernetes.io/bound-by-controller": "yes"}},
  "spec": {"capacity": {"storage": "100Gi"}, "accessModes": ["ReadWriteOnce"],
    "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "team", "name": "data",
      "uid": "c-1", "apiVersion": "v1", "resourceVersion": "12"},
    "storageClassName": "fast", "persistentVolumeReclaimPolicy": "Retain",
    "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
      {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-3"]}]}]}},
    "csi": {"driver": "example.com/csi", "volumeHandle": "vol-9", "fsType": "ext4"}},
  "status": {"phase": "Bound"}})";

TEST_CASE("storage: a claim decodes with its annotations as fields") {
  auto claim = DecodePersistentVolumeClaim(kClaim);
  REQUIRE(claim.ok());
  const PersistentVolumeClaim& c = **claim;
  CHECK(c.spec.access_modes == std::vector<std::string>{"ReadWriteOnce", "ReadWriteOncePod"});
  CHECK(c.HasAccessMode(storage::kReadWriteOncePod));
  REQUIRE(c.spec.selector);
  CHECK(c.spec.selector->match_labels.at("tier") == "gold");
  CHECK(c.RequestBytes() == int64_t{10} << 30);
  CHECK(c.spec.volume_mode == "Block");
  CHECK(c.phase == "Pending");
  CHECK(c.selected_node == "node-3");
  CHECK_FALSE(c.bind_completed);
  CHECK_FALSE(c.FullyBound());
  CHECK(c.StorageClass() == "fast");  // the beta annotation wins over spec.storageClassName
}

TEST_CASE("storage: a claim is fully bound with its volume name and bind-completed") {
  auto claim = DecodePersistentVolumeClaim(
      R"({"metadata": {"name": "d", "namespace": "n",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
          "spec": {"volumeName": "pv-1", "storageClassName": ""}, "status": {"phase": "Bound"}})");
  REQUIRE(claim.ok());
  CHECK((*claim)->FullyBound());
  CHECK((*claim)->StorageClass().empty());
  CHECK((*claim)->RequestBytes() == 0);
}

TEST_CASE("storage: a PV decodes with its claim, affinity and CSI source") {
  auto volume = DecodePersistentVolume(kVolume);
  REQUIRE(volume.ok());
  const PersistentVolume& v = **volume;
  CHECK(v.CapacityBytes() == int64_t{100} << 30);
  REQUIRE(v.spec.claim_ref);
  CHECK(v.spec.claim_ref->uid == "c-1");
  CHECK(v.spec.claim_ref->resource_version == "12");
  REQUIRE(v.spec.node_affinity);
  CHECK((*v.spec.node_affinity)[0].match_expressions[0].values ==
        std::vector<std::string>{"node-3"});
  REQUIRE(v.spec.csi);
  CHECK(v.spec.csi->volume_handle == "vol-9");
  CHECK(v.bound_by_controller);
  CHECK(v.StorageClass() == "fast");
  auto claim = DecodePersistentVolumeClaim(kClaim);
  REQUIRE(claim.ok());
  CHECK(v.BoundTo(**claim));
  auto other = std::make_shared<PersistentVolumeClaim>(**claim);
  other->metadata.uid = "c-2";  // recreated under the same name: not this PV's claim
  CHECK_FALSE(v.BoundTo(*other));
}

TEST_CASE("storage: a class's binding mode, provisioner and allowed topologies") {
  json::Document doc;
  REQUIRE(json::Parse(R"({"metadata": {"name": "csi"}, "provisioner": "example.com/csi",
      "volumeBindingMode": "WaitForFirstConsumer",
      "allowedTopologies": [{"matchLabelExpressions": [
        {"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}]})",
                      &doc)
              .ok());
  auto klass = DecodeStorageClass(doc);
  REQUIRE(klass.ok());
  CHECK((*klass)->WaitForFirstConsumer());
  CHECK((*klass)->Provisions());
  CHECK((*klass)->AdmitsNode({{"topology.kubernetes.io/zone", "b"}}));
  CHECK_FALSE((*klass)->AdmitsNode({{"topology.kubernetes.io/zone", "c"}}));
  CHECK_FALSE((*klass)->AdmitsNode({}));
  StorageClass none;
  none.provisioner = "kubernetes.io/no-provisioner";
  CHECK_FALSE(none.Provisions());
  CHECK(none.AdmitsNode({}));  // no allowedTopologies: every node
  CHECK_FALSE(none.WaitForFirstConsumer());
}

TEST_CASE("storage: CSI nodes and drivers") {
  json::Document doc;
  REQUIRE(json::Parse(R"({"metadata": {"name": "node-1"}, "spec": {"drivers": [
      {"name": "example.com/csi", "nodeID": "i-1", "allocatable": {"count": 16}},
      {"name": "other", "nodeID": "i-1"}]}})",
                      &doc)
              .ok());
  auto node = DecodeCSINode(doc);
  REQUIRE(node.ok());
  REQUIRE((*node)->FindDriver("example.com/csi") != nullptr);
  CHECK((*node)->FindDriver("example.com/csi")->allocatable_count == 16);
  CHECK_FALSE((*node)->FindDriver("other")->allocatable_count);
  CHECK((*node)->FindDriver("missing") == nullptr);
  json::Document d;
  REQUIRE(json::Parse(R"({"metadata": {"name": "example.com/csi"},
      "spec": {"attachRequired": true, "preventPodSchedulingIfMissing": true}})",
                      &d)
              .ok());
  auto driver = DecodeCSIDriver(d);
  REQUIRE(driver.ok());
  CHECK((*driver)->attach_required == true);
  CHECK((*driver)->prevent_pod_scheduling_if_missing == true);
  CHECK_FALSE((*driver)->storage_capacity);
}

TEST_CASE("storage: a bad field is named in the error") {
  auto claim = DecodePersistentVolumeClaim(
      R"({"metadata": {"name": "d", "namespace": "n"},
          "spec": {"resources": {"requests": {"storage": "ten gigs"}}}})");
  REQUIRE_FALSE(claim.ok());
  CHECK_THAT(claim.status().message(), Catch::Contains("spec.resources.requests.storage"));
  auto volume =
      DecodePersistentVolume(R"({"metadata": {"name": "pv"}, "spec": {"accessModes": 3}})");
  REQUIRE_FALSE(volume.ok());
  CHECK_THAT(volume.status().message(), Catch::Contains("spec.accessModes"));
}

TEST_CASE("storage: encoding keeps what is not modelled and writes the fields back") {
  auto claim = DecodePersistentVolumeClaim(kClaim, DecodeOptions{true});
  REQUIRE(claim.ok());
  CHECK(testing::JsonEqual(EncodePersistentVolumeClaim(**claim), kClaim));
  auto volume = DecodePersistentVolume(kVolume, DecodeOptions{true});
  REQUIRE(volume.ok());
  CHECK(testing::JsonEqual(EncodePersistentVolume(**volume), kVolume));
  // Without the original text, the fields alone come back as the same object.
  auto bare = DecodePersistentVolumeClaim(kClaim);
  REQUIRE(bare.ok());
  (*bare)->metadata.annotations.clear();  // as the scheduler's informer keeps it
  auto again = DecodePersistentVolumeClaim(EncodePersistentVolumeClaim(**bare));
  REQUIRE(again.ok());
  CHECK((*again)->selected_node == "node-3");
  CHECK((*again)->StorageClass() == "fast");
  CHECK((*again)->spec == (*bare)->spec);
}

}  // namespace
}  // namespace tephra::api

// The networkTopologyDiscovery configuration: Volcano's format, and errors naming the field.
#include "controllers/hypernode/discovery_config.h"

#include <catch2/catch.hpp>

namespace tephra::controllers::hypernode {
namespace {

std::string ErrorOf(const std::string& yaml) {
  StatusOr<DiscoveryConfig> c = ParseDiscoveryConfig(yaml);
  REQUIRE_FALSE(c.ok());
  return c.status().message();
}

TEST_CASE("Volcano's documented example parses, ufm and roce reported unavailable") {
  StatusOr<DiscoveryConfig> c = ParseDiscoveryConfig(R"(
networkTopologyDiscovery:
  - source: ufm
    enabled: true
    interval: 10m
    credentials:
      secretRef: {name: ufm-credentials, namespace: volcano-system}
    config:
      endpoint: https://ufm-server:8080
      insecureSkipVerify: true
  - source: roce
    enabled: false
    interval: 15m
    config:
      endpoint: https://roce-server:9090
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        topologyA2:
          - nodeLabel: "volcano.sh/tor"
          - nodeLabel: "kubernetes.io/hostname"
        topologyA3:
          - nodeLabel: "volcano.sh/hypercluster"
          - nodeLabel: "volcano.sh/hypernode"
          - nodeLabel: "kubernetes.io/hostname"
)");
  REQUIRE(c.ok());
  CHECK(c->sources.size() == 3);
  CHECK(c->label_enabled);
  CHECK(c->label_interval == std::chrono::hours(1));
  REQUIRE(c->label_topologies.size() == 2);
  CHECK(c->label_topologies[0].name == "topologyA2");
  CHECK(c->label_topologies[1].node_labels == std::vector<std::string>{"volcano.sh/hypercluster",
                                                                       "volcano.sh/hypernode",
                                                                       "kubernetes.io/hostname"});
  CHECK(c->unavailable == std::vector<std::string>{"ufm"});
}

TEST_CASE("no list, an empty text or a disabled label source mean no discovery") {
  for (const char* text : {"", "otherSetting: 1\n",
                           "networkTopologyDiscovery:\n- source: label\n  enabled: false\n"}) {
    StatusOr<DiscoveryConfig> c = ParseDiscoveryConfig(text);
    REQUIRE(c.ok());
    CHECK_FALSE(c->label_enabled);
  }
}

TEST_CASE("the interval is a Go duration") {
  StatusOr<DiscoveryConfig> c = ParseDiscoveryConfig(R"(networkTopologyDiscovery:
- source: label
  enabled: true
  interval: 90s
  config: {networkTopologyTypes: {t: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]}})");
  REQUIRE(c.ok());
  CHECK(c->label_interval == std::chrono::seconds(90));
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, interval: soon}]")
            .find("networkTopologyDiscovery[0].interval") == 0);
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, interval: 0s}]") ==
        "networkTopologyDiscovery[0].interval: must be above zero");
}

TEST_CASE("malformed configurations name the field and the rule") {
  CHECK(ErrorOf("networkTopologyDiscovery: {source: label}") ==
        "networkTopologyDiscovery: must be a list");
  CHECK(ErrorOf("networkTopologyDiscovery: [{enabled: true}]") ==
        "networkTopologyDiscovery[0].source: is required (ufm, roce or label)");
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: lldp}]") ==
        "networkTopologyDiscovery[0].source: unknown source \"lldp\" (ufm, roce or label)");
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: ufm}, {source: ufm}]") ==
        "networkTopologyDiscovery[1].source: \"ufm\" is listed twice");
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, enabled: yes please}]") ==
        "networkTopologyDiscovery[0].enabled: must be true or false");
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, enabled: true}]") ==
        "networkTopologyDiscovery[0].config: must be a mapping with networkTopologyTypes");
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, enabled: true, config: {}}]") ==
        "networkTopologyDiscovery[0].config.networkTopologyTypes: is required");
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, enabled: true, config: "
                "{networkTopologyTypes: {t: [{nodeLabel: kubernetes.io/hostname}]}}}]")
            .find("networkTopologyDiscovery[0].config.networkTopologyTypes.t: needs at least "
                  "two entries") == 0);
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, enabled: true, config: "
                "{networkTopologyTypes: {t: [{nodeLabel: rack}, {nodeLabel: rack}]}}}]") ==
        "networkTopologyDiscovery[0].config.networkTopologyTypes.t[1].nodeLabel: \"rack\" "
        "appears twice in the topology");
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, enabled: true, config: "
                "{networkTopologyTypes: {t: [{nodeLabel: 'bad key!'}, {nodeLabel: h}]}}}]")
            .find("networkTopologyDiscovery[0].config.networkTopologyTypes.t[0].nodeLabel: "
                  "\"bad key!\" is not a label key") == 0);
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, enabled: true, config: "
                "{networkTopologyTypes: {t: {levels: []}}}}]")
            .find("the profile form (nodeSelector, levels) is not supported") != std::string::npos);
  CHECK(ErrorOf("networkTopologyDiscovery: [").find("volcano-controller.conf: ") == 0);
  CHECK(ErrorOf("networkTopologyDiscovery: [{source: label, enabled: true, config: "
                "{networkTopologyTypes: {Fab: [{nodeLabel: r}, {nodeLabel: h}], "
                "fab: [{nodeLabel: r}, {nodeLabel: h}]}}}]") ==
        "networkTopologyDiscovery[0].config.networkTopologyTypes.fab: differs from \"Fab\" only "
        "in case; their HyperNode names would clash");
}

TEST_CASE("aliases that repeat a list many times are refused, not expanded") {
  std::string text =
      "networkTopologyDiscovery:\n- source: label\n  enabled: true\n  config:\n"
      "    networkTopologyTypes:\n      a: &l [";
  for (int i = 0; i < 200; ++i) text += "{nodeLabel: l" + std::to_string(i) + "},";
  text += "{nodeLabel: h}]\n";
  for (int i = 0; i < 2000; ++i) text += "      b" + std::to_string(i) + ": *l\n";
  CHECK(ErrorOf(text).find("too many values once aliases are expanded") != std::string::npos);
}

}  // namespace
}  // namespace tephra::controllers::hypernode

// The benchmark workload generator: clusters of simulated nodes and batch workloads, written as
// Kubernetes objects (JSON). The in-process benchmark decodes them with the scheduler's own
// informer decoders; the end-to-end benchmark POSTs them to a real API server. One generator,
// so both benchmarks place exactly the same pods on exactly the same nodes.
//
// Cluster shapes:
//   uniform  every node 32 CPU, 256Gi, 110 pods
//   mixed    3 of 4 nodes 32 CPU / 128Gi; every 4th a GPU node (64 CPU, 512Gi, 8 nvidia.com/gpu,
//            tainted nvidia.com/gpu=present:NoSchedule, labelled accelerator=gpu)
//   taints   uniform capacity, labels zone (10) and pool (a/b/c), every 5th node tainted
//            dedicated=infra:NoSchedule
// Workloads: `pods` pending pods in gangs of `gang_size` (minMember = gang size), of which
// `plain_fraction` are plain pods (a PodGroup of one, as the PodGroup controller makes for a
// bare pod); jobs spread round-robin over `queues` weighted queues and three priority classes;
// requests cycle through 500m/1Gi, 1/2Gi, 2/4Gi. With `mixed`, every 10th gang asks for one GPU
// per pod; with `taints`, every 3rd gang selects a pool and every 4th tolerates the taint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tephra::bench {

enum class NodeShape { kUniform, kMixed, kTaints };
bool ParseNodeShape(const std::string& text, NodeShape* shape);
const char* NodeShapeName(NodeShape shape);

struct ClusterSpec {
  int nodes = 500;
  NodeShape shape = NodeShape::kUniform;
  std::string prefix = "node";
};

// Node i (0-based) of the cluster, with status (capacity, allocatable, Ready) and kwok's
// annotation so that kwok manages it on a real control plane.
std::string NodeJson(const ClusterSpec& cluster, int i);

struct WorkloadSpec {
  int64_t pods = 10000;
  int gang_size = 10;
  double plain_fraction = 0.2;  // share of pods that are plain (single-pod groups)
  int queues = 4;               // q-0 .. q-(n-1), weights 1..n; 0 = the default queue only
  bool priorities = true;       // three priority classes across jobs
  NodeShape shape = NodeShape::kUniform;
  std::string namespace_ = "bench";
  std::string scheduler_name = "volcano";
  std::string prefix = "job";  // job names: <prefix>-<index>
};

// One job of the workload: a gang (size > 1) or a plain pod (size 1, plain = true).
struct JobPlan {
  int64_t index = 0;
  std::string name;  // PodGroup name; pods are <name>-<i>
  int size = 1;
  bool plain = false;
  std::string queue;           // "" = default
  std::string priority_class;  // "" = none
  int request = 0;             // 0: 500m/1Gi, 1: 1/2Gi, 2: 2/4Gi
  bool gpu = false;
  std::string pool;       // nodeSelector pool, "" = none
  bool tolerate = false;  // tolerates dedicated=infra (taints) or the GPU taint (mixed)
};

// The jobs, in creation order (gangs and plain pods interleaved).
std::vector<JobPlan> PlanJobs(const WorkloadSpec& spec);

// Objects of the workload. Pods carry `extra_annotations` (JSON members, without braces,
// may be empty) in addition to the group annotation.
std::vector<std::string> QueueJsons(const WorkloadSpec& spec);
std::vector<std::string> PriorityClassJsons(const WorkloadSpec& spec);
std::string PodGroupJson(const WorkloadSpec& spec, const JobPlan& job, const std::string& phase);
// Pod `i` of the job. `grouped`: annotate it with the job's PodGroup (otherwise a bare pod, as
// a Deployment or a user would create it). `scheduler_name` overrides spec.scheduler_name.
// `node_name`, when given, binds it at creation (a pod some scheduler placed long ago).
std::string PodJson(const WorkloadSpec& spec, const JobPlan& job, int i, bool grouped,
                    const std::string& scheduler_name, const std::string& node_name = "");
// What each pod of the job requests: milli-CPU and bytes of memory.
int64_t PodMilliCpu(const JobPlan& job);
int64_t PodMemoryBytes(const JobPlan& job);
// A Volcano batch Job for the job (one task, replicas = minAvailable = size).
std::string VolcanoJobJson(const WorkloadSpec& spec, const JobPlan& job);

}  // namespace tephra::bench

#include "bench/workload.h"

#include <cstdio>

#include "json/json.h"

namespace tephra::bench {
namespace {

const char* const kCpu[] = {"500m", "1", "2"};
const char* const kMemory[] = {"1Gi", "2Gi", "4Gi"};
const char* const kPriorityClasses[] = {"bench-low", "bench-mid", "bench-high"};
const int kPriorityValues[] = {100, 1000, 10000};

std::string JoinMembers(const std::vector<std::string>& members) {
  std::string out;
  for (const auto& m : members) {
    if (m.empty()) continue;
    if (!out.empty()) out += ',';
    out += m;
  }
  return out;
}

std::string Member(const std::string& key, const std::string& json_value) {
  return json::Quote(key) + ":" + json_value;
}

// The pod template's spec (shared by plain pods, gang pods and Volcano Job templates).
std::string PodSpecJson(const WorkloadSpec& spec, const JobPlan& job,
                        const std::string& scheduler_name, const std::string& node_name = "") {
  std::string requests = "\"cpu\":" + json::Quote(kCpu[job.request]) +
                         ",\"memory\":" + json::Quote(kMemory[job.request]);
  if (job.gpu) requests += ",\"nvidia.com/gpu\":\"1\"";
  std::string limits = job.gpu ? ",\"limits\":{\"nvidia.com/gpu\":\"1\"}" : "";
  std::vector<std::string> members = {
      Member("schedulerName", json::Quote(scheduler_name)),
      R"("restartPolicy":"Never","terminationGracePeriodSeconds":0)",
      R"("containers":[{"name":"main","image":"registry.k8s.io/pause:3.10","resources":{"requests":{)" +
          requests + "}" + limits + "}}]",
  };
  if (!job.priority_class.empty())
    members.push_back(Member("priorityClassName", json::Quote(job.priority_class)));
  if (!node_name.empty()) members.push_back(Member("nodeName", json::Quote(node_name)));
  if (!job.pool.empty())
    members.push_back(R"("nodeSelector":{"pool":)" + json::Quote(job.pool) + "}");
  if (job.tolerate) {
    members.push_back(
        spec.shape == NodeShape::kMixed
            ? R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])"
            : R"("tolerations":[{"key":"dedicated","operator":"Equal","value":"infra","effect":"NoSchedule"}])");
  }
  return "{" + JoinMembers(members) + "}";
}

std::string Labels(const JobPlan& job) {
  return R"({"app":"tephra-bench","bench.tephra.dev/job":)" + json::Quote(job.name) + "}";
}

}  // namespace

bool ParseNodeShape(const std::string& text, NodeShape* shape) {
  if (text == "uniform")
    *shape = NodeShape::kUniform;
  else if (text == "mixed")
    *shape = NodeShape::kMixed;
  else if (text == "taints")
    *shape = NodeShape::kTaints;
  else
    return false;
  return true;
}

const char* NodeShapeName(NodeShape shape) {
  switch (shape) {
    case NodeShape::kUniform:
      return "uniform";
    case NodeShape::kMixed:
      return "mixed";
    case NodeShape::kTaints:
      return "taints";
  }
  return "?";
}

std::string NodeJson(const ClusterSpec& cluster, int i) {
  const std::string name = cluster.prefix + "-" + std::to_string(i);
  std::string labels = R"("kubernetes.io/hostname":)" + json::Quote(name) +
                       R"(,"kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","type":"kwok",)"
                       R"("topology.kubernetes.io/zone":"zone-)" +
                       std::to_string(i % 10) + "\"";
  std::string resources = R"("cpu":"32","memory":"256Gi","pods":"110")";
  std::string taints;
  if (cluster.shape == NodeShape::kMixed) {
    if (i % 4 == 3) {
      resources = R"("cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":"8")";
      labels += R"(,"accelerator":"gpu")";
      taints = R"("taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}])";
    } else {
      resources = R"("cpu":"32","memory":"128Gi","pods":"110")";
    }
  } else if (cluster.shape == NodeShape::kTaints) {
    labels += R"(,"pool":"pool-)" + std::string(1, static_cast<char>('a' + i % 3)) + "\"";
    if (i % 5 == 0)
      taints = R"("taints":[{"key":"dedicated","value":"infra","effect":"NoSchedule"}])";
  }
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":)" + json::Quote(name) +
         R"(,"annotations":{"kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0"},"labels":{)" +
         labels + "}},\"spec\":{" + taints + R"(},"status":{"capacity":{)" + resources +
         R"(},"allocatable":{)" + resources +
         R"(},"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}})";
}

std::vector<JobPlan> PlanJobs(const WorkloadSpec& spec) {
  std::vector<JobPlan> jobs;
  const int gang = spec.gang_size < 1 ? 1 : spec.gang_size;
  const auto plain_pods =
      static_cast<int64_t>(static_cast<double>(spec.pods) * spec.plain_fraction);
  const int64_t gangs = (spec.pods - plain_pods) / gang;
  const int64_t plain = spec.pods - gangs * gang;  // the remainder runs as plain pods too
  const int64_t total = gangs + plain;
  // Interleave: job k is plain when it crosses the next step of the plain share.
  for (int64_t k = 0; k < total; ++k) {
    JobPlan job;
    job.index = k;
    const bool want_plain = (k + 1) * plain / total > k * plain / total;
    job.plain = want_plain;
    job.size = want_plain ? 1 : gang;
    char name[64];
    std::snprintf(name, sizeof name, "%s-%s-%06lld", spec.prefix.c_str(), want_plain ? "p" : "g",
                  static_cast<long long>(k));
    job.name = name;
    if (spec.queues > 0) job.queue = "q-" + std::to_string(k % spec.queues);
    if (spec.priorities) job.priority_class = kPriorityClasses[(k / 3) % 3];
    job.request = static_cast<int>(k % 3);
    if (spec.shape == NodeShape::kMixed) {
      job.gpu = k % 10 == 9;
      job.tolerate = job.gpu;
    } else if (spec.shape == NodeShape::kTaints) {
      if (k % 3 == 1) job.pool = std::string("pool-") + static_cast<char>('a' + (k / 3) % 3);
      job.tolerate = k % 4 == 0;
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<std::string> QueueJsons(const WorkloadSpec& spec) {
  std::vector<std::string> out;
  for (int q = 0; q < spec.queues; ++q) {
    out.push_back(
        R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q-)" +
        std::to_string(q) + R"("},"spec":{"weight":)" + std::to_string(q + 1) +
        R"(,"reclaimable":true},"status":{"state":"Open"}})");
  }
  return out;
}

std::vector<std::string> PriorityClassJsons(const WorkloadSpec& spec) {
  std::vector<std::string> out;
  if (!spec.priorities) return out;
  for (int i = 0; i < 3; ++i) {
    out.push_back(
        R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":)" +
        json::Quote(kPriorityClasses[i]) + R"(},"value":)" + std::to_string(kPriorityValues[i]) +
        R"(,"preemptionPolicy":"Never","description":"tephra benchmark"})");
  }
  return out;
}

int64_t PodMilliCpu(const JobPlan& job) {
  static const int64_t kMilli[] = {500, 1000, 2000};
  return kMilli[job.request];
}

int64_t PodMemoryBytes(const JobPlan& job) {
  static const int64_t kGi[] = {1, 2, 4};
  return kGi[job.request] << 30;
}

std::string PodGroupJson(const WorkloadSpec& spec, const JobPlan& job, const std::string& phase) {
  // minResources = requests x minMember, as the job and PodGroup controllers set it.
  char min_resources[160];
  std::snprintf(
      min_resources, sizeof min_resources, R"({"cpu":"%g","memory":"%lldGi"%s})",
      static_cast<double>(PodMilliCpu(job) * job.size) / 1000.0,
      static_cast<long long>((PodMemoryBytes(job) >> 30) * job.size),
      job.gpu ? (",\"nvidia.com/gpu\":\"" + std::to_string(job.size) + "\"").c_str() : "");
  std::vector<std::string> members = {Member("minMember", std::to_string(job.size)),
                                      Member("minResources", min_resources)};
  if (!job.queue.empty()) members.push_back(Member("queue", json::Quote(job.queue)));
  if (!job.priority_class.empty())
    members.push_back(Member("priorityClassName", json::Quote(job.priority_class)));
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":)" +
         json::Quote(job.name) + ",\"namespace\":" + json::Quote(spec.namespace_) + "},\"spec\":{" +
         JoinMembers(members) + "},\"status\":{\"phase\":" + json::Quote(phase) + "}}";
}

std::string PodJson(const WorkloadSpec& spec, const JobPlan& job, int i, bool grouped,
                    const std::string& scheduler_name, const std::string& node_name) {
  std::string name = job.plain ? job.name : job.name + "-worker-" + std::to_string(i);
  std::vector<std::string> annotations;
  if (grouped) annotations.push_back(Member("scheduling.k8s.io/group-name", json::Quote(job.name)));
  if (!job.queue.empty())
    annotations.push_back(Member("scheduling.volcano.sh/queue-name", json::Quote(job.queue)));
  if (!job.plain) annotations.push_back(R"("volcano.sh/task-spec":"worker")");
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":)" + json::Quote(name) +
         ",\"namespace\":" + json::Quote(spec.namespace_) + ",\"labels\":" + Labels(job) +
         ",\"annotations\":{" + JoinMembers(annotations) +
         "}},\"spec\":" + PodSpecJson(spec, job, scheduler_name, node_name) + "}";
}

std::string VolcanoJobJson(const WorkloadSpec& spec, const JobPlan& job) {
  std::vector<std::string> members = {
      Member("schedulerName", json::Quote(spec.scheduler_name)),
      Member("minAvailable", std::to_string(job.size)),
  };
  if (!job.queue.empty()) members.push_back(Member("queue", json::Quote(job.queue)));
  if (!job.priority_class.empty())
    members.push_back(Member("priorityClassName", json::Quote(job.priority_class)));
  members.push_back(R"("tasks":[{"name":"worker","replicas":)" + std::to_string(job.size) +
                    R"(,"template":{"metadata":{"labels":)" + Labels(job) +
                    "},\"spec\":" + PodSpecJson(spec, job, spec.scheduler_name) + "}}]");
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":)" +
         json::Quote(job.name) + ",\"namespace\":" + json::Quote(spec.namespace_) + "},\"spec\":{" +
         JoinMembers(members) + "}}";
}

}  // namespace tephra::bench

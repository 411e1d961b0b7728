// Pod and PodGroup construction, minResources, and the job plugins' exact outputs.
#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "base/base64.h"
#include "controllers/job/builders.h"
#include "controllers/job/plugins/plugin.h"
#include "json/json.h"
#include "tests/unit/controllers/testing.h"

namespace tephra::controllers::job {
namespace {

using testing::JobJson;
using testing::MakeJob;
using testing::Task;

// Reads a path like "spec.containers.0.env" from JSON text.
struct Json {
  explicit Json(const std::string& text) { REQUIRE(json::Parse(text, &doc).ok()); }
  const json::Value* At(std::initializer_list<std::string> path) const {
    const json::Value* v = &doc;
    for (const std::string& p : path) {
      if (v->IsArray()) {
        size_t i = std::stoul(p);
        if (i >= v->Size()) return nullptr;
        v = &(*v)[static_cast<rapidjson::SizeType>(i)];
      } else if (v->IsObject() && v->HasMember(p.c_str())) {
        v = &(*v)[p.c_str()];
      } else {
        return nullptr;
      }
    }
    return v;
  }
  std::string Str(std::initializer_list<std::string> path) const {
    const json::Value* v = At(path);
    return v && v->IsString() ? v->GetString() : "<missing>";
  }
  // env var `name` of container `c` (value or configMapKeyRef "cm/key").
  std::string Env(size_t c, const std::string& name, const char* list = "containers") const {
    const json::Value* env = At({"spec", list, std::to_string(c), "env"});
    if (!env || !env->IsArray()) return "<no env>";
    for (const auto& e : env->GetArray()) {
      if (std::string(e["name"].GetString()) != name) continue;
      if (e.HasMember("value")) return e["value"].GetString();
      const auto& ref = e["valueFrom"]["configMapKeyRef"];
      return std::string(ref["name"].GetString()) + "/" + ref["key"].GetString();
    }
    return "<unset>";
  }
  rapidjson::Document doc;
};

api::Job TwoTaskJob(const std::string& extra_spec = "") {
  std::string tmpl =
      R"({"restartPolicy":"Never","nodeSelector":{"disk":"ssd"},"containers":[{"name":"c",)"
      R"("image":"busybox","resources":{"requests":{"cpu":"500m","memory":"1Gi"}}}]})";
  return MakeJob(JobJson(
      "[" + Task("master", 1, "", tmpl) + "," + Task("worker", 3, "", tmpl) + "]",
      R"("queue":"q1","priorityClassName":"high")" + (extra_spec.empty() ? "" : "," + extra_spec),
      R"({"version":4,"retryCount":2})"));
}

TEST_CASE("a pod carries the template, the job's keys, owner and scheduling fields") {
  api::Job job = TwoTaskJob();
  job.metadata.annotations["volcano.sh/preemptable"] = "true";
  job.metadata.annotations["volcano.sh/jdb-max-unavailable"] = "1";
  auto pod = BuildPod(job, job.spec.tasks[1], 2);
  REQUIRE(pod.ok());
  Json p(pod->Json());
  CHECK(p.Str({"metadata", "name"}) == "j-worker-2");
  CHECK(p.Str({"metadata", "namespace"}) == "ns");
  CHECK(p.Str({"metadata", "annotations", "scheduling.k8s.io/group-name"}) == "j-u1");
  CHECK(p.Str({"metadata", "annotations", "volcano.sh/job-name"}) == "j");
  CHECK(p.Str({"metadata", "annotations", "volcano.sh/task-spec"}) == "worker");
  CHECK(p.Str({"metadata", "annotations", "volcano.sh/task-index"}) == "2");
  CHECK(p.Str({"metadata", "annotations", "volcano.sh/queue-name"}) == "q1");
  CHECK(p.Str({"metadata", "annotations", "volcano.sh/job-version"}) == "4");
  CHECK(p.Str({"metadata", "annotations", "volcano.sh/job-retry-count"}) == "2");
  CHECK(p.Str({"metadata", "annotations", "volcano.sh/template-uid"}) == "j-worker");
  CHECK(p.Str({"metadata", "annotations", "volcano.sh/preemptable"}) == "true");
  CHECK(p.Str({"metadata", "annotations", "volcano.sh/jdb-max-unavailable"}) == "1");
  CHECK(p.Str({"metadata", "labels", "volcano.sh/job-name"}) == "j");
  CHECK(p.Str({"metadata", "labels", "volcano.sh/job-namespace"}) == "ns");
  CHECK(p.Str({"metadata", "labels", "volcano.sh/task-spec"}) == "worker");
  CHECK(p.Str({"metadata", "labels", "volcano.sh/task-index"}) == "2");
  CHECK(p.Str({"metadata", "labels", "volcano.sh/queue-name"}) == "q1");
  CHECK(p.Str({"metadata", "ownerReferences", "0", "kind"}) == "Job");
  CHECK(p.Str({"metadata", "ownerReferences", "0", "uid"}) == "u1");
  CHECK(p.At({"metadata", "ownerReferences", "0", "controller"})->GetBool());
  CHECK(p.Str({"spec", "schedulerName"}) == "volcano");
  CHECK(p.Str({"spec", "priorityClassName"}) == "high");
  // Fields Tephra does not model survive.
  CHECK(p.Str({"spec", "nodeSelector", "disk"}) == "ssd");
  CHECK(p.Str({"spec", "restartPolicy"}) == "Never");
}

TEST_CASE("a template's own scheduler, priority and hostname win over the job's") {
  std::string tmpl =
      R"({"schedulerName":"other","priorityClassName":"low","containers":[{"name":"c","image":"x"}]})";
  api::Job job =
      MakeJob(JobJson("[" + Task("t", 1, "", tmpl) + "]", R"("priorityClassName":"high")"));
  auto pod = BuildPod(job, job.spec.tasks[0], 0);
  REQUIRE(pod.ok());
  Json p(pod->Json());
  CHECK(p.Str({"spec", "schedulerName"}) == "other");
  CHECK(p.Str({"spec", "priorityClassName"}) == "low");
}

TEST_CASE("partitions label pods and become sub-group policies") {
  api::Job job = MakeJob(JobJson(
      "[" +
      Task("t", 4,
           R"("partitionPolicy":{"totalPartitions":2,"partitionSize":2,"minPartitions":1})") +
      "]"));
  auto pod = BuildPod(job, job.spec.tasks[0], 3);
  REQUIRE(pod.ok());
  CHECK(Json(pod->Json()).Str({"metadata", "labels", "volcano.sh/partition-id"}) == "1");
  api::PodGroup pg = BuildPodGroup(job, nullptr);
  REQUIRE(pg.spec.sub_group_policy.size() == 1);
  CHECK(pg.spec.sub_group_policy[0].name == "t");
  CHECK(pg.spec.sub_group_policy[0].sub_group_size == 2);
  CHECK(pg.spec.sub_group_policy[0].min_sub_groups == 1);
  CHECK(pg.spec.sub_group_policy[0].match_label_keys ==
        std::vector<std::string>{"volcano.sh/partition-id"});
  CHECK(pg.spec.min_task_member.at("t") == 2);
}

TEST_CASE("job volumes become claims mounted in every container") {
  api::Job job = MakeJob(
      JobJson("[" + Task("t", 1) + "]",
              R"("volumes":[{"mountPath":"/data","volumeClaimName":"shared"},)"
              R"({"mountPath":"/scratch","volumeClaim":{"accessModes":["ReadWriteOnce"]}}])"));
  CHECK(VolumeClaimName(job, 0) == "shared");
  std::string generated = VolumeClaimName(job, 1);
  CHECK(generated.rfind("j-pvc-", 0) == 0);
  CHECK(generated.size() == std::string("j-pvc-").size() + 12);
  CHECK(generated == VolumeClaimName(job, 1));  // stable
  auto pod = BuildPod(job, job.spec.tasks[0], 0);
  REQUIRE(pod.ok());
  Json p(pod->Json());
  CHECK(p.Str({"spec", "volumes", "0", "persistentVolumeClaim", "claimName"}) == "shared");
  CHECK(p.Str({"spec", "volumes", "1", "persistentVolumeClaim", "claimName"}) == generated);
  CHECK(p.Str({"spec", "containers", "0", "volumeMounts", "0", "mountPath"}) == "/data");
  CHECK(p.Str({"spec", "containers", "0", "volumeMounts", "1", "mountPath"}) == "/scratch");
}

TEST_CASE("the PodGroup copies the gang, queue, priority and metadata of the job") {
  api::Job job = TwoTaskJob();
  job.metadata.labels["team"] = "a";
  api::PodGroup pg = BuildPodGroup(job, nullptr);
  CHECK(pg.metadata.name == "j-u1");
  CHECK(pg.metadata.namespace_ == "ns");
  CHECK(pg.metadata.labels.at("team") == "a");
  REQUIRE(pg.metadata.owner_references.size() == 1);
  CHECK(pg.metadata.owner_references[0].uid == "u1");
  CHECK(pg.spec.min_member == 4);
  CHECK(pg.spec.queue == "q1");
  CHECK(pg.spec.priority_class_name == "high");
  CHECK(pg.spec.min_task_member.at("master") == 1);
  CHECK(pg.spec.min_task_member.at("worker") == 3);
  REQUIRE(pg.spec.min_resources.has_value());
  api::Resources r = api::Resources::FromList(*pg.spec.min_resources);
  CHECK(r.milli_cpu() == 2000);
  CHECK(r.memory() == 4LL << 30);
}

TEST_CASE("minResources follows task priority when the gang is smaller than the tasks") {
  std::string small = R"({"priorityClassName":"low","containers":[{"name":"c","image":"x",)"
                      R"("resources":{"requests":{"cpu":"1"}}}]})";
  std::string big = R"({"priorityClassName":"high","containers":[{"name":"c","image":"x",)"
                    R"("resources":{"requests":{"cpu":"4"}}}]})";
  PriorityLookup priorities = [](std::string_view name) -> std::optional<int32_t> {
    if (name == "high") return 1000;
    if (name == "low") return 10;
    return std::nullopt;
  };
  // minAvailable 3 < Σ task minAvailable 4: the first 3 pods by priority are the big ones.
  api::Job job =
      MakeJob(JobJson("[" + Task("small", 2, "", small) + "," + Task("big", 2, "", big) + "]",
                      R"("minAvailable":3)"));
  CHECK(api::Resources::FromList(MinResources(job, priorities)).milli_cpu() == 4000 + 4000 + 1000);
  CHECK(api::Resources::FromList(MinResources(job, nullptr)).milli_cpu() == 1000 + 1000 + 4000);
  // minAvailable 5 ≥ Σ task minAvailable (1 + 1): each task's minimum, then the rest by priority.
  api::Job topped = MakeJob(JobJson("[" + Task("small", 3, R"("minAvailable":1)", small) + "," +
                                        Task("big", 3, R"("minAvailable":1)", big) + "]",
                                    R"("minAvailable":5)"));
  CHECK(api::Resources::FromList(MinResources(topped, priorities)).milli_cpu() ==
        1000 + 4000 + 2 * 4000 + 1000);
}

TEST_CASE("minResources carries Volcano's quota-style keys") {
  // The differential scenario podgroup-min-resources-keys: Volcano writes exactly these.
  std::string ps = R"({"containers":[{"name":"c","image":"x","resources":{)"
                   R"("requests":{"cpu":"500m","memory":"256Mi"},)"
                   R"("limits":{"cpu":"1","memory":"512Mi"}}}]})";
  std::string worker = R"({"containers":[{"name":"c","image":"x",)"
                       R"("resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]})";
  api::Job job =
      MakeJob(JobJson("[" + Task("ps", 1, "", ps) + "," + Task("worker", 2, "", worker) + "]",
                      R"("minAvailable":3)"));
  std::string text;
  for (const auto& [name, q] : MinResources(job, nullptr)) {
    text += (text.empty() ? "" : ",") + name + "=" + std::to_string(q.MilliValue());
  }
  CHECK(text ==
        "count/pods=3000,cpu=2500,limits.cpu=1000,limits.memory=536870912000,"
        "memory=2415919104000,pods=3000,requests.cpu=2500,requests.memory=2415919104000");
}

TEST_CASE("PodGroup drift is detected on the fields the controller owns") {
  api::Job job = TwoTaskJob();
  api::PodGroup want = BuildPodGroup(job, nullptr);
  api::PodGroup have = want;
  have.status.phase = "Running";
  CHECK_FALSE(PodGroupSpecDrifted(have, want));
  have.spec.min_member = 1;
  CHECK(PodGroupSpecDrifted(have, want));
}

StatusOr<std::string> RunPlugin(const std::string& name, const std::vector<std::string>& args,
                                const api::Job& job, size_t task, int32_t index) {
  TEPHRA_ASSIGN_OR_RETURN(auto plugin, NewJobPlugin(name, args));
  TEPHRA_ASSIGN_OR_RETURN(PodDraft pod, BuildPod(job, job.spec.tasks[task], index));
  PodInfo info{&job.spec.tasks[task], index};
  TEPHRA_RETURN_IF_ERROR(plugin->OnPodCreate(job, info, &pod));
  TEPHRA_RETURN_IF_ERROR(plugin->OnPodCreate(job, info, &pod));  // idempotent
  return pod.Json();
}

TEST_CASE("env sets VC_TASK_INDEX and VK_TASK_INDEX on every container") {
  std::string tmpl =
      R"({"initContainers":[{"name":"i","image":"x"}],"containers":[{"name":"a",)"
      R"("image":"x"},{"name":"b","image":"x","env":[{"name":"KEEP","value":"1"}]}]})";
  api::Job job = MakeJob(JobJson("[" + Task("t", 3, "", tmpl) + "]"));
  auto out = RunPlugin("env", {}, job, 0, 2);
  REQUIRE(out.ok());
  Json p(*out);
  CHECK(p.Env(0, "VC_TASK_INDEX") == "2");
  CHECK(p.Env(0, "VK_TASK_INDEX") == "2");
  CHECK(p.Env(1, "VC_TASK_INDEX") == "2");
  CHECK(p.Env(1, "KEEP") == "1");
  CHECK(p.Env(0, "VC_TASK_INDEX", "initContainers") == "2");
  CHECK(p.At({"spec", "containers", "1", "env"})->Size() == 3);
}

// Records what plugins write.
class RecordingWriter : public ObjectWriter {
 public:
  Status Ensure(const kube::Resource& resource, const std::string&, const std::string& name,
                const std::string& object, bool replace) override {
    objects[resource.plural + "/" + name] = object;
    replaced[resource.plural + "/" + name] = replace;
    return Status::Ok();
  }
  std::map<std::string, std::string> objects;
  std::map<std::string, bool> replaced;
};

TEST_CASE("svc: host lists in the ConfigMap with Volcano's exact keys") {
  api::Job job = MakeJob(JobJson("[" + Task("ps-0", 2) + "," + Task("worker", 1) + "]"));
  auto data = SvcConfigMapData(job);
  CHECK(data.size() == 6);
  CHECK(data.at("ps_0.host") == "j-ps-0-0.j\nj-ps-0-1.j");
  CHECK(data.at("VC_PS_0_HOSTS") == "j-ps-0-0.j,j-ps-0-1.j");
  CHECK(data.at("VC_PS_0_NUM") == "2");
  CHECK(data.at("worker.host") == "j-worker-0.j");
  CHECK(data.at("VC_WORKER_HOSTS") == "j-worker-0.j");
  CHECK(data.at("VC_WORKER_NUM") == "1");
}

TEST_CASE("svc: the headless Service has no ports, as Volcano's") {
  api::Job job = MakeJob(JobJson("[" + Task("worker", 2) + "]"));
  json::Document svc;
  REQUIRE(json::Parse(SvcService(job, true), &svc).ok());
  CHECK(std::string(svc["spec"]["clusterIP"].GetString()) == "None");
  CHECK(svc["spec"]["publishNotReadyAddresses"].GetBool());
  CHECK_FALSE(svc["spec"].HasMember("ports"));
}

TEST_CASE("svc: an explicit template hostname lists one host") {
  std::string tmpl =
      R"({"hostname":"boss","subdomain":"grp","containers":[{"name":"c","image":"x"}]})";
  api::Job job = MakeJob(JobJson("[" + Task("m", 3, "", tmpl) + "]"));
  CHECK(SvcConfigMapData(job).at("m.host") == "boss.grp");
  CHECK(SvcConfigMapData(job).at("VC_M_NUM") == "1");
}

TEST_CASE("svc: pods get hostname, subdomain, the host env and the /etc/volcano mount") {
  std::string tmpl =
      R"({"initContainers":[{"name":"i","image":"x"}],"containers":[{"name":"c","image":"x"}]})";
  api::Job job =
      MakeJob(JobJson("[" + Task("m", 1, "", tmpl) + "," + Task("w", 2, "", tmpl) + "]"));
  auto out = RunPlugin("svc", {}, job, 1, 1);
  REQUIRE(out.ok());
  Json p(*out);
  CHECK(p.Str({"spec", "hostname"}) == "j-w-1");
  CHECK(p.Str({"spec", "subdomain"}) == "j");
  CHECK(p.Env(0, "VC_M_HOSTS") == "j-svc/VC_M_HOSTS");
  CHECK(p.Env(0, "VC_W_NUM") == "j-svc/VC_W_NUM");
  CHECK(p.Env(0, "VC_W_HOSTS", "initContainers") == "j-svc/VC_W_HOSTS");
  CHECK(p.Str({"spec", "volumes", "0", "configMap", "name"}) == "j-svc");
  CHECK(p.Str({"spec", "containers", "0", "volumeMounts", "0", "mountPath"}) == "/etc/volcano");
  CHECK(p.Str({"spec", "initContainers", "0", "volumeMounts", "0", "mountPath"}) == "/etc/volcano");
  CHECK(p.At({"spec", "volumes"})->Size() == 1);

  auto quiet = RunPlugin("svc", {"--inject-hosts-env=false"}, job, 1, 1);
  REQUIRE(quiet.ok());
  CHECK(Json(*quiet).Env(0, "VC_M_HOSTS") == "<no env>");
}

TEST_CASE("svc: Service, NetworkPolicy and ConfigMap on job add, ConfigMap refreshed on update") {
  api::Job job = MakeJob(JobJson("[" + Task("w", 2) + "]"));
  auto plugin = NewJobPlugin("svc", {"--publish-not-ready-addresses"});
  REQUIRE(plugin.ok());
  RecordingWriter w;
  REQUIRE((*plugin)->OnJobAdd(job, w).ok());
  REQUIRE(w.objects.count("services/j"));
  Json svc(w.objects["services/j"]);
  CHECK(svc.Str({"spec", "clusterIP"}) == "None");
  CHECK(svc.Str({"spec", "selector", "volcano.sh/job-name"}) == "j");
  CHECK(svc.Str({"spec", "selector", "volcano.sh/job-namespace"}) == "ns");
  CHECK(svc.At({"spec", "publishNotReadyAddresses"})->GetBool());
  CHECK(svc.Str({"metadata", "ownerReferences", "0", "uid"}) == "u1");
  Json np(w.objects.at("networkpolicies/j"));
  CHECK(np.Str({"spec", "podSelector", "matchLabels", "volcano.sh/job-name"}) == "j");
  CHECK(np.Str({"spec", "ingress", "0", "from", "0", "podSelector", "matchLabels",
                "volcano.sh/job-namespace"}) == "ns");
  Json cm(w.objects.at("configmaps/j-svc"));
  CHECK(cm.Str({"data", "VC_W_HOSTS"}) == "j-w-0.j,j-w-1.j");
  CHECK_FALSE(w.replaced["configmaps/j-svc"]);
  REQUIRE((*plugin)->OnJobUpdate(job, w).ok());
  CHECK(w.replaced["configmaps/j-svc"]);

  auto no_policy = NewJobPlugin("svc", {"--disable-network-policy=true"});
  REQUIRE(no_policy.ok());
  RecordingWriter w2;
  REQUIRE((*no_policy)->OnJobAdd(job, w2).ok());
  CHECK(w2.objects.count("networkpolicies/j") == 0);
}

TEST_CASE("ssh: config lists every pod, the Secret holds a usable RSA pair") {
  api::Job job = MakeJob(JobJson("[" + Task("m", 1) + "," + Task("w", 2) + "]"));
  CHECK(SshConfig(job, 22) ==
        "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
        "Host j-m-0\n  HostName j-m-0.j\n  Port 22\n"
        "Host j-w-0\n  HostName j-w-0.j\n  Port 22\n"
        "Host j-w-1\n  HostName j-w-1.j\n  Port 22\n");
  auto plugin = NewJobPlugin("ssh", {"--ssh-port=2222"});
  REQUIRE(plugin.ok());
  RecordingWriter w;
  REQUIRE((*plugin)->OnJobAdd(job, w).ok());
  Json secret(w.objects.at("secrets/j-ssh"));
  auto decode = [&](const char* key) {
    return base::Base64Decode(secret.Str({"data", key})).value_or("?");
  };
  std::string private_pem = decode("id_rsa");
  CHECK(private_pem.rfind("-----BEGIN RSA PRIVATE KEY-----", 0) == 0);
  std::string pub = decode("id_rsa.pub");
  CHECK(pub.rfind("ssh-rsa AAAAB3NzaC1yc2E", 0) == 0);
  CHECK(decode("authorized_keys") == pub);
  CHECK(decode("config").find("  Port 2222\n") != std::string::npos);
  // The public key is the private key's.
  auto derived = OpenSshPublicKey(private_pem);
  REQUIRE(derived.ok());
  CHECK(*derived == pub);
  CHECK_FALSE(w.replaced["secrets/j-ssh"]);  // never regenerated over an existing Secret
}

TEST_CASE("ssh: the Secret is mounted at the key path through the .ssh sub-path") {
  api::Job job = MakeJob(JobJson("[" + Task("m", 1) + "]"));
  auto out = RunPlugin("ssh", {}, job, 0, 0);
  REQUIRE(out.ok());
  Json p(*out);
  CHECK(p.Str({"spec", "volumes", "0", "secret", "secretName"}) == "j-ssh");
  CHECK(p.At({"spec", "volumes", "0", "secret", "defaultMode"})->GetInt() == 0600);
  CHECK(p.Str({"spec", "volumes", "0", "secret", "items", "3", "path"}) == ".ssh/config");
  CHECK(p.Str({"spec", "containers", "0", "volumeMounts", "0", "mountPath"}) == "/root/.ssh");
  CHECK(p.Str({"spec", "containers", "0", "volumeMounts", "0", "subPath"}) == ".ssh");
  auto custom = RunPlugin("ssh", {"--ssh-key-file-path", "/home/u/.ssh"}, job, 0, 0);
  REQUIRE(custom.ok());
  CHECK(Json(*custom).At({"spec", "volumes", "0", "secret", "defaultMode"})->GetInt() == 0644);
}

TEST_CASE("mpi: the master gets MPI_HOST with the workers, every pod the ssh port") {
  api::Job job = MakeJob(JobJson("[" + Task("master", 1) + "," + Task("worker", 2) + "]"));
  auto master = RunPlugin("mpi", {"--port=2022"}, job, 0, 0);
  REQUIRE(master.ok());
  Json m(*master);
  CHECK(m.Env(0, "MPI_HOST") == "j-worker-0.j,j-worker-1.j");
  CHECK(m.Str({"spec", "containers", "0", "ports", "0", "name"}) == "mpijob-port");
  CHECK(m.At({"spec", "containers", "0", "ports", "0", "containerPort"})->GetInt() == 2022);
  auto worker = RunPlugin("mpi", {}, job, 1, 1);
  REQUIRE(worker.ok());
  Json w(*worker);
  CHECK(w.Env(0, "MPI_HOST") == "<no env>");
  CHECK(w.At({"spec", "containers", "0", "ports", "0", "containerPort"})->GetInt() == 22);
}

TEST_CASE("pytorch: MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK") {
  api::Job job = MakeJob(JobJson("[" + Task("master", 1) + "," + Task("worker", 3) + "]"));
  auto master = RunPlugin("pytorch", {}, job, 0, 0);
  REQUIRE(master.ok());
  Json m(*master);
  CHECK(m.Env(0, "MASTER_ADDR") == "j-master-0.j");
  CHECK(m.Env(0, "MASTER_PORT") == "23456");
  CHECK(m.Env(0, "WORLD_SIZE") == "4");
  CHECK(m.Env(0, "RANK") == "0");
  CHECK(m.Str({"spec", "containers", "0", "ports", "0", "name"}) == "pytorchjob-port");
  auto worker = RunPlugin("pytorch", {"--wait-master-enabled=true"}, job, 1, 2);
  REQUIRE(worker.ok());
  Json w(*worker);
  CHECK(w.Env(0, "RANK") == "3");
  CHECK(w.Str({"spec", "initContainers", "0", "name"}) == "wait-for-master");
  CHECK(w.Str({"spec", "initContainers", "0", "image"}) == "busybox:1.36.1");
}

TEST_CASE("tensorflow: TF_CONFIG names the cluster and the pod's role") {
  api::Job job = MakeJob(JobJson("[" + Task("ps", 1) + "," + Task("worker", 2) + "]"));
  auto out = RunPlugin("tensorflow", {}, job, 1, 1);
  REQUIRE(out.ok());
  Json tf(Json(*out).Env(0, "TF_CONFIG"));
  CHECK(tf.Str({"cluster", "ps", "0"}) == "j-ps-0.j:2222");
  CHECK(tf.Str({"cluster", "worker", "1"}) == "j-worker-1.j:2222");
  CHECK(tf.At({"cluster", "chief"}) == nullptr);
  CHECK(tf.Str({"task", "type"}) == "worker");
  CHECK(tf.At({"task", "index"})->GetInt() == 1);
}

TEST_CASE("unknown plugins and bad arguments are clear errors") {
  auto unknown = NewJobPlugin("horovod", {});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == StatusCode::kInvalidArgument);
  CHECK(unknown.status().message().find("unknown job plugin \"horovod\"") != std::string::npos);
  auto bad = NewJobPlugin("mpi", {"--port=abc"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("--port=abc") != std::string::npos);
  api::Job job = MakeJob(JobJson("[" + Task("t", 1) + "]", R"("plugins":{"env":[],"nope":[]})"));
  CHECK(JobPlugins(job).status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tephra::controllers::job

#include "tests/unit/scheduler/plugins/plugin_session.h"

#include <stdexcept>

#include "scheduler/builtins.h"
#include "scheduler/framework/conf.h"

namespace tephra::scheduler::testing {

namespace {

class OfferAllPlugin : public Plugin {
 public:
  std::string_view name() const override { return kOfferAllPlugin; }
  void OnSessionOpen(Session& ssn) override {
    VictimsFn all = [](const TaskInfo&, const std::vector<const TaskInfo*>& candidates)
        -> std::optional<std::vector<const TaskInfo*>> { return candidates; };
    ssn.AddPreemptableFn(name(), all);
    ssn.AddReclaimableFn(name(), all);
  }
};

}  // namespace

PluginSession::PluginSession(Harness& h, const std::string& tiers_yaml) {
  if (!RegisterBuiltins(registry_).ok()) throw std::runtime_error("builtins");
  (void)registry_.AddPlugin([](const PluginOption&) { return std::make_unique<OfferAllPlugin>(); });
  auto conf = ParseSchedulerConf("actions: allocate\ntiers:\n" + tiers_yaml, registry_.Names());
  if (!conf.ok()) throw std::runtime_error(conf.status().ToString());
  conf_ = std::move(*conf);
  SessionOptions options;
  options.uid = "plugin-test-session";
  session_ = std::make_unique<Session>(h.cache().TakeSnapshot(), conf_, registry_, options);
  session_->Open();
}

PluginSession::~PluginSession() {
  Close();
}

void PluginSession::Close() {
  if (closed_) return;
  closed_ = true;
  session_->Close();
}

size_t PluginSession::JobAt(const std::string& key) const {
  auto j = session_->JobIndex(key);
  if (!j) throw std::runtime_error("no job " + key);
  return *j;
}

const JobInfo& PluginSession::Job(const std::string& key) const {
  return session_->job(JobAt(key));
}

const QueueInfo& PluginSession::Queue(const std::string& name) const {
  const QueueInfo* q = session_->queue(name);
  if (q == nullptr) throw std::runtime_error("no queue " + name);
  return *q;
}

const TaskInfo& PluginSession::Task(const std::string& pod_key) const {
  for (size_t j = 0; j < session_->job_count(); ++j) {
    for (const auto& [uid, task] : session_->job(j).tasks) {
      if (task.pod->metadata.Key() == pod_key) return task;
    }
  }
  throw std::runtime_error("no task " + pod_key);
}

size_t PluginSession::NodeAt(const std::string& name) const {
  auto n = session_->NodeIndex(name);
  if (!n) throw std::runtime_error("no node " + name);
  return *n;
}

const NodeInfo& PluginSession::Node(const std::string& name) const {
  return session_->node(NodeAt(name));
}

Fit PluginSession::Predicate(const std::string& pod_key, const std::string& node) {
  return session_->Predicate(Task(pod_key), Node(node));
}

std::vector<double> PluginSession::Scores(const std::string& pod_key,
                                          const std::vector<std::string>& nodes) {
  std::vector<const NodeInfo*> infos;
  for (const auto& n : nodes) infos.push_back(&Node(n));
  std::vector<double> scores;
  session_->NodeScores(Task(pod_key), infos, &scores);
  return scores;
}

std::vector<const TaskInfo*> PluginSession::Tasks(const std::vector<std::string>& keys) const {
  std::vector<const TaskInfo*> out;
  for (const auto& k : keys) out.push_back(&Task(k));
  return out;
}

std::vector<std::string> PluginSession::Names(const std::vector<const TaskInfo*>& tasks) {
  std::vector<std::string> out;
  for (const TaskInfo* t : tasks) out.push_back(t->name());
  return out;
}

std::vector<std::string> PluginSession::Preemptable(const std::string& preemptor,
                                                    const std::vector<std::string>& candidates) {
  return Names(session_->Preemptable(Task(preemptor), Tasks(candidates)));
}

std::vector<std::string> PluginSession::Reclaimable(const std::string& preemptor,
                                                    const std::vector<std::string>& candidates) {
  return Names(session_->Reclaimable(Task(preemptor), Tasks(candidates)));
}

void PluginSession::Place(const std::string& pod_key, const std::string& node) {
  const TaskInfo& task = Task(pod_key);
  Statement st(*session_);
  Status s = st.Allocate(JobAt(task.job()), task.uid(), NodeAt(node));
  if (!s.ok()) throw std::runtime_error("allocate " + pod_key + ": " + s.ToString());
  st.Keep();
}

void PluginSession::Pipeline(const std::string& pod_key, const std::string& node) {
  const TaskInfo& task = Task(pod_key);
  Statement st(*session_);
  Status s = st.Pipeline(JobAt(task.job()), task.uid(), NodeAt(node));
  if (!s.ok()) throw std::runtime_error("pipeline " + pod_key + ": " + s.ToString());
  st.Keep();
}

void PluginSession::Unplace(const std::string& pod_key) {
  const TaskInfo& task = Task(pod_key);
  session_->Unallocate(JobAt(task.job()), task.uid(), NodeAt(task.node));
}

std::vector<PreBindStep> PluginSession::PreBind(const std::string& pod_key) {
  const TaskInfo& task = Task(pod_key);
  return session_->PreBindSteps(task, task.node);
}

void PluginSession::Evict(const std::string& pod_key) {
  const TaskInfo& task = Task(pod_key);
  Statement st(*session_);
  Status s = st.Evict(JobAt(task.job()), task.uid(), "test");
  if (!s.ok()) throw std::runtime_error("evict " + pod_key + ": " + s.ToString());
  st.Keep();
}

}  // namespace tephra::scheduler::testing

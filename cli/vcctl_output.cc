// vcctl's output layouts (docs/compatibility.md §6): left-aligned cells padded to fixed widths,
// never cut, every cell of a row padded (so rows may end in spaces, as vcctl's do).
#include <algorithm>
#include <ctime>

#include <rapidjson/document.h>

#include "api/labels.h"
#include "cli/vcctl.h"
#include "json/json.h"

namespace tephra::cli {
namespace {

// The cell padded with spaces to `width` (longer cells are kept whole).
void Cell(std::string& line, const std::string& text, size_t width) {
  line += text;
  if (text.size() < width) line.append(width - text.size(), ' ');
}

std::tm LocalTime(base::Time t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&secs, &tm);
  return tm;
}

std::string Strftime(base::Time t, const char* format) {
  std::tm tm = LocalTime(t);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), format, &tm);
  return std::string(buf, n);
}

// A timestamp as vcctl's view prints one: "2024-05-01 10:00:00 +0000 UTC", local time.
std::string ViewTime(const std::optional<base::Time>& t) {
  if (!t) return "0001-01-01 00:00:00 +0000 UTC";
  return Strftime(*t, "%Y-%m-%d %H:%M:%S %z %Z");
}

std::string JsonMap(const std::map<std::string, std::string>& m) {
  json::Writer w;
  w.StartObject();
  for (const auto& [k, v] : m) w.Field(k, v);
  w.EndObject();
  return w.str();
}

// "[a b]", as Go prints a list of strings.
std::string GoList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : " ") + items[i];
  return out + "]";
}

std::string QuantityOrZero(const api::ResourceList& list, std::string_view name) {
  const api::Quantity* q = list.Find(name);
  return q == nullptr ? "0" : q->String();
}

// One line of the view, indented two spaces per level.
class ViewWriter {
 public:
  void Line(int level, const std::string& text) {
    out_.append(static_cast<size_t>(level) * 2, ' ');
    out_ += text + "\n";
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

}  // namespace

std::string VcctlDate(base::Time t) {
  return Strftime(t, "%Y-%m-%d");
}

std::string VcctlDuration(base::Time since, base::Time now) {
  const int64_t s = std::chrono::duration_cast<std::chrono::seconds>(now - since).count();
  auto with = [](int64_t a, const char* ua, int64_t b, const char* ub) {
    return std::to_string(a) + ua + (b == 0 ? "" : std::to_string(b) + ub);
  };
  if (s < -1) return "<invalid>";
  if (s < 0) return "0s";
  if (s < 120) return std::to_string(s) + "s";
  const int64_t minutes = s / 60;
  if (minutes < 10) return with(minutes, "m", s % 60, "s");
  if (minutes < 180) return std::to_string(minutes) + "m";
  const int64_t hours = s / 3600;
  if (hours < 8) return with(hours, "h", minutes % 60, "m");
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) return with(hours / 24, "d", hours % 24, "h");
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) return with(hours / 24 / 365, "y", (hours / 24) % 365, "d");
  return std::to_string(hours / 24 / 365) + "y";
}

std::string VcctlJobList(const std::vector<std::shared_ptr<api::Job>>& jobs, bool all_namespaces) {
  // Name and Namespace are as wide as their longest value (or header) plus 3; the rest fixed.
  size_t name_width = std::string("Name").size();
  size_t ns_width = std::string("Namespace").size();
  for (const auto& j : jobs) {
    name_width = std::max(name_width, j->metadata.name.size());
    ns_width = std::max(ns_width, j->metadata.namespace_.size());
  }
  name_width += 3;
  ns_width += 3;
  static const size_t kWidths[] = {15, 12, 12, 12, 6, 10, 10, 12, 10, 12, 10};
  auto row = [&](const std::string& ns, const std::string& name,
                 const std::vector<std::string>& rest) {
    std::string line;
    if (all_namespaces) Cell(line, ns, ns_width);
    Cell(line, name, name_width);
    for (size_t i = 0; i < rest.size(); ++i) Cell(line, rest[i], kWidths[i]);
    return line + "\n";
  };
  std::string out = row("Namespace", "Name",
                        {"Creation", "Phase", "JobType", "Replicas", "Min", "Pending", "Running",
                         "Succeeded", "Failed", "Unknown", "RetryCount"});
  for (const auto& j : jobs) {
    std::string type = j->metadata.Label(api::kJobTypeKey);
    const api::JobStatus& st = j->status;
    out += row(
        j->metadata.namespace_, j->metadata.name,
        {j->metadata.creation_timestamp ? VcctlDate(*j->metadata.creation_timestamp) : "0001-01-01",
         st.state.phase, type.empty() ? "Batch" : type, std::to_string(j->TotalReplicas()),
         std::to_string(st.min_available), std::to_string(st.pending), std::to_string(st.running),
         std::to_string(st.succeeded), std::to_string(st.failed), std::to_string(st.unknown),
         std::to_string(st.retry_count)});
  }
  return out;
}

std::string VcctlJobView(const api::Job& job, const std::vector<VcctlEvent>& events) {
  ViewWriter w;
  const kube::ObjectMeta& m = job.metadata;
  w.Line(0, "Name:       \t" + m.name);
  w.Line(0, "Namespace:  \t" + m.namespace_);
  w.Line(0, "Labels:     \t" + (m.labels.empty() ? "<none>" : JsonMap(m.labels)));
  w.Line(0, "Annotations:\t" + (m.annotations.empty() ? "<none>" : JsonMap(m.annotations)));
  w.Line(0, "API Version:\t" + job.api_version);
  w.Line(0, "Kind:       \t" + job.kind);
  w.Line(0, "Metadata:");
  w.Line(1, "Creation Timestamp:\t" + ViewTime(m.creation_timestamp));
  w.Line(1, "Generate Name:     \t" + m.generate_name);
  w.Line(1, "Generation:        \t" + std::to_string(m.generation));
  w.Line(1, "Resource Version:  \t" + m.resource_version);
  w.Line(1, "Self Link:         \t");
  w.Line(1, "UID:               \t" + m.uid);
  w.Line(0, "Spec:");
  w.Line(1, "Min Available:     \t" + std::to_string(job.spec.min_available));
  w.Line(1, "Plugins:");
  auto plugin = [&](const char* name) {
    auto it = job.spec.plugins.find(name);
    return GoList(it == job.spec.plugins.end() ? std::vector<std::string>{} : it->second);
  };
  w.Line(2, std::string("Env:\t") + plugin("env"));
  w.Line(2, std::string("Ssh:\t") + plugin("ssh"));
  w.Line(1, "Scheduler Name:    \t" + job.spec.scheduler_name);
  w.Line(1, "Tasks:");
  for (const auto& task : job.spec.tasks) {
    // Fields Tephra does not model (command, workingDir, ...) come from the template's JSON.
    json::Document doc;
    json::Errors errors;
    if (!json::Parse(task.template_.json, &doc).ok()) (void)json::Parse("{}", &doc);
    json::Reader tmpl(&doc, &errors);
    w.Line(2, "Name:\t" + task.name);
    w.Line(2, "Replicas:\t" + std::to_string(task.replicas));
    w.Line(2, "Template:");
    w.Line(3, "Metadata:");
    w.Line(4, "Annotations:");
    const auto& ann = task.template_.metadata.annotations;
    auto annotation = [&](const char* key) {
      auto it = ann.find(key);
      return it == ann.end() ? std::string() : it->second;
    };
    w.Line(5, "Cri . Cci . Io / Container - Type:          \t" +
                  annotation("cri.cci.io/container-type"));
    w.Line(5, "Kubernetes . Io / Availablezone:            \t" +
                  annotation("kubernetes.io/availablezone"));
    w.Line(5, "Network . Alpha . Kubernetes . Io / Network:\t" +
                  annotation("network.alpha.kubernetes.io/network"));
    w.Line(4, "Creation Timestamp:\t" + ViewTime(task.template_.metadata.creation_timestamp));
    w.Line(3, "Spec:");
    w.Line(4, "Containers:");
    const auto& containers = task.template_.spec.containers;
    for (size_t i = 0; i < containers.size(); ++i) {
      const api::Container& c = containers[i];
      json::Reader raw = tmpl["spec"]["containers"][i];
      w.Line(5, "Command:");
      for (const auto& arg : raw["command"].StringList()) w.Line(6, arg);
      w.Line(5, "Image:\t" + c.image);
      w.Line(5, "Name: \t" + c.name);
      w.Line(5, "Ports:");
      for (const auto& p : c.ports) {
        w.Line(6, "Container Port:\t" + std::to_string(p.container_port));
        w.Line(6, "Name:          \t" + p.name);
      }
      w.Line(5, "Resources:");
      w.Line(6, "Limits:");
      w.Line(7, "Cpu:   \t" + QuantityOrZero(c.resources.limits, "cpu"));
      w.Line(7, "Memory:\t" + QuantityOrZero(c.resources.limits, "memory"));
      w.Line(6, "Requests:");
      w.Line(7, "Cpu:   \t" + QuantityOrZero(c.resources.requests, "cpu"));
      w.Line(7, "Memory:\t" + QuantityOrZero(c.resources.requests, "memory"));
      w.Line(6, "Working Dir:\t" + raw["workingDir"].String());
    }
    w.Line(4, "Image Pull Secrets:");
    tmpl["spec"]["imagePullSecrets"].ForEach(
        [&](const json::Reader& s) { w.Line(5, "Name:     \t" + s["name"].String()); });
    w.Line(4, "Restart Policy:   \t" + tmpl["spec"]["restartPolicy"].String());
  }
  const api::JobStatus& st = job.status;
  w.Line(0, "Status:");
  auto count = [&](const char* label, int32_t n) {
    if (n > 0) w.Line(1, label + std::to_string(n));
  };
  count("Succeeded:    \t", st.succeeded);
  count("Pending:      \t", st.pending);
  count("Running:      \t", st.running);
  count("Failed:       \t", st.failed);
  count("Terminating:  \t", st.terminating);
  count("Unknown:      \t", st.unknown);
  count("RetryCount:   \t", st.retry_count);
  count("Min Available:\t", st.min_available);
  count("Version:      \t", st.version);
  w.Line(1, "State:");
  w.Line(2, "Phase:\t" + st.state.phase);
  if (!st.controlled_resources.empty()) {
    w.Line(1, "Controlled Resources:");
    for (const auto& [k, v] : st.controlled_resources) w.Line(2, k + ": \t" + v);
  }
  if (!st.conditions.empty()) {
    w.Line(1, "Conditions:\n    Status\tTransitionTime");
    for (const auto& c : st.conditions)
      w.Line(2, c.status + " \t" + ViewTime(c.last_transition_time) + " ");
  }
  if (events.empty()) {
    w.Line(0, "Events: \t<none>");
    return w.str();
  }
  auto event_line = [](const VcctlEvent& e) {
    std::string line;
    Cell(line, e.type, 15);
    line += "\t";
    Cell(line, e.reason, 40);
    line += "\t";
    Cell(line, e.age, 30);
    line += "\t";
    Cell(line, e.source, 40);
    return line + "\t" + e.message;
  };
  w.Line(0, "Events:\n" + event_line({"Type", "Reason", "Age", "Form", "Message"}));
  w.Line(0, event_line({"-------", "-------", "-------", "-------", "-------"}));
  for (const auto& e : events) w.Line(0, event_line(e));
  return w.str();
}

std::string VcctlQueueList(const std::vector<std::shared_ptr<api::Queue>>& queues,
                           const std::map<std::string, VcctlPhaseCounts>& counts) {
  auto row = [](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) Cell(line, cells[i], i == 0 ? 25 : 8);
    return line + "\n";
  };
  std::string out = row({"Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running",
                         "Unknown", "Completed"});
  for (const auto& q : queues) {
    auto it = counts.find(q->metadata.name);
    auto n = [&](const char* phase) {
      if (it == counts.end()) return std::string("0");
      auto p = it->second.find(phase);
      return std::to_string(p == it->second.end() ? 0 : p->second);
    };
    out += row({q->metadata.name, std::to_string(q->spec.weight), q->status.state, q->spec.parent,
                n("Inqueue"), n("Pending"), n("Running"), n("Unknown"), n("Completed")});
  }
  return out;
}

std::string VcctlPodList(const std::vector<std::shared_ptr<api::Pod>>& pods, base::Time now) {
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> width(5, 0);
  for (const auto& pod : pods) {
    const api::PodStatus& st = pod->status;
    // The status column as kubectl get pods words it, for the cases Tephra models.
    std::string reason = st.reason.empty() ? st.phase : st.reason;
    int ready = 0;
    int restarts = 0;
    bool running = false;
    for (auto it = st.container_statuses.rbegin(); it != st.container_statuses.rend(); ++it) {
      restarts += it->restart_count;
      const api::ContainerState& s = it->state;
      if (s.kind == api::ContainerState::Kind::kWaiting && !s.reason.empty()) {
        reason = s.reason;
      } else if (s.kind == api::ContainerState::Kind::kTerminated && !s.reason.empty()) {
        reason = s.reason;
      } else if (s.kind == api::ContainerState::Kind::kTerminated) {
        reason = "ExitCode:" + std::to_string(s.exit_code);
      } else if (it->ready && s.kind == api::ContainerState::Kind::kRunning) {
        running = true;
        ++ready;
      }
    }
    if (reason == "Completed" && running) reason = "Running";
    if (pod->metadata.deletion_timestamp && st.phase != "Succeeded" && st.phase != "Failed")
      reason = "Terminating";
    std::vector<std::string> row{
        pod->metadata.name,
        std::to_string(ready) + "/" + std::to_string(pod->spec.containers.size()), reason,
        std::to_string(restarts),
        pod->metadata.creation_timestamp ? VcctlDuration(*pod->metadata.creation_timestamp, now)
                                         : "<unknown>"};
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    rows.push_back(std::move(row));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t i = 0; i < cells.size(); ++i) Cell(l, cells[i], width[i] + 8);
    return l + "\n";
  };
  std::string out = line({"Name", "Ready", "Status", "Restart", "Age"});
  for (const auto& r : rows) out += line(r);
  return out;
}

}  // namespace tephra::cli

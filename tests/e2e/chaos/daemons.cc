#include "tests/e2e/chaos/daemons.h"

#include <csignal>
#include <fstream>
#include <sstream>

#include <rapidjson/document.h>

#include "json/json.h"

namespace tephra::chaos {

void Replica::Start() {
  std::ifstream in(log_, std::ios::ate);
  log_offset_ = in ? static_cast<long>(in.tellg()) : 0;
  process_ = std::make_unique<testing::BackgroundProcess>(argv_, log_);
  ++incarnation_;
  if (!process_->started()) process_.reset();
}

std::optional<int> Replica::Reap() {
  if (!process_) return std::nullopt;
  int status = process_->Wait(std::chrono::milliseconds(0));
  if (status < 0) return std::nullopt;
  process_.reset();
  return status;
}

void Replica::Kill() {
  if (!process_) return;
  process_->Signal(SIGKILL);
  process_->Wait(std::chrono::seconds(10));
  process_.reset();
}

std::optional<long> Replica::RssKiB() const {
  if (!process_) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(process_->pid()) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return std::nullopt;
}

bool Replica::Acquired(const std::string& identity) const {
  std::ifstream in(log_);
  in.seekg(log_offset_);
  // kube/leader_election.cc: "leader election: <identity> acquired lease <ns>/<name>"
  const std::string needle = identity + " acquired lease";
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string Replica::LogTail(size_t lines) const {
  std::ifstream in(log_);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += all[i] + "\n";
  return out;
}

std::string DaemonGroup::Holder(kube::Client& client) const {
  if (lease_name.empty()) return "";
  StatusOr<std::string> text = client.Get(kube::resources::kLeases, lease_namespace, lease_name);
  if (!text.ok()) return "";
  json::Document doc;
  if (!json::Parse(*text, &doc).ok()) return "";
  json::Errors errors;
  return json::Reader(&doc, &errors)["spec"]["holderIdentity"].String();
}

int DaemonGroup::LeaderIndex(kube::Client& client) const {
  std::string holder = Holder(client);
  if (holder.empty()) return -1;
  for (size_t i = 0; i < replicas.size(); ++i) {
    if (replicas[i]->running() && replicas[i]->Acquired(holder)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace tephra::chaos

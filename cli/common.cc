#include "cli/common.h"

#include <algorithm>
#include <cctype>

#include "api/batch.h"
#include "api/kinds.h"
#include "api/scheduling.h"

namespace tephra::cli {

StatusOr<api::ResourceList> ParseResourceList(const std::string& flag, const std::string& text) {
  api::ResourceList out;
  if (text.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(',', start);
    std::string item =
        text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("--" + flag + ": \"" + item +
                             "\" is not NAME=QUANTITY (e.g. cpu=500m,memory=1Gi)");
    }
    StatusOr<api::Quantity> q = api::Quantity::Parse(item.substr(eq + 1));
    if (!q.ok())
      return InvalidArgument("--" + flag + ": " + item.substr(0, eq) + ": " + q.status().message());
    if (q->Sign() < 0)
      return InvalidArgument("--" + flag + ": " + item.substr(0, eq) + " must not be negative");
    out.Set(item.substr(0, eq), *q);
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

StatusOr<api::StaticQueueLookup> ListQueues(kube::Client& client) {
  api::StaticQueueLookup lookup;
  StatusOr<std::string> listed = client.ListAll(api::kQueues, "", {}, [&](const json::Value& v) {
    StatusOr<std::shared_ptr<api::Queue>> q = api::DecodeQueue(v);
    if (!q.ok()) return q.status();
    lookup.Put(*q);
    return Status::Ok();
  });
  if (!listed.ok()) return listed.status();
  return lookup;
}

kube::OwnerReference ObjectRef(const kube::Object& object) {
  kube::OwnerReference ref;
  ref.api_version = object.api_version;
  ref.kind = object.kind;
  ref.name = object.metadata.name;
  ref.uid = object.metadata.uid;
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

StatusOr<std::string> IssueCommand(kube::Client& client, const std::string& ns,
                                   const kube::OwnerReference& target, std::string_view action) {
  api::Command cmd;
  cmd.api_version = std::string(api::kBusApiVersion);
  cmd.kind = std::string(api::kCommandKind);
  std::string lower(action);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  cmd.metadata.generate_name = target.name + "-" + lower + "-";
  cmd.metadata.namespace_ = ns;
  cmd.metadata.owner_references.push_back(target);
  cmd.action = std::string(action);
  cmd.target = target;
  TEPHRA_ASSIGN_OR_RETURN(std::string created,
                          client.Create(api::kCommands, ns, api::EncodeCommand(cmd)));
  StatusOr<std::shared_ptr<api::Command>> decoded = api::DecodeCommand(created);
  if (!decoded.ok()) return decoded.status();
  return (*decoded)->metadata.name;
}

}  // namespace tephra::cli

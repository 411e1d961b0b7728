#include "cli/common.h"

#include <algorithm>
#include <cctype>

#include "api/batch.h"
#include "api/defaulting.h"
#include "api/kinds.h"
#include "api/resources.h"
#include "api/scheduling.h"
#include "cli/cli.h"

namespace tephra::cli {

StatusOr<api::ResourceList> ParseResourceList(const std::string& flag, const std::string& text) {
  StatusOr<api::ResourceList> list = api::ParseResourceList(text);
  if (!list.ok()) return InvalidArgument("--" + flag + ": " + list.status().message());
  for (const auto& [name, quantity] : *list) {
    if (quantity.Sign() < 0)
      return InvalidArgument("--" + flag + ": " + name + " must not be negative");
  }
  return list;
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

StatusOr<std::string> IssueJobCommand(kube::Client& client, const std::string& ns,
                                      const std::string& name, std::string_view action) {
  TEPHRA_ASSIGN_OR_RETURN(std::string text, client.Get(api::kJobs, ns, name));
  TEPHRA_ASSIGN_OR_RETURN(std::shared_ptr<api::Job> job, api::DecodeJob(text));
  StatusOr<std::string> issued = IssueCommand(client, ns, ObjectRef(*job), action);
  if (!issued.ok())
    return issued.status().WithContext("creating the " + std::string(action) + " command");
  return issued;
}

Status DeleteJob(kube::Client& client, const std::string& ns, const std::string& name) {
  kube::DeleteOptions d;
  d.propagation_policy = "Background";
  return client.Delete(api::kJobs, ns, name, d);
}

StatusOr<std::string> IssueQueueCommand(kube::Client& client, const std::string& command_ns,
                                        const std::string& name, std::string_view action) {
  StatusOr<std::string> text = client.Get(api::kQueues, "", name);
  if (!text.ok()) return Describe(text.status(), "queue " + name);
  TEPHRA_ASSIGN_OR_RETURN(std::shared_ptr<api::Queue> q, api::DecodeQueue(*text));
  return IssueCommand(client, command_ns, ObjectRef(*q), action);
}

Status CreateQueue(kube::Client& client, api::Queue& queue) {
  api::ApplyQueueDefaults(&queue);
  StatusOr<api::StaticQueueLookup> queues = ListQueues(client);
  if (!queues.ok()) return Describe(queues.status(), "listing queues");
  api::FieldErrors errors = api::ValidateQueueCreate(queue, *queues);
  const std::string& name = queue.metadata.name;
  if (!errors.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "queue " + name + " refused: " + api::FormatFieldErrors(errors));
  }
  StatusOr<std::string> created = client.Create(api::kQueues, "", api::EncodeQueue(queue));
  return created.ok() ? Status::Ok() : Describe(created.status(), "creating queue " + name);
}

Status DeleteQueue(kube::Client& client, const std::string& name) {
  TEPHRA_ASSIGN_OR_RETURN(std::string text, client.Get(api::kQueues, "", name));
  TEPHRA_ASSIGN_OR_RETURN(std::shared_ptr<api::Queue> q, api::DecodeQueue(text));
  TEPHRA_ASSIGN_OR_RETURN(api::StaticQueueLookup queues, ListQueues(client));
  api::FieldErrors errors = api::ValidateQueueDelete(*q, queues);
  if (!errors.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "queue " + name + " cannot be deleted: " + api::FormatFieldErrors(errors));
  }
  return client.Delete(api::kQueues, "", name);
}

StatusOr<PhaseCounts> CountPodGroups(kube::Client& client) {
  PhaseCounts counts;
  StatusOr<std::string> listed = client.ListAll(api::kPodGroups, "", {}, [&](const json::Value& v) {
    StatusOr<std::shared_ptr<api::PodGroup>> pg = api::DecodePodGroup(v);
    if (!pg.ok()) return pg.status();
    std::string queue =
        (*pg)->spec.queue.empty() ? std::string(api::kDefaultQueue) : (*pg)->spec.queue;
    std::string phase = (*pg)->status.phase.empty() ? "Pending" : (*pg)->status.phase;
    ++counts[queue][phase];
    return Status::Ok();
  });
  if (!listed.ok()) return listed.status();
  return counts;
}

}  // namespace tephra::cli

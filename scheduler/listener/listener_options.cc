#include "scheduler/listener/listener_options.h"

#include "kube/daemon.h"

namespace tephra::scheduler {
namespace {

// 127.0.0.0/8, ::1 or localhost: reachable from this host (or pod) only.
bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

Status CheckListenerOptions(std::string_view address_flag, const std::string& address,
                            const AdminServerOptions& options) {
  const std::string flag(address_flag);
  TEPHRA_ASSIGN_OR_RETURN(auto host_port, kube::SplitHostPort(flag, address));
  if (!IsLoopback(host_port.first) && options.tls_client_ca_file.empty() &&
      !options.allow_anonymous) {
    return InvalidArgument(
        "--" + flag + " " + address +
        ": beyond loopback anyone who connects could read the cluster's jobs and queues; require "
        "client certificates (--admin-tls-cert, --admin-tls-key, --admin-tls-client-ca) or "
        "accept anonymous clients with --admin-allow-anonymous");
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty())
    return InvalidArgument("--admin-tls-cert and --admin-tls-key must be given together");
  if (!options.tls_client_ca_file.empty() && options.tls_cert_file.empty())
    return InvalidArgument("--admin-tls-client-ca needs --admin-tls-cert and --admin-tls-key");
  return Status::Ok();
}

}  // namespace tephra::scheduler

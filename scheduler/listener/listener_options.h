// The options of the scheduler's read-only listeners, the gRPC admin API (scheduler/admin/) and
// the web dashboard (scheduler/dashboard/), and the rules both follow. Both take their TLS and
// client-certificate settings from the --admin-* flags, hence the name of the struct. A home of
// its own so the dashboard, an HTTP server, does not link the gRPC one.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace tephra::scheduler {

struct AdminServerOptions {
  std::string address;  // host:port; port 0 picks a free one
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;  // require client certificates signed by this CA
  // Serve clients without a certificate on an address beyond loopback. Off: such an address
  // needs tls_client_ca_file, as anyone reaching it could read a cluster-wide snapshot.
  bool allow_anonymous = false;
};

// The rules every admin listener (the gRPC API, the dashboard) follows, errors naming the flags:
// beyond loopback, client certificates or --admin-allow-anonymous; certificate and key together;
// a client CA only with them. `address_flag` names the listener's address flag.
Status CheckListenerOptions(std::string_view address_flag, const std::string& address,
                            const AdminServerOptions& options);

}  // namespace tephra::scheduler

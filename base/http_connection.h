// One client connection of the HTTP server (http_server.h), a "session": it reads requests
// (parsing, header and body limits, the read and idle timeouts, keep-alive, Expect:
// 100-continue), hands each to its handler inline or on the server's workers under the handler
// timeout, writes the answer under the write timeout, and lingers before it closes. The server
// (http_server.cc) accepts connections and owns what they share, which a connection reaches
// through SessionHost. A private header of base/: only the server's files include it, as it
// brings Boost.Asio's TCP socket.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>

#include "base/http_server.h"
#include "base/http_worker_pool.h"
#include "sync/mutex.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace tephra::base::internal {

// How long a connection lingers after its last response while the server stops, and how long
// Stop() waits for handlers that have not finished.
inline constexpr std::chrono::milliseconds kStopLingerTimeout(100);

// Case-insensitive ASCII comparison, as header names compare.
bool IEquals(std::string_view a, std::string_view b);
// An HTTP token (RFC 9110): what a method or a header name may be.
bool IsToken(std::string_view s);
// "127.0.0.1:8443", "[::1]:8443".
std::string FormatEndpoint(const boost::asio::ip::tcp::endpoint& ep);

// What the server needs from a connection, whatever its stream type.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  // Begins serving; called once, after the server has registered the connection.
  virtual void Start() = 0;
  // Called from any thread when the server stops.
  virtual void NotifyStopping() = 0;
  // Called from any thread to make room for a new connection: closes this one if it is still
  // idle (no request begun).
  virtual void Evict() = 0;

  // Since when the connection has been waiting for a request to begin (steady clock, ns); 0
  // while a request is being read, handled or answered. Read by the acceptor to pick the
  // connection to evict when the limit is reached.
  std::atomic<int64_t> idle_since_ns{0};

 protected:
  void MarkIdle() { idle_since_ns = std::chrono::steady_clock::now().time_since_epoch().count(); }
  void MarkBusy() { idle_since_ns = 0; }
};

// A registered handler. Shared, so that work left running after Stop() keeps it alive.
struct RouteEntry {
  std::shared_ptr<const HttpHandler> handler;
  Dispatch dispatch = Dispatch::kWorkers;
};

// Handler results reach their connection through this gate; Stop() closes it before the event
// loop goes away, so a handler finishing later touches nothing of the server.
struct DeliveryGate {
  sync::Mutex mu;
  bool open GUARDED_BY(mu) = true;
};

// What a connection needs from its server.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  virtual const HttpServerOptions& options() const = 0;
  virtual bool stopping() const = 0;
  // The handler for the request, or nullptr with the 404/405 answer in *error.
  virtual const RouteEntry* Route(const HttpRequest& request, HttpResponse* error) const = 0;
  // Queues work on the handler workers (the large-request ones for a body over
  // large_request_bytes); false when they and their queue are full.
  virtual bool Submit(std::function<void()> work,
                      std::shared_ptr<const std::atomic<bool>> cancelled, size_t body_bytes) = 0;
  virtual ByteBudget& budget() = 0;
  virtual std::shared_ptr<DeliveryGate> gate() const = 0;
  // The answer to a request refused with 429 or 503 because the server is busy.
  virtual HttpResponse Busy(const HttpRequest& request, int status) const = 0;
  virtual void CountOverBudget() = 0;
  virtual void CountTimedOut() = 0;
  // A connection ended (called from its destructor).
  virtual void Unregister(SessionBase* session) = 0;
};

// A connection over an accepted socket, on the socket's executor (a strand): HTTPS with
// `tls`, whose context it keeps for its life, plain HTTP without. `server` outlives it.
std::shared_ptr<SessionBase> NewSession(SessionHost* server, boost::asio::ip::tcp::socket socket,
                                        std::shared_ptr<boost::asio::ssl::context> tls);

}  // namespace tephra::base::internal

// Boost.Beast transport: HTTP/1.1 over TLS (or plain TCP for http:// servers), a pool of
// keep-alive connections, per-request timeouts, and streaming bodies for WATCH.
//
// Threading: every connection has its own io_context, and the thread that uses the connection
// runs it until its operation finishes. A request or a watch read thus costs no hand-off to
// another thread and back (two context switches each, which were ~40% of the scheduler's CPU);
// it sleeps only while waiting for the network. A connection belongs to one caller at a time;
// only Close of a stream comes from another thread, posted into the io_context.
#include <array>
#include <atomic>
#include <cerrno>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <sys/resource.h>
#include <sys/socket.h>
#include <variant>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <glog/logging.h>

#include "kube/transport.h"
#include "sync/mutex.h"

namespace tephra::kube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);

struct ServerAddress {
  bool tls = true;
  std::string host;  // without brackets
  std::string port;
  std::string host_header;  // "host:port" as sent in Host
  std::string base_path;    // path prefix of the server URL, without trailing '/'
};

StatusOr<ServerAddress> ParseServer(const std::string& url) {
  ServerAddress a;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    a.tls = false;
    rest = url.substr(7);
  } else {
    return InvalidArgument("server URL \"" + url + "\" must start with https:// or http://");
  }
  size_t slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  if (slash != std::string::npos) {
    a.base_path = rest.substr(slash);
    while (!a.base_path.empty() && a.base_path.back() == '/') a.base_path.pop_back();
  }
  if (hostport.empty()) return InvalidArgument("server URL \"" + url + "\" has no host");
  if (hostport[0] == '[') {
    size_t close = hostport.find(']');
    if (close == std::string::npos) return InvalidArgument("server URL \"" + url + "\": bad IPv6");
    a.host = hostport.substr(1, close - 1);
    if (close + 1 < hostport.size() && hostport[close + 1] == ':')
      a.port = hostport.substr(close + 2);
  } else {
    size_t colon = hostport.rfind(':');
    a.host = hostport.substr(0, colon);
    if (colon != std::string::npos) a.port = hostport.substr(colon + 1);
  }
  if (a.port.empty()) a.port = a.tls ? "443" : "80";
  for (char c : a.port) {
    if (c < '0' || c > '9') return InvalidArgument("server URL \"" + url + "\": bad port");
  }
  a.host_header = hostport;
  return a;
}

Status FromBeast(const beast::error_code& ec, std::string_view what) {
  if (ec == beast::error::timeout) return DeadlineExceeded(std::string(what) + ": timed out");
  if (ec == asio::error::operation_aborted) return Cancelled(std::string(what) + ": cancelled");
  return Unavailable(std::string(what) + ": " + ec.message());
}

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Runs `op` on `ctx` on the calling thread until it and everything it left behind (cancelled
// timer waits) have finished.
template <typename T>
T RunHere(asio::io_context& ctx, awaitable<T> op) {
  std::optional<T> out;
  std::exception_ptr error;
  asio::co_spawn(ctx, std::move(op), [&](std::exception_ptr e, T value) {
    error = e;
    if (!e) out.emplace(std::move(value));
  });
  ctx.restart();
  ctx.run();
  if (error) std::rethrow_exception(error);
  return std::move(*out);
}

// One TCP (or TLS) connection, its io_context and read buffer. Owned by one caller at a time.
struct Connection {
  explicit Connection(ssl::context* tls_ctx) {
    if (tls_ctx != nullptr) {
      stream.emplace<TlsStream>(ctx, *tls_ctx);
    } else {
      stream.emplace<beast::tcp_stream>(ctx);
    }
  }
  beast::tcp_stream& lowest() {
    if (auto* t = std::get_if<TlsStream>(&stream)) return beast::get_lowest_layer(*t);
    return std::get<beast::tcp_stream>(stream);
  }

  // Whether the connection can carry another request after sitting idle. An idle connection
  // has nothing to read: readable bytes mean the server closed it (EOF, a TLS close_notify) or
  // broke it. kube-apiserver closes connections idle for 90 s.
  bool StillOpen() {
    char byte;
    ssize_t n = ::recv(lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  asio::io_context ctx;  // first: the stream's I/O objects need it until they are gone
  std::variant<std::monostate, beast::tcp_stream, TlsStream> stream;
  beast::flat_buffer buffer;
  std::chrono::steady_clock::time_point idle_since;
};

using Request = http::request<http::string_body>;

struct ExchangeResult {
  Status status;
  ApiResponse response;
  bool keep_alive = false;
  bool stale = false;  // failed before any response byte: the connection was dead already
};

template <typename Stream>
awaitable<ExchangeResult> ExchangeOn(Stream& s, Connection& c, const Request& req,
                                     std::chrono::milliseconds timeout) {
  ExchangeResult out;
  c.lowest().expires_after(timeout);
  auto [wec, written] = co_await http::async_write(s, req, kUseTuple);
  (void)written;
  if (wec) {
    out.status = FromBeast(wec, "sending request");
    out.stale = true;
    co_return out;
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);  // LIST responses can be large; the page size bounds them
  auto [rec, read] = co_await http::async_read(s, c.buffer, parser, kUseTuple);
  (void)read;
  if (rec) {
    out.stale = !parser.got_some() && rec != beast::error::timeout;
    out.status = FromBeast(rec, "reading response");
    co_return out;
  }
  auto& res = parser.get();
  out.response.status = static_cast<int>(res.result_int());
  out.response.body = std::move(res.body());
  out.response.content_type = std::string(res[http::field::content_type]);
  auto retry = res[http::field::retry_after];
  if (!retry.empty()) {
    int seconds = 0;
    bool digits = true;
    for (char ch : retry) {
      if (ch < '0' || ch > '9') {
        digits = false;
        break;
      }
      seconds = seconds * 10 + (ch - '0');
      if (seconds > 3600) break;
    }
    if (digits) out.response.retry_after = std::chrono::seconds(seconds);
  }
  out.keep_alive = res.keep_alive();
  out.status = Status::Ok();
  co_return out;
}

awaitable<ExchangeResult> Exchange(Connection& c, const Request& req,
                                   std::chrono::milliseconds timeout) {
  if (auto* t = std::get_if<TlsStream>(&c.stream))
    co_return co_await ExchangeOn(*t, c, req, timeout);
  co_return co_await ExchangeOn(std::get<beast::tcp_stream>(c.stream), c, req, timeout);
}

// The state of one WATCH-style response: the connection plus an incremental parser.
struct StreamState {
  std::unique_ptr<Connection> conn;
  http::response_parser<http::buffer_body> parser;
  std::chrono::milliseconds idle_timeout{0};
  std::array<char, 64 * 1024> chunk{};
  std::atomic<bool> closed{false};

  template <typename Stream>
  awaitable<Status> ReadHeaderOn(Stream& s, const Request& req) {
    conn->lowest().expires_after(idle_timeout);
    auto [wec, written] = co_await http::async_write(s, req, kUseTuple);
    (void)written;
    if (wec) co_return FromBeast(wec, "sending watch request");
    parser.body_limit(boost::none);
    auto [rec, read] = co_await http::async_read_header(s, conn->buffer, parser, kUseTuple);
    (void)read;
    if (rec) co_return FromBeast(rec, "reading watch response headers");
    co_return Status::Ok();
  }

  template <typename Stream>
  awaitable<StatusOr<size_t>> ReadSomeOn(Stream& s) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    conn->lowest().expires_after(idle_timeout);
    auto [ec, n] = co_await http::async_read_some(s, conn->buffer, parser, kUseTuple);
    (void)n;
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      if (closed) co_return Cancelled("stream closed");
      co_return FromBeast(ec, "reading watch stream");
    }
    // One read returns one HTTP chunk (one watch event) even when more have arrived. Parse what
    // is already buffered too, so that a busy watch hands over many events per Read instead
    // of one.
    while (conn->buffer.size() > 0 && parser.get().body().size > 0 && !parser.is_done()) {
      beast::error_code pec;
      size_t used = parser.put(conn->buffer.data(), pec);
      conn->buffer.consume(used);
      if (pec == http::error::need_more || pec == http::error::need_buffer) break;
      if (pec) co_return FromBeast(pec, "reading watch stream");
      if (used == 0) break;
    }
    co_return chunk.size() - parser.get().body().size;
  }

  awaitable<Status> ReadHeader(const Request& req) {
    if (auto* t = std::get_if<TlsStream>(&conn->stream)) co_return co_await ReadHeaderOn(*t, req);
    co_return co_await ReadHeaderOn(std::get<beast::tcp_stream>(conn->stream), req);
  }

  awaitable<StatusOr<size_t>> ReadSome() {
    if (auto* t = std::get_if<TlsStream>(&conn->stream)) co_return co_await ReadSomeOn(*t);
    co_return co_await ReadSomeOn(std::get<beast::tcp_stream>(conn->stream));
  }
};

class HttpResponseStream : public ResponseStream {
 public:
  // `owner` keeps the transport, whose TLS context the stream uses, alive as long as the stream.
  HttpResponseStream(std::unique_ptr<StreamState> state, std::shared_ptr<Transport> owner)
      : state_(std::move(state)), owner_(std::move(owner)) {}
  ~HttpResponseStream() override { Close(); }

  int status() const override { return static_cast<int>(state_->parser.get().result_int()); }

  StatusOr<bool> Read(std::string* out) override {
    while (true) {
      if (state_->closed) return Cancelled("stream closed");
      if (state_->parser.is_done()) return false;
      StatusOr<size_t> n = RunHere(state_->conn->ctx, state_->ReadSome());
      if (!n.ok()) return n.status();
      if (*n > 0) {
        out->append(state_->chunk.data(), *n);
        return true;
      }
    }
  }

  void Close() override {
    if (state_->closed.exchange(true)) return;
    // Runs inside a Read that is blocked or the next one; if none comes, the io_context is
    // destroyed with the handler unrun. A raw pointer: the handler must not keep the
    // connection, which owns it, alive.
    Connection* conn = state_->conn.get();
    asio::post(conn->ctx, [conn] {
      beast::error_code ignored;
      conn->lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
      conn->lowest().close();
    });
  }

 private:
  std::unique_ptr<StreamState> state_;
  std::shared_ptr<Transport> owner_;
};

// Each connection holds four descriptors (socket, epoll, eventfd, timerfd) and a daemon keeps
// hundreds of connections, past the usual soft limit of 1,024. Raise the soft limit to the hard
// one once per process, as the Go runtime does for kube-scheduler.
void RaiseOpenFileLimit() {
  static std::once_flag once;
  std::call_once(once, [] {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) PLOG(WARNING) << "raising the open-file limit";
  });
}

class HttpTransport : public Transport, public std::enable_shared_from_this<HttpTransport> {
 public:
  HttpTransport(RestConfig config, TransportOptions options, ServerAddress address)
      : config_(std::move(config)), options_(options), address_(std::move(address)) {}

  Status Init() {
    RaiseOpenFileLimit();
    if (address_.tls) {
      tls_ = std::make_unique<ssl::context>(ssl::context::tls_client);
      tls_->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                        ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
      beast::error_code ec;
      if (config_.insecure_skip_tls_verify) {
        tls_->set_verify_mode(ssl::verify_none);
      } else {
        tls_->set_verify_mode(ssl::verify_peer);
        if (!config_.ca_pem.empty()) {
          tls_->add_certificate_authority(asio::buffer(config_.ca_pem), ec);
          if (ec) return InvalidArgument("certificate authority: " + ec.message());
        } else {
          tls_->set_default_verify_paths(ec);
          if (ec) return InvalidArgument("system certificate store: " + ec.message());
        }
      }
      if (!config_.client_cert_pem.empty()) {
        tls_->use_certificate_chain(asio::buffer(config_.client_cert_pem), ec);
        if (ec) return InvalidArgument("client certificate: " + ec.message());
        tls_->use_private_key(asio::buffer(config_.client_key_pem), ssl::context::pem, ec);
        if (ec) return InvalidArgument("client key: " + ec.message());
      }
    }
    return Status::Ok();
  }

  StatusOr<ApiResponse> RoundTrip(const ApiRequest& request) override {
    TEPHRA_ASSIGN_OR_RETURN(Request req, Build(request));
    auto timeout = request.timeout.count() > 0 ? request.timeout : config_.timeout;
    bool fresh = false;
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<Connection> conn = fresh ? nullptr : TakeIdle();
      bool reused = conn != nullptr;
      if (!conn) {
        TEPHRA_ASSIGN_OR_RETURN(conn, Connect());
      }
      ExchangeResult result = RunHere(conn->ctx, Exchange(*conn, req, timeout));
      if (result.status.ok()) {
        if (result.keep_alive) PutIdle(std::move(conn));
        return std::move(result.response);
      }
      // A pooled connection the server closed after TakeIdle looked at it fails before any
      // response byte; the request never reached the server, so one retry is safe. It goes on
      // a new connection: the other pooled ones may have been closed at the same moment.
      if (reused && result.stale && attempt == 0) {
        fresh = true;
        continue;
      }
      return result.status;
    }
  }

  StatusOr<std::unique_ptr<ResponseStream>> Stream(const ApiRequest& request) override {
    TEPHRA_ASSIGN_OR_RETURN(Request req, Build(request));
    auto state = std::make_unique<StreamState>();
    state->idle_timeout = request.timeout.count() > 0 ? request.timeout : config_.timeout;
    TEPHRA_ASSIGN_OR_RETURN(state->conn, Connect());
    TEPHRA_RETURN_IF_ERROR(RunHere(state->conn->ctx, state->ReadHeader(req)));
    return std::unique_ptr<ResponseStream>(
        std::make_unique<HttpResponseStream>(std::move(state), shared_from_this()));
  }

 private:
  StatusOr<std::string> Token() {
    if (!config_.bearer_token.empty()) return config_.bearer_token;
    if (config_.bearer_token_file.empty()) return std::string();
    sync::MutexLock l(token_mu_);
    auto now = std::chrono::steady_clock::now();
    if (token_.empty() || now - token_read_ > std::chrono::minutes(1)) {
      std::ifstream in(config_.bearer_token_file);
      if (!in) {
        if (!token_.empty()) return token_;  // keep the last good token
        return Unavailable("cannot read token file " + config_.bearer_token_file);
      }
      std::stringstream ss;
      ss << in.rdbuf();
      std::string t = ss.str();
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
      token_ = t;
      token_read_ = now;
    }
    return token_;
  }

  StatusOr<Request> Build(const ApiRequest& in) {
    http::verb verb = http::string_to_verb(in.method);
    if (verb == http::verb::unknown) return InvalidArgument("unknown HTTP method " + in.method);
    Request req{verb, address_.base_path + in.target, 11};
    req.set(http::field::host, address_.host_header);
    req.set(http::field::user_agent, config_.user_agent);
    req.set(http::field::accept, "application/json");
    TEPHRA_ASSIGN_OR_RETURN(std::string token, Token());
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    if (!config_.impersonate_user.empty()) req.set("Impersonate-User", config_.impersonate_user);
    for (const auto& [k, v] : in.headers) req.set(k, v);
    if (!in.body.empty() || verb == http::verb::post || verb == http::verb::put ||
        verb == http::verb::patch) {
      if (!in.content_type.empty()) req.set(http::field::content_type, in.content_type);
      req.body() = in.body;
    }
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

  // The most recently used pooled connection that is still open. The pool is ordered by last
  // use, so once the newest is too old to trust, all are.
  std::unique_ptr<Connection> TakeIdle() {
    const auto oldest = std::chrono::steady_clock::now() - options_.max_idle_age;
    sync::MutexLock l(idle_mu_);
    while (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      if (c->idle_since < oldest) {
        idle_.clear();
        return nullptr;
      }
      if (c->StillOpen()) return c;
    }
    return nullptr;
  }

  void PutIdle(std::unique_ptr<Connection> c) {
    c->idle_since = std::chrono::steady_clock::now();
    sync::MutexLock l(idle_mu_);
    if (idle_.size() < options_.max_idle_connections) idle_.push_back(std::move(c));
  }

  StatusOr<std::unique_ptr<Connection>> Connect() {
    auto conn = std::make_unique<Connection>(tls_.get());
    TEPHRA_RETURN_IF_ERROR(RunHere(conn->ctx, DoConnect(*conn)));
    return conn;
  }

  awaitable<Status> DoConnect(Connection& c) {
    // Resolved synchronously: an asynchronous resolve starts a helper thread per io_context.
    tcp::resolver resolver(c.ctx);
    beast::error_code rec;
    auto endpoints = resolver.resolve(address_.host, address_.port, rec);
    if (rec) co_return Unavailable("resolving " + address_.host + ": " + rec.message());
    c.lowest().expires_after(options_.connect_timeout);
    auto [cec, ep] = co_await c.lowest().async_connect(endpoints, kUseTuple);
    (void)ep;
    if (cec) co_return FromBeast(cec, "connecting to " + address_.host_header);
    c.lowest().socket().set_option(tcp::no_delay(true));
    if (auto* t = std::get_if<TlsStream>(&c.stream)) {
      std::string name = config_.tls_server_name.empty() ? address_.host : config_.tls_server_name;
      beast::error_code ignored;
      asio::ip::make_address(name, ignored);
      if (ignored) {  // SNI only for names, never for IP literals
        // SSL_set_tlsext_host_name is a macro with a C cast; call what it expands to.
        SSL_ctrl(t->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char*>(name.c_str()));
      }
      if (!config_.insecure_skip_tls_verify)
        t->set_verify_callback(ssl::host_name_verification(name));
      auto [hec] = co_await t->async_handshake(ssl::stream_base::client, kUseTuple);
      if (hec) co_return FromBeast(hec, "TLS handshake with " + address_.host_header);
    }
    co_return Status::Ok();
  }

  RestConfig config_;
  TransportOptions options_;
  ServerAddress address_;
  std::unique_ptr<ssl::context> tls_;

  sync::Mutex idle_mu_;
  std::vector<std::unique_ptr<Connection>> idle_ GUARDED_BY(idle_mu_);

  sync::Mutex token_mu_;
  std::string token_ GUARDED_BY(token_mu_);
  std::chrono::steady_clock::time_point token_read_ GUARDED_BY(token_mu_);
};

}  // namespace

StatusOr<std::shared_ptr<Transport>> NewHttpTransport(const RestConfig& config,
                                                      const TransportOptions& options) {
  TEPHRA_ASSIGN_OR_RETURN(ServerAddress address, ParseServer(config.server));
  auto t = std::make_shared<HttpTransport>(config, options, std::move(address));
  TEPHRA_RETURN_IF_ERROR(t->Init());
  return std::shared_ptr<Transport>(std::move(t));
}

}  // namespace tephra::kube

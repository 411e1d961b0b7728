#include "base/http_server.h"

#include <sys/stat.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <ctime>
#include <limits>
#include <map>
#include <thread>
#include <type_traits>
#include <unordered_map>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <glog/logging.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "base/http_worker_pool.h"
#include "sync/mutex.h"

namespace tephra::base {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// ---- Request and response helpers ----------------------------------------------------------

namespace {

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Form decoding as Go's url.ParseQuery does it: '+' is a space, %XX a byte; a malformed escape
// is kept as written.
std::string QueryUnescape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%' && i + 2 < in.size() && HexValue(in[i + 1]) >= 0 &&
               HexValue(in[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

// Calls fn(name, value) for each "name=value" or bare "name" in a query string.
template <typename Fn>
void ForEachQueryParam(std::string_view query, Fn fn) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      fn(QueryUnescape(part), std::string());
    } else {
      fn(QueryUnescape(part.substr(0, eq)), QueryUnescape(part.substr(eq + 1)));
    }
  }
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

bool IsSafeHeaderValue(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// IMF-fixdate, as RFC 9110 wants for the Date header.
std::string HttpDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(buf, n);
}

}  // namespace

const std::string* HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (IEquals(key, name)) return &value;
  }
  return nullptr;
}

std::optional<std::string> HttpRequest::QueryParam(std::string_view name) const {
  std::optional<std::string> found;
  ForEachQueryParam(query, [&](std::string key, std::string value) {
    if (!found && key == name) found = std::move(value);
  });
  return found;
}

std::vector<std::string> HttpRequest::QueryParams(std::string_view name) const {
  std::vector<std::string> values;
  ForEachQueryParam(query, [&](std::string key, std::string value) {
    if (key == name) values.push_back(std::move(value));
  });
  return values;
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

// ---- TLS material ---------------------------------------------------------------------------

namespace {

// Identifies one version of a file: a rotated file has a new inode (atomic rename, Kubernetes
// secret volumes) or a new size or modification time (rewritten in place).
struct FileVersion {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;

  bool operator==(const FileVersion&) const = default;
};

FileVersion StatFile(const std::string& path) {
  FileVersion v;
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return v;
  v.exists = true;
  v.device = st.st_dev;
  v.inode = st.st_ino;
  v.size = st.st_size;
  v.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return v;
}

using TlsFilesVersion = std::array<FileVersion, 3>;  // certificate, key, client CA

TlsFilesVersion StatTlsFiles(const TlsOptions& tls) {
  return {StatFile(tls.cert_file), StatFile(tls.key_file), StatFile(tls.client_ca_file)};
}

StatusOr<std::shared_ptr<ssl::context>> LoadTlsContext(const TlsOptions& tls) {
  try {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    error_code ec;
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                         ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                         ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                     ec);
    if (ec) return Internal("setting TLS options: " + ec.message());
    if (SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1) {
      return Internal("cannot require TLS 1.2");
    }
    // An idle connection gives its record buffers back (about 34 KiB each).
    SSL_CTX_set_mode(ctx->native_handle(), SSL_MODE_RELEASE_BUFFERS);
    // Sessions kept for resumption: bounded (OpenSSL's default is 20,480), as every new
    // connection adds one.
    SSL_CTX_sess_set_cache_size(ctx->native_handle(), 256);
    ctx->use_certificate_chain_file(tls.cert_file, ec);
    if (ec) return InvalidArgument("loading certificate " + tls.cert_file + ": " + ec.message());
    ctx->use_private_key_file(tls.key_file, ssl::context::pem, ec);
    const bool mismatch =
        ec && ec.category() == asio::error::get_ssl_category() &&
        ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH;
    if (ec && !mismatch) {
      return InvalidArgument("loading private key " + tls.key_file + ": " + ec.message());
    }
    if (mismatch || SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      return InvalidArgument("private key " + tls.key_file + " does not match certificate " +
                             tls.cert_file);
    }
    if (!tls.client_ca_file.empty()) {
      ctx->load_verify_file(tls.client_ca_file, ec);
      if (ec) {
        return InvalidArgument("loading client CA " + tls.client_ca_file + ": " + ec.message());
      }
      // Tell clients which CAs are acceptable so they pick the right certificate.
      if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str())) {
        SSL_CTX_set_client_CA_list(ctx->native_handle(), names);
      }
      ssl::verify_mode mode = ssl::verify_peer;
      if (tls.require_client_cert) mode |= ssl::verify_fail_if_no_peer_cert;
      ctx->set_verify_mode(mode, ec);
      if (ec) return Internal("setting client verification: " + ec.message());
    }
    return ctx;
  } catch (const std::exception& e) {
    return Internal(std::string("creating TLS context: ") + e.what());
  }
}

}  // namespace

// ---- Server internals -----------------------------------------------------------------------

namespace {

// What Stop() needs from a connection, whatever its stream type.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
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

}  // namespace

class HttpServer::Impl final : public SessionHost {
 public:
  explicit Impl(HttpServerOptions options) : options_(std::move(options)) {}
  ~Impl() override { Stop(std::chrono::seconds(1)); }

  Status Handle(std::string_view method, std::string_view path, HttpHandler handler,
                Dispatch dispatch);
  Status Start();
  void Stop(std::chrono::milliseconds grace);
  Status ReloadTls();
  uint16_t port() const { return port_.load(); }
  size_t ActiveConnections() const {
    sync::MutexLock lock(sessions_mu_);
    return sessions_.size();
  }
  Status Health() const;
  HttpServerStats stats() const;
  size_t abandoned_handlers() const { return abandoned_.load(); }

  const HttpServerOptions& options() const override { return options_; }
  bool stopping() const override { return stopping_.load(); }
  const RouteEntry* Route(const HttpRequest& request, HttpResponse* error) const override;
  bool Submit(std::function<void()> work, std::shared_ptr<const std::atomic<bool>> cancelled,
              size_t body_bytes) override {
    WorkerPool& pool =
        large_pool_ != nullptr && body_bytes > options_.large_request_bytes ? *large_pool_ : *pool_;
    return pool.TrySubmit(std::move(work), std::move(cancelled));
  }
  ByteBudget& budget() override { return budget_; }
  std::shared_ptr<DeliveryGate> gate() const override { return gate_; }
  HttpResponse Busy(const HttpRequest& request, int status) const override;
  void CountOverBudget() override { ++over_budget_; }
  void CountTimedOut() override { ++timed_out_; }
  void Unregister(SessionBase* session) override;

 private:
  // The event loop and everything bound to it; destroyed as a unit, io last.
  struct Runtime {
    explicit Runtime(int threads)
        : io(threads),
          work(io.get_executor()),
          acceptor(asio::make_strand(io)),
          accept_retry(acceptor.get_executor()),
          tls_check(asio::make_strand(io)),
          tick(asio::make_strand(io)) {}
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> work;
    tcp::acceptor acceptor;
    asio::steady_timer accept_retry;  // backs off after accept errors such as EMFILE
    asio::steady_timer tls_check;
    asio::steady_timer tick;  // the watchdog's heartbeat and the memory trimmer
  };

  std::chrono::milliseconds StallTimeout() const;
  void ScheduleTick();
  void TrimMemoryAfterBurst();
  bool EvictIdle();
  void DoAccept();
  void OnAccept(error_code ec, tcp::socket socket);
  template <bool kTls>
  void StartSession(tcp::socket socket);
  void ScheduleTlsCheck();
  void CheckTlsFiles();
  void RunWorker();
  std::shared_ptr<ssl::context> CurrentTlsContext() const {
    sync::MutexLock lock(tls_mu_);
    return tls_context_;
  }

  const HttpServerOptions options_;
  // path -> method -> handler. Written before Start() only, read-only afterwards.
  std::map<std::string, std::map<std::string, RouteEntry>, std::less<>> routes_;
  ByteBudget budget_{options_.max_buffered_bytes};
  std::shared_ptr<DeliveryGate> gate_ = std::make_shared<DeliveryGate>();
  std::unique_ptr<WorkerPool> pool_;        // created by Start()
  std::unique_ptr<WorkerPool> large_pool_;  // created by Start() with large_request_bytes
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> evicted_{0};
  std::atomic<uint64_t> over_budget_{0};
  std::atomic<uint64_t> timed_out_{0};
  std::atomic<size_t> abandoned_{0};
  std::atomic<int64_t> last_tick_ns_{0};     // steady clock, set by the event loop
  std::atomic<size_t> connections_peak_{0};  // since the last memory trim
  bool trim_pending_ = false;                // a burst ended; touched on the tick's strand only

  sync::Mutex control_mu_;  // serialises Start and Stop
  bool started_ GUARDED_BY(control_mu_) = false;
  bool stopped_ GUARDED_BY(control_mu_) = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> running_{false};  // started: pool_ and runtime_ exist until destruction
  std::atomic<uint16_t> port_{0};
  std::vector<std::thread> threads_ GUARDED_BY(control_mu_);  // the I/O threads

  sync::Mutex reload_mu_;  // serialises ReloadTls
  mutable sync::Mutex tls_mu_;
  std::shared_ptr<ssl::context> tls_context_ GUARDED_BY(tls_mu_);  // handed to new connections
  TlsFilesVersion tls_loaded_ GUARDED_BY(tls_mu_) = {};            // files behind tls_context_
  TlsFilesVersion tls_failed_ GUARDED_BY(tls_mu_) = {};            // last version that failed

  mutable sync::Mutex sessions_mu_;
  sync::CondVar sessions_cv_;  // a session ended
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions_ GUARDED_BY(sessions_mu_);

  // Last member: destroyed first, so pending handlers (which hold sessions that point back
  // here) go while everything above is still alive.
  std::unique_ptr<Runtime> runtime_;
};

namespace {

// Bytes asked for per read; the buffer keeps this much capacity per connection.
constexpr size_t kReadChunk = 16 * 1024;
// After the last response of a connection we keep reading (and discarding) for a moment so the
// client sees the response instead of a reset caused by its unread request body.
constexpr std::chrono::milliseconds kLingerTimeout(2000);
constexpr std::chrono::milliseconds kStopLingerTimeout(100);
constexpr size_t kLingerMaxBytes = 4 * 1024 * 1024;
// "No handler timeout" still arms the connection's timer, which keeps it alive while its
// handler runs; this long.
constexpr std::chrono::hours kNoHandlerTimeout(24 * 365);
// The event loop's heartbeat, and how often it considers giving memory back.
constexpr std::chrono::seconds kTickInterval(1);
// After a burst this large (request bytes held at once, or connections closed since) the
// server asks malloc to return free memory to the system.
constexpr size_t kTrimAfterBytes = 8 * 1024 * 1024;
constexpr size_t kTrimAfterConnections = 64;

std::string FormatEndpoint(const tcp::endpoint& ep) {
  const std::string host = ep.address().to_string();
  return (ep.address().is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(ep.port());
}

HttpResponse InvokeHandler(const HttpHandler& handler, const HttpRequest& request,
                           const std::string& server_name) {
  try {
    return handler(request);
  } catch (const std::exception& e) {
    LOG(ERROR) << server_name << " server: handler for " << request.method << " " << request.path
               << " threw: " << e.what();
  } catch (...) {
    LOG(ERROR) << server_name << " server: handler for " << request.method << " " << request.path
               << " threw a non-standard exception";
  }
  return HttpResponse::Text(500, "internal server error\n");
}

// The response as bytes on the wire. Serialised in memory rather than with Beast's
// asynchronous writer, which would be instantiated again for every stream type. Never throws:
// a failure becomes a plain 500. `context` ("http server: GET /x") prefixes log lines.
std::string SerializeResponse(HttpResponse response, unsigned version, bool keep_alive,
                              const std::string& context) {
  http::response<http::string_body> message;
  try {
    if (response.status < 200 || response.status > 999) {
      LOG(ERROR) << context << ": handler returned invalid status " << response.status;
      response = HttpResponse::Text(500, "internal server error\n");
    }
    // These statuses carry no body by definition (Beast refuses to serialise one).
    const bool bodiless = response.status == 204 || response.status == 304;
    if (bodiless) response.body.clear();
    message.version(version);
    message.result(static_cast<unsigned>(response.status));
    message.set(http::field::date, HttpDate());
    if (!bodiless) message.set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) {
      if (!IsToken(name) || !IsSafeHeaderValue(value) || IEquals(name, "content-length") ||
          IEquals(name, "connection") || IEquals(name, "transfer-encoding")) {
        LOG(WARNING) << context << ": dropping response header \"" << name << "\"";
        continue;
      }
      message.insert(name, value);
    }
    message.body() = std::move(response.body);
    message.keep_alive(keep_alive);
    message.prepare_payload();
  } catch (const std::exception& e) {
    LOG(ERROR) << context << ": building response: " << e.what();
    message = http::response<http::string_body>(http::status::internal_server_error, version);
    message.keep_alive(keep_alive);
    message.prepare_payload();
  }
  std::string wire;
  http::response_serializer<http::string_body> serializer(message);
  error_code ec;
  while (!ec && !serializer.is_done()) {
    serializer.next(ec, [&](error_code&, const auto& buffers) {
      for (const auto buffer : beast::buffers_range_ref(buffers)) {
        wire.append(static_cast<const char*>(buffer.data()), buffer.size());
      }
      serializer.consume(beast::buffer_bytes(buffers));
    });
  }
  if (ec) {
    LOG(ERROR) << context << ": serialising response: " << ec.message();
    return std::string("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n") +
           (keep_alive ? "" : "Connection: close\r\n") + "\r\n";
  }
  return wire;
}

// One client connection: reads requests, hands them to handlers on the worker pool, writes
// the answers. Every member is touched only on the connection's strand.
template <bool kTls>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<kTls>> {
 public:
  using Stream = std::conditional_t<kTls, beast::ssl_stream<beast::tcp_stream>, beast::tcp_stream>;

  Session(SessionHost* server, tcp::socket socket, std::shared_ptr<ssl::context> tls)
      : server_(server),
        options_(server->options()),
        executor_(socket.get_executor()),
        tls_(std::move(tls)),
        stream_(MakeStream(std::move(socket), tls_.get())),
        timer_(executor_) {
    error_code ec;
    tcp::endpoint remote = beast::get_lowest_layer(stream_).socket().remote_endpoint(ec);
    remote_ = ec ? "unknown" : FormatEndpoint(remote);
  }

  ~Session() override { server_->Unregister(this); }

  void Start() {
    asio::dispatch(executor_, [self = this->shared_from_this()] { self->Begin(); });
  }

  void NotifyStopping() override {
    asio::post(executor_, [self = this->shared_from_this()] { self->OnServerStopping(); });
  }

  void Evict() override {
    asio::post(executor_, [self = this->shared_from_this()] {
      const bool waiting = self->state_ == State::kHandshake || self->state_ == State::kIdle ||
                           (self->state_ == State::kReading && !self->parser_->got_some() &&
                            self->buffer_.size() == 0);
      if (waiting) self->CloseNow();
    });
  }

 private:
  enum class State { kHandshake, kIdle, kReading, kHandling, kWriting, kClosing, kClosed };

  static Stream MakeStream(tcp::socket socket, ssl::context* tls) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls);
    } else {
      (void)tls;
      return Stream(std::move(socket));
    }
  }

  tcp::socket& Socket() { return beast::get_lowest_layer(stream_).socket(); }

  void Begin() {
    MarkIdle();  // until the first request's bytes arrive, the connection is only a cost
    if constexpr (kTls) {
      state_ = State::kHandshake;
      Arm(options_.read_timeout);
      stream_.async_handshake(
          ssl::stream_base::server, [self = this->shared_from_this()](error_code ec) {
            if (ec) {
              VLOG(2) << "TLS handshake with " << self->remote_ << " failed: " << ec.message();
              self->CloseNow();
              return;
            }
            self->ReadRequest(/*first=*/true);
          });
    } else {
      ReadRequest(/*first=*/true);
    }
  }

  // ---- Timeouts: one timer, its meaning given by the state when it fires.

  void Arm(std::chrono::milliseconds timeout) {
    const uint64_t generation = ++timer_generation_;
    timer_.expires_after(timeout);
    timer_.async_wait([self = this->shared_from_this(), generation](error_code ec) {
      // A wait that completed just before being re-armed carries an old generation.
      if (ec || generation != self->timer_generation_) return;
      self->OnTimeout();
    });
  }

  void Disarm() {
    ++timer_generation_;
    timer_.cancel();
  }

  void OnTimeout() {
    timed_out_ = true;
    switch (state_) {
      case State::kReading:
        if constexpr (!kTls) {
          // Cancel rather than close, so the read fails and we can still answer 408.
          beast::get_lowest_layer(stream_).cancel();
          return;
        }
        CloseNow();
        return;
      case State::kHandling:
        ++request_id_;  // the handler's late answer will be dropped
        if (cancelled_ != nullptr) cancelled_->store(true);  // not started yet: never will be
        server_->CountTimedOut();
        LOG(WARNING) << options_.name << " server: handler for " << method_ << " " << path_
                     << " exceeded " << options_.handler_timeout.count() << "ms";
        Respond(HttpResponse::Text(503, "handler timed out\n"), /*close=*/true);
        return;
      default:
        CloseNow();
        return;
    }
  }

  // ---- Reading

  // Requests are parsed here rather than with Beast's asynchronous readers: feeding the parser
  // from one read_some loop instantiates a single read operation per stream type, which keeps
  // this file's compile time in check.
  enum class Stage { kHeader, kBody };

  void ReadRequest(bool first) {
    if (server_->stopping()) {
      CloseNow();
      return;
    }
    parser_.emplace();
    request_version_ = 11;
    request_keep_alive_ = false;
    parser_->body_limit(static_cast<std::uint64_t>(options_.max_body_bytes));
    parser_->header_limit(
        static_cast<std::uint32_t>(std::min<size_t>(options_.max_header_bytes, UINT32_MAX)));
    timed_out_ = false;
    if (!first && buffer_.size() == 0) {
      // Keep-alive: wait for the next request's first bytes under the idle timeout.
      state_ = State::kIdle;
      MarkIdle();
      buffer_.shrink_to_fit();  // an idle connection keeps no read buffer
      Arm(options_.idle_timeout);
      ReadMore(Stage::kHeader);
      return;
    }
    state_ = State::kReading;
    Arm(options_.read_timeout);
    Parse(Stage::kHeader);
  }

  // Feeds buffered bytes to the parser until the stage is complete, reading more as needed.
  void Parse(Stage stage) {
    while (!(stage == Stage::kHeader ? parser_->is_header_done() : parser_->is_done())) {
      if (buffer_.size() == 0) {
        ReadMore(stage);
        return;
      }
      error_code ec;
      const size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == http::error::need_more || (!ec && used == 0)) {
        ReadMore(stage);  // an incomplete header line or chunk header: wait for the rest
        return;
      }
      if (ec) {
        OnReadError(ec);
        return;
      }
    }
    if (stage == Stage::kHeader) {
      OnHeader();
    } else {
      OnRequest();
    }
  }

  void ReadMore(Stage stage) {
    stream_.async_read_some(buffer_.prepare(kReadChunk), [self = this->shared_from_this(), stage](
                                                             error_code ec, size_t n) {
      if (ec == asio::error::eof) {
        // The client closed: mid-message is an error, between messages the normal end.
        self->OnReadError(self->parser_->got_some() ? http::error::partial_message
                                                    : http::error::end_of_stream);
        return;
      }
      if (ec) {
        self->OnReadError(ec);
        return;
      }
      self->buffer_.commit(n);
      if (n > 0) self->MarkBusy();
      if (self->state_ == State::kIdle) {
        // The next request has begun: from now on the read timeout applies.
        self->state_ = State::kReading;
        self->Arm(self->options_.read_timeout);
      }
      self->Parse(stage);
    });
  }

  // The request as handlers see it; the body is moved out of `message`.
  HttpRequest MakeRequest(http::request<http::string_body>& message) const {
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    const size_t question = request.target.find('?');
    request.path = request.target.substr(0, question);
    if (question != std::string::npos) request.query = request.target.substr(question + 1);
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    request.remote_address = remote_;
    request.tls = kTls;
    return request;
  }

  // Bytes the body will take: as announced, or the limit for a chunked one.
  size_t BodyBytesToReserve() {
    if (parser_->chunked()) return options_.max_body_bytes;
    const auto length = parser_->content_length();
    return length ? static_cast<size_t>(std::min<std::uint64_t>(*length, options_.max_body_bytes))
                  : 0;
  }

  void OnHeader() {
    if (const size_t bytes = BodyBytesToReserve(); bytes > 0) {
      std::optional<ByteBudget::Lease> lease = server_->budget().TryAcquire(bytes);
      if (!lease) {
        // Refused before the body is read: it never occupies memory here.
        server_->CountOverBudget();
        HttpRequest request = MakeRequest(parser_->get());
        method_ = request.method;
        path_ = request.path;
        request_keep_alive_ = false;
        request_version_ = parser_->get().version();
        LOG_EVERY_N(WARNING, 100) << options_.name << " server: refusing " << method_ << " "
                                  << path_ << " from " << remote_ << ": " << bytes
                                  << " body bytes do not fit the buffer budget ("
                                  << server_->budget().in_use() << " of "
                                  << server_->budget().limit() << " in use)";
        Respond(server_->Busy(request, 503), /*close=*/true);
        return;
      }
      body_lease_ = std::move(*lease);
    }
    auto& request = parser_->get();
    auto expect = request.find(http::field::expect);
    if (expect != request.end() && IEquals(expect->value(), "100-continue") &&
        !parser_->is_done()) {
      // Still in kReading: the read timeout covers this small write too.
      wire_ = "HTTP/1.1 100 Continue\r\n\r\n";
      Write(AfterWrite::kReadBody);
      return;
    }
    ReadBody();
  }

  void ReadBody() { Parse(Stage::kBody); }

  void OnReadError(error_code ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == http::error::partial_message) {
      CloseNow();  // the client closed the connection
    } else if (timed_out_) {
      if (!kTls && parser_->got_some()) {
        Respond(HttpResponse::Text(408, "request timed out\n"), /*close=*/true);
      } else {
        CloseNow();
      }
    } else if (ec == http::error::body_limit) {
      Respond(HttpResponse::Text(413, "request body larger than " +
                                          std::to_string(options_.max_body_bytes) + " bytes\n"),
              /*close=*/true);
    } else if (ec == http::error::header_limit) {
      Respond(HttpResponse::Text(431, "request header fields too large\n"), /*close=*/true);
    } else if (ec.category() == http::make_error_code(http::error::bad_method).category()) {
      Respond(HttpResponse::Text(400, "malformed request: " + ec.message() + "\n"),
              /*close=*/true);
    } else {
      VLOG(2) << "reading from " << remote_ << ": " << ec.message();
      CloseNow();
    }
  }

  // ---- Handling

  void OnRequest() {
    http::request<http::string_body> message = parser_->release();
    request_keep_alive_ = message.keep_alive();
    request_version_ = message.version();
    HttpRequest request = MakeRequest(message);
    method_ = request.method;
    path_ = request.path;

    HttpResponse error;
    const RouteEntry* route = server_->Route(request, &error);
    if (route == nullptr) {
      Respond(std::move(error), /*close=*/false);
      return;
    }
    if (route->dispatch == Dispatch::kInline) {
      HttpResponse response = InvokeHandler(*route->handler, request, options_.name);
      Respond(std::move(response), /*close=*/false);
      return;
    }
    state_ = State::kHandling;
    const auto timeout =
        options_.handler_timeout.count() > 0 ? options_.handler_timeout : kNoHandlerTimeout;
    Arm(timeout);
    if (options_.handler_timeout.count() > 0) {
      request.deadline = std::chrono::steady_clock::now() + options_.handler_timeout;
    }
    // The work holds the request, its share of the buffer budget and the handler, and reaches
    // this connection only through the delivery gate and a weak pointer: abandoned work (timed
    // out, or left running by Stop) touches nothing that may be gone.
    const uint64_t id = ++request_id_;
    const size_t body_bytes = request.body.size();
    cancelled_ = std::make_shared<std::atomic<bool>>(false);
    auto work = std::make_shared<PendingWork>();
    work->handler = route->handler;
    work->request = std::move(request);
    work->lease = std::move(body_lease_);
    work->session = this->weak_from_this();
    work->gate = server_->gate();
    work->server_name = options_.name;
    const bool queued = server_->Submit(
        [work, id] {
          HttpResponse response = InvokeHandler(*work->handler, work->request, work->server_name);
          work->request = HttpRequest();  // the body's memory goes before the answer is sent
          work->lease.Release();
          sync::MutexLock lock(work->gate->mu);
          if (!work->gate->open) return;
          if (auto self = work->session.lock()) self->Complete(id, std::move(response));
        },
        cancelled_, body_bytes);
    if (!queued) {
      ++request_id_;
      LOG_EVERY_N(WARNING, 100) << options_.name << " server: all workers busy and queue full; "
                                << "answering " << method_ << " " << path_ << " with 429";
      HttpRequest head;
      head.method = method_;
      head.path = path_;
      head.remote_address = remote_;
      Respond(server_->Busy(head, 429), /*close=*/false);
    }
  }

  struct PendingWork {
    std::shared_ptr<const HttpHandler> handler;
    HttpRequest request;
    ByteBudget::Lease lease;
    std::weak_ptr<Session> session;
    std::shared_ptr<DeliveryGate> gate;
    std::string server_name;
  };

  // A handler's answer, from its worker (under the delivery gate).
  void Complete(uint64_t id, HttpResponse response) {
    asio::post(executor_,
               [self = this->shared_from_this(), id, response = std::move(response)]() mutable {
                 if (self->state_ != State::kHandling || id != self->request_id_)
                   return;  // too late
                 self->Respond(std::move(response), /*close=*/false);
               });
  }

  // ---- Writing

  void Respond(HttpResponse response, bool close) {
    body_lease_.Release();  // the request's bytes are gone (or with the handler's work)
    const bool keep_alive = !close && request_keep_alive_ && !server_->stopping();
    VLOG(3) << options_.name << " server: " << remote_ << " " << method_ << " " << path_ << " "
            << response.status;
    wire_ = SerializeResponse(std::move(response), request_version_, keep_alive,
                              options_.name + " server: " + method_ + " " + path_);
    state_ = State::kWriting;
    Arm(options_.write_timeout);
    Write(keep_alive ? AfterWrite::kNextRequest : AfterWrite::kLinger);
  }

  // Every write goes through here, so the stream's write operation is instantiated once.
  enum class AfterWrite { kReadBody, kNextRequest, kLinger };
  void Write(AfterWrite after) {
    asio::async_write(stream_, asio::buffer(wire_),
                      [self = this->shared_from_this(), after](error_code ec, size_t) {
                        self->wire_.clear();
                        if (ec) {
                          self->CloseNow();
                          return;
                        }
                        switch (after) {
                          case AfterWrite::kReadBody:
                            self->ReadBody();
                            return;
                          case AfterWrite::kNextRequest:
                            self->ReadRequest(/*first=*/false);
                            return;
                          case AfterWrite::kLinger:
                            self->Linger();
                            return;
                        }
                      });
  }

  // ---- Closing

  void Linger() {
    state_ = State::kClosing;
    // A stopping server lingers only briefly: it waits for every connection to end.
    Arm(std::min(options_.read_timeout, server_->stopping() ? kStopLingerTimeout : kLingerTimeout));
    if constexpr (kTls) {
      // A request refused before its body was read: take in the rest first, so the client,
      // still sending, gets to read the answer rather than a reset.
      if (parser_ && parser_->got_some() && !parser_->is_done()) {
        DiscardTls();
      } else {
        ShutdownTls();
      }
    } else {
      error_code ec;
      Socket().shutdown(tcp::socket::shutdown_send, ec);
      Discard();
    }
  }

  void ShutdownTls() {
    if constexpr (kTls) {
      stream_.async_shutdown([self = this->shared_from_this()](error_code) { self->CloseNow(); });
    }
  }

  void DiscardTls() {
    if constexpr (kTls) {
      buffer_.clear();
      stream_.async_read_some(buffer_.prepare(kReadChunk),
                              [self = this->shared_from_this()](error_code ec, size_t n) {
                                self->discarded_ += n;
                                if (ec) {
                                  self->CloseNow();
                                } else if (self->discarded_ > kLingerMaxBytes) {
                                  self->ShutdownTls();
                                } else {
                                  self->DiscardTls();
                                }
                              });
    }
  }

  void Discard() {
    buffer_.clear();
    Socket().async_read_some(buffer_.prepare(kReadChunk),
                             [self = this->shared_from_this()](error_code ec, size_t n) {
                               self->discarded_ += n;
                               if (ec || self->discarded_ > kLingerMaxBytes) {
                                 self->CloseNow();
                               } else {
                                 self->Discard();
                               }
                             });
  }

  void CloseNow() {
    if (state_ == State::kClosed) return;
    state_ = State::kClosed;
    if (cancelled_ != nullptr) cancelled_->store(true);
    body_lease_.Release();
    Disarm();
    error_code ec;
    Socket().shutdown(tcp::socket::shutdown_both, ec);
    Socket().close(ec);
  }

  void OnServerStopping() {
    switch (state_) {
      case State::kHandshake:
      case State::kIdle:
      case State::kClosing:  // the last response is out; lingering is only a courtesy
        CloseNow();
        return;
      case State::kReading:
        // A request that has not started yet is not in flight: close instead of waiting.
        if (!parser_->got_some() && buffer_.size() == 0) CloseNow();
        return;
      default:
        return;  // the response in progress is sent with Connection: close
    }
  }

  SessionHost* const server_;
  const HttpServerOptions& options_;
  const asio::any_io_executor executor_;     // the connection's strand
  const std::shared_ptr<ssl::context> tls_;  // keeps this connection's certificate alive
  Stream stream_;
  asio::steady_timer timer_;
  std::string remote_;

  State state_ = State::kIdle;
  uint64_t timer_generation_ = 0;
  bool timed_out_ = false;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string wire_;  // the bytes being written
  bool request_keep_alive_ = false;
  unsigned request_version_ = 11;
  uint64_t request_id_ = 0;  // bumped per request and on handler timeout
  std::string method_;
  std::string path_;
  size_t discarded_ = 0;
  ByteBudget::Lease body_lease_;                  // the body being read
  std::shared_ptr<std::atomic<bool>> cancelled_;  // of the request on the workers
};

}  // namespace

Status HttpServer::Impl::Handle(std::string_view method, std::string_view path, HttpHandler handler,
                                Dispatch dispatch) {
  sync::MutexLock lock(control_mu_);
  if (started_) return FailedPrecondition("routes must be added before the server starts");
  if (path.empty() || path[0] != '/') {
    return InvalidArgument("route path \"" + std::string(path) + "\" must start with '/'");
  }
  if (!IsToken(method)) return InvalidArgument("invalid method \"" + std::string(method) + "\"");
  auto& methods = routes_[std::string(path)];
  RouteEntry entry{std::make_shared<const HttpHandler>(std::move(handler)), dispatch};
  if (!methods.emplace(std::string(method), std::move(entry)).second) {
    return AlreadyExists("route " + std::string(method) + " " + std::string(path) +
                         " is already registered");
  }
  return Status::Ok();
}

const RouteEntry* HttpServer::Impl::Route(const HttpRequest& request, HttpResponse* error) const {
  auto path = routes_.find(request.path);
  if (path == routes_.end()) {
    *error = HttpResponse::Text(404, "404 page not found\n");
    return nullptr;
  }
  auto method = path->second.find(request.method);
  if (method == path->second.end()) {
    std::string allow;
    for (const auto& [name, handler] : path->second) {
      if (!allow.empty()) allow += ", ";
      allow += name;
    }
    *error = HttpResponse::Text(405, "method " + request.method + " not allowed\n");
    error->headers.emplace_back("Allow", allow);
    return nullptr;
  }
  return &method->second;
}

HttpResponse HttpServer::Impl::Busy(const HttpRequest& request, int status) const {
  HttpResponse response;
  if (options_.busy_response) {
    try {
      response = options_.busy_response(request, status);
    } catch (const std::exception& e) {
      LOG(ERROR) << options_.name << " server: busy_response threw: " << e.what();
      response = HttpResponse();
    }
  }
  if (response.body.empty()) {
    response = HttpResponse::Text(
        status, status == 429 ? "server busy: all workers are taken, try again\n"
                              : "server busy: too many request bytes in flight, try again\n");
  }
  response.status = status;
  const bool has_retry_after =
      std::any_of(response.headers.begin(), response.headers.end(),
                  [](const auto& header) { return IEquals(header.first, "retry-after"); });
  if (!has_retry_after) response.headers.emplace_back("Retry-After", "1");
  return response;
}

std::chrono::milliseconds HttpServer::Impl::StallTimeout() const {
  if (options_.stall_timeout.count() > 0) return options_.stall_timeout;
  return std::max<std::chrono::milliseconds>(std::chrono::seconds(30),
                                             options_.handler_timeout * 3);
}

Status HttpServer::Impl::Health() const {
  if (!running_.load() || stopping_.load()) return Status::Ok();
  const std::chrono::milliseconds stall = StallTimeout();
  const auto since_tick = std::chrono::steady_clock::now().time_since_epoch() -
                          std::chrono::nanoseconds(last_tick_ns_.load());
  if (since_tick > stall + kTickInterval) {
    return Unavailable(
        options_.name + " server: event loop has not run for " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(since_tick).count()) + "s");
  }
  TEPHRA_RETURN_IF_ERROR(pool_->CheckProgress(stall).WithContext(options_.name + " server"));
  if (large_pool_ != nullptr) {
    return large_pool_->CheckProgress(stall).WithContext(options_.name + " server");
  }
  return Status::Ok();
}

HttpServerStats HttpServer::Impl::stats() const {
  HttpServerStats s;
  s.connections = ActiveConnections();
  s.buffered_bytes = budget_.in_use();
  s.refused_connections = refused_.load();
  s.evicted_connections = evicted_.load();
  s.over_budget_requests = over_budget_.load();
  s.timed_out_handlers = timed_out_.load();
  if (running_.load()) {
    for (const WorkerPool* p : {pool_.get(), large_pool_.get()}) {
      if (p == nullptr) continue;
      const WorkerPool::Stats pool = p->stats();
      s.busy_workers += pool.busy;
      s.queued_requests += pool.queued;
      s.overloaded_requests += pool.rejected;
    }
  }
  return s;
}

void HttpServer::Impl::ScheduleTick() {
  last_tick_ns_ = std::chrono::steady_clock::now().time_since_epoch().count();
  runtime_->tick.expires_after(kTickInterval);
  runtime_->tick.async_wait([this](error_code ec) {
    if (ec || stopping_) return;
    TrimMemoryAfterBurst();
    ScheduleTick();
  });
}

// glibc keeps freed memory for reuse; after a burst of large bodies or many connections that
// can be much memory the process never needs again. Once a burst is over (a tick without one),
// give it back. Runs on the tick's strand.
void HttpServer::Impl::TrimMemoryAfterBurst() {
  const size_t connections = ActiveConnections();
  const bool bytes_burst = budget_.TakePeak() >= kTrimAfterBytes;
  const bool many_closed = connections_peak_.load() >= connections + kTrimAfterConnections;
  if (bytes_burst || many_closed) {
    trim_pending_ = true;
    connections_peak_ = connections;
    return;  // wait for a quiet tick
  }
  if (!trim_pending_) return;
  trim_pending_ = false;
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

void HttpServer::Impl::Unregister(SessionBase* session) {
  sync::MutexLock lock(sessions_mu_);
  sessions_.erase(session);
  sessions_cv_.NotifyAll();
}

Status HttpServer::Impl::Start() {
  sync::MutexLock lock(control_mu_);
  if (started_) return FailedPrecondition(options_.name + " server already started");
  if (options_.tls) TEPHRA_RETURN_IF_ERROR(ReloadTls());

  error_code ec;
  const asio::ip::address address = asio::ip::make_address(options_.address, ec);
  if (ec) {
    return InvalidArgument("listen address \"" + options_.address +
                           "\" is not a numeric IP address");
  }
  const int workers = options_.threads > 0
                          ? options_.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int threads = std::max(1, options_.io_threads);
  WorkerPool::Options pool;
  pool.threads = workers;
  pool.max_queued = options_.max_queued_requests;
  pool.name = options_.name + " handler";
  pool_ = std::make_unique<WorkerPool>(pool);
  Status pools = pool_->Start();
  if (pools.ok() && options_.large_request_bytes > 0) {
    pool.threads = std::max(1, options_.large_request_threads);
    pool.name = options_.name + " large-request handler";
    large_pool_ = std::make_unique<WorkerPool>(pool);
    pools = large_pool_->Start();
  }
  if (!pools.ok()) {
    pool_.reset();
    large_pool_.reset();
    return pools;
  }
  runtime_ = std::make_unique<Runtime>(threads);
  const tcp::endpoint endpoint(address, options_.port);
  const std::string where = options_.name + " server on " + FormatEndpoint(endpoint);
  tcp::acceptor& acceptor = runtime_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    runtime_.reset();
    pool_.reset();
    large_pool_.reset();
    return Unavailable(where + ": " + ec.message());
  }
  port_ = acceptor.local_endpoint(ec).port();
  started_ = true;

  DoAccept();
  if (options_.tls) ScheduleTlsCheck();
  asio::post(runtime_->tick.get_executor(), [this] { ScheduleTick(); });
  last_tick_ns_ = std::chrono::steady_clock::now().time_since_epoch().count();
  try {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { RunWorker(); });
  } catch (const std::system_error& e) {
    // Not enough threads: run with those that started, if any.
    LOG(ERROR) << where << ": starting worker threads: " << e.what();
    if (threads_.empty()) {
      runtime_.reset();
      pool_.reset();
      large_pool_.reset();
      started_ = false;
      return Internal(where + ": cannot start worker threads: " + e.what());
    }
  }
  running_ = true;
  LOG(INFO) << options_.name << " server listening on " << (options_.tls ? "https://" : "http://")
            << FormatEndpoint(tcp::endpoint(address, port_)) << " with " << threads_.size()
            << " I/O and " << workers << " handler threads";
  return Status::Ok();
}

void HttpServer::Impl::RunWorker() {
  while (true) {
    try {
      runtime_->io.run();
      return;
    } catch (const std::exception& e) {
      LOG(ERROR) << options_.name
                 << " server: unexpected exception in the event loop: " << e.what();
    } catch (...) {
      LOG(ERROR) << options_.name << " server: unexpected exception in the event loop";
    }
  }
}

void HttpServer::Impl::DoAccept() {
  runtime_->acceptor.async_accept(
      asio::make_strand(runtime_->io),
      [this](error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void HttpServer::Impl::OnAccept(error_code ec, tcp::socket socket) {
  if (stopping_) {
    error_code ignored;
    socket.close(ignored);
    return;
  }
  if (ec) {
    if (ec == asio::error::operation_aborted) return;
    // Typically EMFILE: wait a little instead of spinning on the error.
    LOG_EVERY_N(WARNING, 100) << options_.name << " server: accept failed: " << ec.message();
    runtime_->accept_retry.expires_after(std::chrono::milliseconds(50));
    runtime_->accept_retry.async_wait([this](error_code wait_ec) {
      if (!wait_ec && !stopping_) DoAccept();
    });
    return;
  }
  const size_t open = ActiveConnections();
  if (options_.max_connections > 0 && open >= options_.max_connections && !EvictIdle()) {
    // Closed at once rather than left in the backlog: the client learns now, and an idle
    // connection cannot be parked here for free.
    ++refused_;
    LOG_EVERY_N(WARNING, 100) << options_.name << " server: " << open
                              << " connections open, the limit; closing a new one";
    error_code ignored;
    socket.close(ignored);
  } else if (options_.tls) {
    StartSession<true>(std::move(socket));
  } else {
    StartSession<false>(std::move(socket));
  }
  DoAccept();
}

template <bool kTls>
void HttpServer::Impl::StartSession(tcp::socket socket) {
  auto session = std::make_shared<Session<kTls>>(this, std::move(socket),
                                                 kTls ? CurrentTlsContext() : nullptr);
  {
    sync::MutexLock lock(sessions_mu_);
    sessions_.emplace(session.get(), session);
    if (sessions_.size() > connections_peak_.load()) connections_peak_ = sessions_.size();
  }
  session->Start();
}

// At the connection limit, the connection idle the longest (no request begun: a pending TLS
// handshake, a first request not yet sent, a kept-alive connection between requests) makes
// room for the new one, so idle connections cannot lock clients out. Connections reading,
// handling or answering a request are never evicted. False when there is none.
bool HttpServer::Impl::EvictIdle() {
  std::shared_ptr<SessionBase> victim;
  {
    sync::MutexLock lock(sessions_mu_);
    int64_t oldest = std::numeric_limits<int64_t>::max();
    SessionBase* chosen = nullptr;
    for (const auto& [session, weak] : sessions_) {
      const int64_t since = session->idle_since_ns.load();
      if (since != 0 && since < oldest) {
        oldest = since;
        chosen = session;
      }
    }
    if (chosen == nullptr) return false;
    // Claimed, so that the next accept picks another one.
    if (!chosen->idle_since_ns.compare_exchange_strong(oldest, 0)) return false;
    victim = sessions_[chosen].lock();
  }
  if (victim == nullptr) return false;
  ++evicted_;
  victim->Evict();
  return true;
}

void HttpServer::Impl::ScheduleTlsCheck() {
  runtime_->tls_check.expires_after(options_.tls->reload_interval);
  runtime_->tls_check.async_wait([this](error_code ec) {
    if (ec || stopping_) return;
    CheckTlsFiles();
    ScheduleTlsCheck();
  });
}

void HttpServer::Impl::CheckTlsFiles() {
  const TlsFilesVersion current = StatTlsFiles(*options_.tls);
  {
    sync::MutexLock lock(tls_mu_);
    // Unchanged, or already tried and failed (wait for the next change instead of logging
    // the same error every interval).
    if (current == tls_loaded_ || current == tls_failed_) return;
  }
  Status status = ReloadTls();
  if (status.ok()) {
    LOG(INFO) << options_.name << " server: reloaded TLS certificate " << options_.tls->cert_file;
  } else {
    LOG(WARNING) << options_.name
                 << " server: keeping the current TLS certificate: " << status.ToString();
    sync::MutexLock lock(tls_mu_);
    tls_failed_ = current;
  }
}

Status HttpServer::Impl::ReloadTls() {
  if (!options_.tls) return FailedPrecondition(options_.name + " server does not use TLS");
  sync::MutexLock reload(reload_mu_);
  // Stat before reading: if the files change in between, the next check loads them again.
  const TlsFilesVersion version = StatTlsFiles(*options_.tls);
  StatusOr<std::shared_ptr<ssl::context>> context = LoadTlsContext(*options_.tls);
  if (!context.ok()) return context.status();
  sync::MutexLock lock(tls_mu_);
  tls_context_ = std::move(context).value();
  tls_loaded_ = version;
  return Status::Ok();
}

void HttpServer::Impl::Stop(std::chrono::milliseconds grace) {
  sync::MutexLock lock(control_mu_);
  if (!started_ || stopped_) return;
  stopped_ = true;
  stopping_ = true;
  asio::post(runtime_->acceptor.get_executor(), [this] {
    error_code ec;
    runtime_->acceptor.close(ec);
    runtime_->accept_retry.cancel();
  });
  asio::post(runtime_->tls_check.get_executor(), [this] { runtime_->tls_check.cancel(); });
  asio::post(runtime_->tick.get_executor(), [this] { runtime_->tick.cancel(); });

  // Sessions are notified outside sessions_mu_: dropping the last reference runs a session's
  // destructor, which takes that lock.
  std::vector<std::shared_ptr<SessionBase>> live;
  {
    sync::MutexLock sessions_lock(sessions_mu_);
    for (const auto& [ptr, weak] : sessions_) {
      if (auto session = weak.lock()) live.push_back(std::move(session));
    }
  }
  for (const auto& session : live) session->NotifyStopping();
  live.clear();
  {
    sync::MutexLock sessions_lock(sessions_mu_);
    const bool drained = sessions_cv_.WaitFor(
        sessions_mu_, grace, [&]() REQUIRES(sessions_mu_) { return sessions_.empty(); });
    if (!drained) {
      LOG(WARNING) << options_.name << " server: closing " << sessions_.size()
                   << " connections still busy after " << grace.count() << "ms";
    }
  }
  runtime_->work.reset();
  runtime_->io.stop();
  for (auto& thread : threads_) thread.join();  // never blocked by a handler
  threads_.clear();
  {
    // From here a handler that finishes delivers nothing.
    sync::MutexLock gate_lock(gate_->mu);
    gate_->open = false;
  }
  size_t abandoned = pool_->Shutdown(kStopLingerTimeout);
  if (large_pool_ != nullptr) abandoned += large_pool_->Shutdown(kStopLingerTimeout);
  abandoned_ = abandoned;
  runtime_.reset();  // destroys the remaining connections
  LOG(INFO) << options_.name << " server stopped";
}

// ---- HttpServer -----------------------------------------------------------------------------

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() = default;

Status HttpServer::Handle(std::string_view method, std::string_view path, HttpHandler handler,
                          Dispatch dispatch) {
  return impl_->Handle(method, path, std::move(handler), dispatch);
}

Status HttpServer::Start() {
  return impl_->Start();
}

uint16_t HttpServer::port() const {
  return impl_->port();
}

void HttpServer::Stop(std::chrono::milliseconds grace) {
  impl_->Stop(grace);
}

Status HttpServer::ReloadTls() {
  return impl_->ReloadTls();
}

size_t HttpServer::ActiveConnections() const {
  return impl_->ActiveConnections();
}

size_t HttpServer::abandoned_handlers() const {
  return impl_->abandoned_handlers();
}

Status HttpServer::Health() const {
  return impl_->Health();
}

HttpServerStats HttpServer::stats() const {
  return impl_->stats();
}

}  // namespace tephra::base

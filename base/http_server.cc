// The server: routes, accepting connections (the connection limit and idle eviction), the
// worker pools handlers run on, the watchdog, memory trimming and shutdown. One connection is
// http_connection.cc; the TLS material http_tls.cc.
#include "base/http_server.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <optional>
#include <thread>
#include <unordered_map>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <glog/logging.h>

#include "base/http_connection.h"
#include "base/http_tls.h"
#include "base/http_worker_pool.h"
#include "sync/mutex.h"

namespace tephra::base {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using internal::DeliveryGate;
using internal::FormatEndpoint;
using internal::IEquals;
using internal::IsToken;
using internal::kStopLingerTimeout;
using internal::RouteEntry;
using internal::SessionBase;
using internal::SessionHost;
using internal::TlsMaterial;

class HttpServer::Impl final : public SessionHost {
 public:
  explicit Impl(HttpServerOptions options) : options_(std::move(options)) {
    if (options_.tls) tls_.emplace(*options_.tls, options_.name);
  }
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
  void StartSession(tcp::socket socket);
  void ScheduleTlsCheck();
  void RunWorker();

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

  std::optional<TlsMaterial> tls_;  // with options_.tls; its context goes to new connections

  mutable sync::Mutex sessions_mu_;
  sync::CondVar sessions_cv_;  // a session ended
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions_ GUARDED_BY(sessions_mu_);

  // Last member: destroyed first, so pending handlers (which hold sessions that point back
  // here) go while everything above is still alive.
  std::unique_ptr<Runtime> runtime_;
};

namespace {

// The event loop's heartbeat, and how often it considers giving memory back.
constexpr std::chrono::seconds kTickInterval(1);
// After a burst this large (request bytes held at once, or connections closed since) the
// server asks malloc to return free memory to the system.
constexpr size_t kTrimAfterBytes = 8 * 1024 * 1024;
constexpr size_t kTrimAfterConnections = 64;

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
  } else {
    StartSession(std::move(socket));
  }
  DoAccept();
}

void HttpServer::Impl::StartSession(tcp::socket socket) {
  std::shared_ptr<SessionBase> session =
      internal::NewSession(this, std::move(socket), tls_ ? tls_->Current() : nullptr);
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
    tls_->ReloadIfChanged();
    ScheduleTlsCheck();
  });
}

Status HttpServer::Impl::ReloadTls() {
  if (!tls_) return FailedPrecondition(options_.name + " server does not use TLS");
  return tls_->Reload();
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

#include "base/http_connection.h"

#include <algorithm>
#include <ctime>
#include <optional>
#include <type_traits>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <glog/logging.h>

namespace tephra::base {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// ---- Request and response helpers ----------------------------------------------------------

namespace internal {

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

std::string FormatEndpoint(const tcp::endpoint& ep) {
  const std::string host = ep.address().to_string();
  return (ep.address().is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(ep.port());
}

}  // namespace internal

namespace {

using internal::IEquals;
using internal::IsToken;

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

// ---- One connection ------------------------------------------------------------------------

namespace internal {
namespace {

// Bytes asked for per read; the buffer keeps this much capacity per connection.
constexpr size_t kReadChunk = 16 * 1024;
// After the last response of a connection we keep reading (and discarding) for a moment so the
// client sees the response instead of a reset caused by its unread request body.
constexpr std::chrono::milliseconds kLingerTimeout(2000);
constexpr size_t kLingerMaxBytes = 4 * 1024 * 1024;
// "No handler timeout" still arms the connection's timer, which keeps it alive while its
// handler runs; this long.
constexpr std::chrono::hours kNoHandlerTimeout(24 * 365);

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

  void Start() override {
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

std::shared_ptr<SessionBase> NewSession(SessionHost* server, tcp::socket socket,
                                        std::shared_ptr<ssl::context> tls) {
  if (tls != nullptr)
    return std::make_shared<Session<true>>(server, std::move(socket), std::move(tls));
  return std::make_shared<Session<false>>(server, std::move(socket), nullptr);
}

}  // namespace internal
}  // namespace tephra::base

// The HTTP transport against a local server: its connection pool when the server closes idle
// connections, as kube-apiserver does after 90 s (requests after the close must not fail), its
// timeouts, and closing a stream whose Read is blocked on another thread.
#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <mutex>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "kube/transport.h"

namespace tephra::kube {
namespace {

// An HTTP/1.1 server on 127.0.0.1 that answers every request "ok" and keeps the connection
// open until CloseAll(). GET /watch is answered with a chunked body of one chunk, "hello", that
// never ends. Each connection is served by its own thread.
class KeepAliveServer {
 public:
  KeepAliveServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener_, 64) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }

  ~KeepAliveServer() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    acceptor_.join();
    CloseAll();
    for (auto& t : servers_) t.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_; }

  // Closes every open connection, as a server's idle timeout does.
  void CloseAll() {
    std::lock_guard<std::mutex> l(mu_);
    for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
  }

  // Holds each response this long, so that concurrent requests need connections of their own.
  void set_delay(std::chrono::milliseconds d) { delay_ms_ = static_cast<int>(d.count()); }

 private:
  void Accept() {
    while (!stopping_) {
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      ++accepted_;
      std::lock_guard<std::mutex> l(mu_);
      open_.push_back(fd);
      servers_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  void Serve(int fd) {
    std::string in;
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
      size_t end;
      while ((end = in.find("\r\n\r\n")) != std::string::npos) {  // requests carry no body
        const bool watch = in.rfind("GET /watch ", 0) == 0;
        in.erase(0, end + 4);
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
        static const std::string kResponse =
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok";
        static const std::string kWatchResponse =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
        const std::string& response = watch ? kWatchResponse : kResponse;
        if (::send(fd, response.data(), response.size(), MSG_NOSIGNAL) < 0) break;
      }
    }
    ::close(fd);
  }

  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::atomic<int> delay_ms_{0};
  std::mutex mu_;
  std::vector<int> open_;
  std::vector<std::thread> servers_;
  std::thread acceptor_;
};

std::shared_ptr<Transport> TransportTo(const KeepAliveServer& server,
                                       TransportOptions options = {}) {
  RestConfig config;
  config.server = server.url();
  config.timeout = std::chrono::seconds(5);
  auto transport = NewHttpTransport(config, options);
  REQUIRE(transport.ok());
  return *transport;
}

Status Get(Transport& transport) {
  ApiRequest request;
  request.target = "/api";
  auto response = transport.RoundTrip(request);
  if (!response.ok()) return response.status();
  if (response->status != 200 || response->body != "ok") return Internal("unexpected response");
  return Status::Ok();
}

TEST_CASE("requests after the server closed every pooled connection succeed") {
  KeepAliveServer server;
  server.set_delay(std::chrono::milliseconds(200));
  auto transport = TransportTo(server);
  // Eight requests at once: eight connections, all pooled afterwards.
  std::vector<std::thread> clients;
  std::atomic<int> failed{0};
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&] {
      if (!Get(*transport).ok()) ++failed;
    });
  }
  for (auto& t : clients) t.join();
  REQUIRE(failed == 0);
  REQUIRE(server.accepted() == 8);

  server.set_delay(std::chrono::milliseconds(0));
  server.CloseAll();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 4; ++i) {
    Status s = Get(*transport);
    INFO(s.ToString());
    CHECK(s.ok());
  }
  // None of the closed connections was used again: one new connection served all four.
  CHECK(server.accepted() == 9);
}

TEST_CASE("a connection idle longer than max_idle_age is not reused") {
  KeepAliveServer server;
  TransportOptions options;
  options.max_idle_age = std::chrono::milliseconds(200);
  auto transport = TransportTo(server, options);
  REQUIRE(Get(*transport).ok());
  REQUIRE(Get(*transport).ok());
  CHECK(server.accepted() == 1);  // reused while fresh
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  REQUIRE(Get(*transport).ok());
  CHECK(server.accepted() == 2);
}

TEST_CASE("a request the server does not answer in time fails with DeadlineExceeded") {
  KeepAliveServer server;
  server.set_delay(std::chrono::milliseconds(1500));
  auto transport = TransportTo(server);
  ApiRequest request;
  request.target = "/api";
  request.timeout = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  auto response = transport->RoundTrip(request);
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(response.ok());
  CHECK(response.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(took < std::chrono::milliseconds(1000));
}

TEST_CASE("many threads share the pool and every request gets its own answer") {
  KeepAliveServer server;
  auto transport = TransportTo(server);
  std::vector<std::thread> clients;
  std::atomic<int> failed{0};
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&] {
      for (int j = 0; j < 50; ++j) {
        if (!Get(*transport).ok()) ++failed;
      }
    });
  }
  for (auto& t : clients) t.join();
  CHECK(failed == 0);
  CHECK(server.accepted() <= 16);  // connections are reused, never more than callers at once
}

std::unique_ptr<ResponseStream> OpenWatch(Transport& transport, std::chrono::milliseconds idle) {
  ApiRequest request;
  request.target = "/watch";
  request.timeout = idle;
  auto stream = transport.Stream(request);
  REQUIRE(stream.ok());
  std::unique_ptr<ResponseStream> s = std::move(*stream);
  REQUIRE(s->status() == 200);
  std::string body;
  auto more = s->Read(&body);
  REQUIRE(more.ok());
  REQUIRE(*more);
  REQUIRE(body == "hello");
  return s;
}

TEST_CASE("Close from another thread ends a Read blocked on a silent stream") {
  KeepAliveServer server;
  auto transport = TransportTo(server);
  auto stream = OpenWatch(*transport, std::chrono::seconds(30));
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stream->Close();
  });
  const auto start = std::chrono::steady_clock::now();
  std::string body;
  auto more = stream->Read(&body);
  const auto took = std::chrono::steady_clock::now() - start;
  closer.join();
  REQUIRE_FALSE(more.ok());
  CHECK(more.status().code() == StatusCode::kCancelled);
  CHECK(took < std::chrono::seconds(5));
  // Closed for good: the next Read does not block either.
  CHECK(stream->Read(&body).status().code() == StatusCode::kCancelled);
}

TEST_CASE("a stream silent for longer than its timeout fails with DeadlineExceeded") {
  KeepAliveServer server;
  auto transport = TransportTo(server);
  auto stream = OpenWatch(*transport, std::chrono::milliseconds(200));
  std::string body;
  auto more = stream->Read(&body);
  REQUIRE_FALSE(more.ok());
  CHECK(more.status().code() == StatusCode::kDeadlineExceeded);
}

TEST_CASE("a stream closed before its next Read returns Cancelled at once") {
  KeepAliveServer server;
  auto transport = TransportTo(server);
  auto stream = OpenWatch(*transport, std::chrono::seconds(30));
  stream->Close();
  std::string body;
  CHECK(stream->Read(&body).status().code() == StatusCode::kCancelled);
}

}  // namespace
}  // namespace tephra::kube

// Proves each third-party dependency compiles, links and works: Boost.Asio/Beast, RapidJSON,
// Protobuf + gRPC (generated code), glog, OpenSSL, yaml-cpp. Catch2 is proven by running at all.
#include <atomic>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <catch2/catch.hpp>
#include <glog/logging.h>
#include <grpcpp/grpcpp.h>
#include <openssl/evp.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include "deps_test.grpc.pb.h"
#include "deps_test.pb.h"

namespace {

namespace http = boost::beast::http;

TEST_CASE("Boost.Asio runs posted handlers and Beast serialises HTTP") {
  boost::asio::io_context io;
  int ran = 0;
  boost::asio::post(io, [&] { ++ran; });
  io.run();
  CHECK(ran == 1);

  http::request<http::string_body> req{http::verb::post, "/api/v1/pods", 11};
  req.set(http::field::host, "127.0.0.1");
  req.body() = R"({"kind":"Pod"})";
  req.prepare_payload();
  http::request_serializer<http::string_body> sr{req};
  std::string wire;
  boost::beast::error_code ec;
  while (!sr.is_done()) {
    sr.next(ec, [&](boost::beast::error_code&, const auto& buffers) {
      for (auto b : boost::beast::buffers_range_ref(buffers)) {
        wire.append(static_cast<const char*>(b.data()), b.size());
      }
      sr.consume(boost::beast::buffer_bytes(buffers));
    });
    REQUIRE_FALSE(ec);
  }
  CHECK(wire.find("Content-Length: 14") != std::string::npos);

  http::request_parser<http::string_body> parser;
  parser.eager(true);
  parser.put(boost::asio::buffer(wire), ec);
  REQUIRE_FALSE(ec);
  REQUIRE(parser.is_done());
  CHECK(parser.get().target() == "/api/v1/pods");
  CHECK(parser.get().body() == R"({"kind":"Pod"})");
}

TEST_CASE("Boost.Asio SSL context loads OpenSSL") {
  boost::asio::ssl::context ctx{boost::asio::ssl::context::tls_client};
  ctx.set_verify_mode(boost::asio::ssl::verify_peer);
  CHECK(ctx.native_handle() != nullptr);
}

TEST_CASE("RapidJSON parses and writes") {
  rapidjson::Document doc;
  doc.Parse(R"({"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"replicas":3}})");
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["metadata"]["name"].GetString()) == "a");
  CHECK(doc["spec"]["replicas"].GetInt() == 3);
  doc["spec"]["replicas"].SetInt(4);
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  doc.Accept(writer);
  CHECK(std::string(out.GetString()).find(R"("replicas":4)") != std::string::npos);
}

TEST_CASE("Protobuf generated message round-trips") {
  tephra::depstest::Greeting in;
  in.set_name("gang");
  in.set_count(12345678901);
  in.add_tags("mpi");
  in.add_tags("gpu");
  std::string bytes;
  REQUIRE(in.SerializeToString(&bytes));
  tephra::depstest::Greeting out;
  REQUIRE(out.ParseFromString(bytes));
  CHECK(out.name() == "gang");
  CHECK(out.count() == 12345678901);
  REQUIRE(out.tags_size() == 2);
  CHECK(out.tags(1) == "gpu");
}

class EchoService final : public tephra::depstest::Echo::Service {
  grpc::Status Say(grpc::ServerContext*, const tephra::depstest::Greeting* request,
                   tephra::depstest::Greeting* reply) override {
    reply->set_name("hello " + request->name());
    reply->set_count(request->count() + 1);
    return grpc::Status::OK;
  }
};

TEST_CASE("gRPC serves a generated service on loopback") {
  EchoService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  REQUIRE(server != nullptr);
  REQUIRE(port > 0);

  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  auto stub = tephra::depstest::Echo::NewStub(channel);
  grpc::ClientContext ctx;
  tephra::depstest::Greeting req;
  req.set_name("tephra");
  req.set_count(41);
  tephra::depstest::Greeting reply;
  grpc::Status status = stub->Say(&ctx, req, &reply);
  REQUIRE(status.ok());
  CHECK(reply.name() == "hello tephra");
  CHECK(reply.count() == 42);
  server->Shutdown();
}

class CountingSink : public google::LogSink {
 public:
  void send(google::LogSeverity, const char*, const char*, int, const google::LogMessageTime&,
            const char* message, size_t length) override {
    last.assign(message, length);
    ++count;
  }
  std::atomic<int> count{0};
  std::string last;
};

TEST_CASE("glog routes messages to sinks") {
  CountingSink sink;
  google::AddLogSink(&sink);
  LOG(INFO) << "scheduled " << 3 << " pods";
  google::RemoveLogSink(&sink);
  CHECK(sink.count == 1);
  CHECK(sink.last == "scheduled 3 pods");
}

TEST_CASE("OpenSSL computes SHA-256") {
  const std::string input = "abc";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  REQUIRE(EVP_Digest(input.data(), input.size(), digest, &len, EVP_sha256(), nullptr) == 1);
  REQUIRE(len == 32);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 0xf];
  }
  CHECK(out == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("yaml-cpp parses a scheduler configuration") {
  YAML::Node conf = YAML::Load(R"(
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
)");
  CHECK(conf["actions"].as<std::string>() == "enqueue, allocate, backfill");
  REQUIRE(conf["tiers"].size() == 1);
  CHECK(conf["tiers"][0]["plugins"][1]["name"].as<std::string>() == "gang");
  CHECK(conf["tiers"][0]["plugins"][1]["enablePreemptable"].as<bool>() == false);
}

}  // namespace

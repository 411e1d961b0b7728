#include "base/status.h"

#include <memory>
#include <string>

#include <catch2/catch.hpp>

namespace tephra {
namespace {

StatusOr<int> Half(int v) {
  if (v % 2 != 0) return InvalidArgument("odd value " + std::to_string(v));
  return v / 2;
}

StatusOr<int> Quarter(int v) {
  TEPHRA_ASSIGN_OR_RETURN(int h, Half(v));
  TEPHRA_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckPositive(int v) {
  if (v <= 0) return FailedPrecondition("not positive");
  return Status::Ok();
}

Status Both(int a, int b) {
  TEPHRA_RETURN_IF_ERROR(CheckPositive(a));
  TEPHRA_RETURN_IF_ERROR(CheckPositive(b));
  return Status::Ok();
}

TEST_CASE("Status carries code and message") {
  Status ok;
  CHECK(ok.ok());
  CHECK(ok.ToString() == "OK");
  Status nf = NotFound("pods \"x\" not found");
  CHECK_FALSE(nf.ok());
  CHECK(nf.code() == StatusCode::kNotFound);
  CHECK(nf.ToString() == "NotFound: pods \"x\" not found");
  CHECK(nf.WithContext("getting pod").message() == "getting pod: pods \"x\" not found");
  CHECK(Status::Ok().WithContext("ignored").ok());
}

TEST_CASE("StatusOr propagates values and errors") {
  auto q = Quarter(12);
  REQUIRE(q.ok());
  CHECK(*q == 3);
  auto bad = Quarter(6);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message() == "odd value 3");
}

TEST_CASE("StatusOr holds move-only values") {
  StatusOr<std::unique_ptr<int>> p = std::make_unique<int>(7);
  REQUIRE(p.ok());
  std::unique_ptr<int> taken = std::move(p).value();
  CHECK(*taken == 7);
}

TEST_CASE("RETURN_IF_ERROR stops at the first failure") {
  CHECK(Both(1, 2).ok());
  CHECK(Both(0, 2).code() == StatusCode::kFailedPrecondition);
  CHECK(Both(1, -1).code() == StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tephra

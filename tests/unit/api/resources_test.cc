#include "api/resources.h"

#include <limits>

#include <catch2/catch.hpp>

namespace tephra::api {
namespace {

Resources R(const char* text) {
  StatusOr<Resources> r = Resources::FromString(text);
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("ResourceList keeps entries sorted and unique") {
  ResourceList list{{"memory", *Quantity::Parse("1Gi")}, {"cpu", *Quantity::Parse("1")}};
  list.Set("cpu", *Quantity::Parse("2"));
  list.Set("a/b", Quantity());
  REQUIRE(list.size() == 3);
  CHECK(list.begin()->first == "a/b");
  CHECK(list.Find("cpu")->Value() == 2);
  CHECK(list.Find("gpu") == nullptr);
  CHECK(list.Erase("a/b"));
  CHECK_FALSE(list.Erase("a/b"));
  CHECK(list.size() == 2);
}

TEST_CASE("Resources reads a ResourceList in scheduling units") {
  ResourceList list{
      {"cpu", *Quantity::Parse("1500m")},        {"memory", *Quantity::Parse("1.5Gi")},
      {"pods", *Quantity::Parse("110")},         {"ephemeral-storage", *Quantity::Parse("10G")},
      {"nvidia.com/gpu", *Quantity::Parse("2")}, {"hugepages-2Mi", *Quantity::Parse("4Mi")}};
  Resources r = Resources::FromList(list);
  CHECK(r.milli_cpu() == 1500);
  CHECK(r.memory() == 1610612736);
  CHECK(r.pods() == 110);
  CHECK(r.ephemeral_storage() == 10000000000);
  CHECK(r.Get("nvidia.com/gpu") == 2000);
  CHECK(r.Get("hugepages-2Mi") == 4194304000);
  CHECK(r.Get("example.com/none") == 0);
  CHECK_FALSE(r.Has("example.com/none"));
  CHECK(r.Has("pods"));
  CHECK(r.scalars().size() == 2);
  // Back to a list: same values, Kubernetes' formats.
  ResourceList back = r.ToList();
  CHECK(back == list);
  CHECK(back.Find("memory")->String() == "1536Mi");
  CHECK(back.Find("hugepages-2Mi")->String() == "4Mi");
  CHECK(
      r.ToString() ==
      "cpu 1500m, ephemeral-storage 9765625Ki, hugepages-2Mi 4Mi, memory 1536Mi, nvidia.com/gpu 2, "
      "pods 110");
  CHECK(r.Names() == std::vector<std::string>{"cpu", "memory", "ephemeral-storage", "pods",
                                              "hugepages-2Mi", "nvidia.com/gpu"});
}

TEST_CASE("LargestCountable is the most int64 holds in the unit each resource is counted in") {
  auto q = [](const char* text) { return *Quantity::Parse(text); };
  for (const char* milli : {"cpu", "nvidia.com/gpu", "hugepages-2Mi"}) {
    INFO(milli);
    CHECK(CountedInMilli(milli));
    CHECK(LargestCountable(milli) == q("9223372036854775807m"));
  }
  for (const char* units : {"memory", "ephemeral-storage", "pods"}) {
    INFO(units);
    CHECK_FALSE(CountedInMilli(units));
    CHECK(LargestCountable(units) == q("9223372036854775807"));
  }
  // At the limit the amount is exact; beyond it Resources can only saturate.
  constexpr int64_t kMost = std::numeric_limits<int64_t>::max();
  Resources r = Resources::FromList({{"cpu", q("9223372036854775807m")},
                                     {"memory", q("9223372036854775807")},
                                     {"example.com/gpu", q("1e400")}});
  CHECK(r.milli_cpu() == kMost);
  CHECK(r.memory() == kMost);
  CHECK(r.Get("example.com/gpu") == kMost);
  CHECK(q("9223372036854775808m") > LargestCountable("cpu"));
  CHECK(q("1e19") > LargestCountable("memory"));
  // Binary suffixes are capped at 2^63-1 when parsed, as by the API server.
  CHECK(q("8Ei") == LargestCountable("memory"));
  CHECK(q("100Ei") == LargestCountable("memory"));
}

TEST_CASE("FromString parses name=quantity lists and reports bad input") {
  CHECK(R("cpu=2, memory=4Gi, nvidia.com/gpu=1").ToString() ==
        "cpu 2, memory 4Gi, nvidia.com/gpu 1");
  CHECK(R("").IsEmpty());
  CHECK(Resources::FromString("cpu").status().message() ==
        "\"cpu\" is not NAME=QUANTITY (e.g. cpu=500m,memory=1Gi)");
  CHECK_FALSE(Resources::FromString("cpu=two").ok());
}

TEST_CASE("ParseResourceList reads name=quantity lists, spaces and empty items aside") {
  StatusOr<ResourceList> list = ParseResourceList(" cpu = 500m,, memory=1Gi,");
  REQUIRE(list.ok());
  CHECK(list->size() == 2);
  CHECK(list->Find("cpu")->String() == "500m");
  CHECK(list->Find("memory")->String() == "1Gi");
  CHECK(ParseResourceList("")->empty());
  CHECK(ParseResourceList("=1").status().message() ==
        "\"=1\" is not NAME=QUANTITY (e.g. cpu=500m,memory=1Gi)");
  CHECK(ParseResourceList("cpu=1,gpu=lots").status().message().rfind("gpu: ", 0) == 0);
}

TEST_CASE("Add, Sub and Max combine the union of dimensions") {
  Resources a = R("cpu=2,memory=4Gi,nvidia.com/gpu=1");
  Resources b = R("cpu=500m,example.com/fpga=2");
  Resources sum = a;
  sum.Add(b);
  CHECK(sum.ToString() == "cpu 2500m, example.com/fpga 2, memory 4Gi, nvidia.com/gpu 1");

  Resources diff = sum;
  diff.Sub(R("cpu=3,memory=1Gi"));
  CHECK(diff.ToString() == "cpu 0, example.com/fpga 2, memory 3Gi, nvidia.com/gpu 1");
  Resources signed_diff = sum;
  signed_diff.SubAllowNegative(R("cpu=3"));
  CHECK(signed_diff.milli_cpu() == -500);

  // Subtracting a dimension the left side lacks clamps to zero (and makes it present).
  Resources only_cpu = R("cpu=1");
  only_cpu.Sub(R("nvidia.com/gpu=1"));
  CHECK(only_cpu.ToString() == "cpu 1, nvidia.com/gpu 0");

  Resources m = R("cpu=1,memory=8Gi");
  m.MaxWith(R("cpu=2,memory=1Gi,nvidia.com/gpu=1"));
  CHECK(m.ToString() == "cpu 2, memory 8Gi, nvidia.com/gpu 1");

  Resources scaled = R("cpu=1500m,memory=1Gi,nvidia.com/gpu=1");
  scaled.Multiply(3);
  CHECK(scaled.ToString() == "cpu 4500m, memory 3Gi, nvidia.com/gpu 3");
  scaled.Scale(0.5);
  CHECK(scaled.ToString() == "cpu 2250m, memory 1536Mi, nvidia.com/gpu 1500m");
}

TEST_CASE("Erase makes a dimension missing, not zero") {
  Resources r = R("cpu=2,pods=1,nvidia.com/gpu=1");
  r.Erase("pods").Erase("nvidia.com/gpu").Erase("example.com/never-seen");
  CHECK(r.ToString() == "cpu 2");
  CHECK_FALSE(r.Has("pods"));
  r.Erase("cpu");
  CHECK(r.IsEmpty());
}

TEST_CASE("ToString rounds only byte counts no binary suffix divides, and says so") {
  Resources memory = R("cpu=1, memory=32Gi");
  memory.Scale(1.2);  // 41231686041.6 bytes, rounded to a whole byte
  CHECK(memory.ToString() == "cpu 1200m, memory ~38.4Gi");
  CHECK(R("memory=1000").ToString() == "memory 1k");        // under 1Ki: exact
  CHECK(R("memory=1536Mi").ToString() == "memory 1536Mi");  // a binary suffix divides it: exact
  CHECK(R("memory=1G").ToString() == "memory 1G");          // so does a decimal one
  CHECK(R("memory=1234567").ToString() == "memory ~1.18Mi");
}

TEST_CASE("Arithmetic saturates instead of overflowing") {
  Resources big;
  big.SetMilliCpu(std::numeric_limits<int64_t>::max() - 1);
  big.Add(R("cpu=1"));
  CHECK(big.milli_cpu() == std::numeric_limits<int64_t>::max());
  big.Multiply(2);
  CHECK(big.milli_cpu() == std::numeric_limits<int64_t>::max());
  Resources low;
  low.SetMemory(std::numeric_limits<int64_t>::min() + 1);
  low.SubAllowNegative(R("memory=10"));
  CHECK(low.memory() == std::numeric_limits<int64_t>::min());
  big.Scale(1e300);
  CHECK(big.milli_cpu() == std::numeric_limits<int64_t>::max());
}

TEST_CASE("LessEqual states what a dimension missing from the limit means") {
  Resources req = R("cpu=2,memory=4Gi,nvidia.com/gpu=1");
  Resources node = R("cpu=4,memory=8Gi");
  // A node without GPUs has none.
  CHECK_FALSE(req.LessEqual(node, Resources::Missing::kZero));
  CHECK_FALSE(req.FitsIn(node));
  CHECK(req.Exceeding(node, Resources::Missing::kZero) ==
        std::vector<std::string>{"nvidia.com/gpu"});
  // A quota that does not mention GPUs does not limit them.
  CHECK(req.LessEqual(node, Resources::Missing::kUnlimited));
  CHECK(req.Exceeding(node, Resources::Missing::kUnlimited).empty());
  // cpu and memory follow the same rule.
  CHECK(R("cpu=1").LessEqual(R("memory=1Gi"), Resources::Missing::kUnlimited));
  CHECK_FALSE(R("cpu=1").LessEqual(R("memory=1Gi"), Resources::Missing::kZero));
  // A zero demand fits where the dimension is missing.
  CHECK(R("cpu=0").LessEqual(R("memory=1Gi"), Resources::Missing::kZero));
  // Dimensions only the limit has are a demand of zero.
  CHECK(R("cpu=1").FitsIn(R("cpu=1,nvidia.com/gpu=4")));
  Resources negative = R("cpu=1");
  negative.SubAllowNegative(R("cpu=2,nvidia.com/gpu=1"));
  CHECK_FALSE(R("memory=1").FitsIn(negative));
  CHECK(R("cpu=1,memory=2Gi").Exceeding(R("cpu=500m,memory=1Gi"), Resources::Missing::kZero) ==
        std::vector<std::string>{"cpu", "memory"});
  CHECK(R("cpu=2,nvidia.com/gpu=2").FitsIn(R("cpu=2,nvidia.com/gpu=2")));
  CHECK_FALSE(R("cpu=2,nvidia.com/gpu=3").FitsIn(R("cpu=2,nvidia.com/gpu=2")));
  CHECK(R("").FitsIn(R("")));
}

TEST_CASE("LessEqualInDims compares only the dimensions a request asks for") {
  Resources used = R("cpu=3,memory=1Gi,nvidia.com/gpu=2,pods=50");
  Resources bound = R("cpu=2,memory=4Gi,pods=10");
  // cpu is over, but a memory-only request does not look at it; pods never count.
  CHECK(used.LessEqualInDims(bound, R("memory=1")));
  CHECK_FALSE(used.LessEqualInDims(bound, R("cpu=1,memory=1")));
  CHECK(used.LessEqualInDims(bound, R("pods=1")));
  // A dimension the bound lacks is 0 there; one the request asks 0 of is not compared.
  CHECK_FALSE(used.LessEqualInDims(bound, R("nvidia.com/gpu=1")));
  CHECK(used.LessEqualInDims(bound, R("cpu=0,nvidia.com/gpu=0")));
  CHECK(used.LessEqualInDims(bound, R("")));
}

TEST_CASE("IsEmpty, IsZero and equality") {
  Resources empty;
  CHECK(empty.IsEmpty());
  CHECK(empty.IsZero());
  CHECK(empty.ToString() == "none");
  Resources zero = R("cpu=0,nvidia.com/gpu=0");
  CHECK_FALSE(zero.IsEmpty());
  CHECK(zero.IsZero());
  CHECK_FALSE(R("nvidia.com/gpu=1").IsZero());
  CHECK(R("cpu=1,memory=1Gi") == R("memory=1024Mi,cpu=1000m"));
  CHECK_FALSE(R("cpu=1") == R("cpu=1,memory=0"));
}

TEST_CASE("DominantShare is the largest share of the total") {
  Resources total = R("cpu=100,memory=400Gi,nvidia.com/gpu=8");
  CHECK(R("cpu=10,memory=100Gi").DominantShare(total) == Approx(0.25));
  CHECK(R("cpu=50,nvidia.com/gpu=2").DominantShare(total) == Approx(0.5));
  CHECK(R("").DominantShare(total) == 0);
  // Using something the total does not have counts as a full share.
  CHECK(R("cpu=1,example.com/fpga=1").DominantShare(total) == Approx(1.0));
  CHECK(R("cpu=1,example.com/fpga=0").DominantShare(total) == Approx(0.01));
}

TEST_CASE("Interned names are stable and shared") {
  ResourceId a = InternResourceName("example.com/intern-test");
  CHECK(InternResourceName("example.com/intern-test") == a);
  CHECK(ResourceIdName(a) == "example.com/intern-test");
  CHECK(FindResourceId("example.com/intern-test") == a);
  CHECK_FALSE(FindResourceId("example.com/never-interned"));
  CHECK(ResourceIdName(0xffffffffu) == "<unknown resource>");
}

}  // namespace
}  // namespace tephra::api

// Fuzzes the api/ codecs: any input is decoded as a Job, a Queue and a PodGroup; whatever
// decodes is validated, defaulted and re-encoded. Besides "never crash", it checks invariants
// that the webhook and controllers rely on:
//   * an encoded object decodes again and re-encodes to the same text;
//   * a defaulting patch applies to the request it was computed from and yields the object;
//   * a quantity's canonical text parses back to the same value and prints the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "api/batch.h"
#include "api/defaulting.h"
#include "api/scheduling.h"
#include "api/validation.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace tephra;  // NOLINT(build/namespaces): a fuzz target's own file

using fuzz::Check;
using fuzz::WellFormed;

// Queues whose parents form a loop, to exercise the hierarchy walks' cycle guards.
const api::StaticQueueLookup& Queues() {
  static const api::StaticQueueLookup* queues = [] {
    auto* lookup = new api::StaticQueueLookup();
    for (const char* spec : {R"({"metadata":{"name":"root"},"status":{"state":"Open"}})",
                             R"({"metadata":{"name":"default"},"status":{"state":"Open"}})",
                             R"({"metadata":{"name":"a"},"spec":{"parent":"b",
                                 "capability":{"cpu":"4"},"deserved":{"cpu":"2"}}})",
                             R"({"metadata":{"name":"b"},"spec":{"parent":"a",
                                 "guarantee":{"resource":{"cpu":"1"}}}})"}) {
      auto q = api::DecodeQueue(std::string_view(spec));
      Check(q.ok());
      lookup->Put(*q);
    }
    return lookup;
  }();
  return *queues;
}

template <typename T, typename Decode, typename Encode>
void RoundTrip(const T& obj, Decode decode, Encode encode) {
  std::string once = encode(obj);
  auto again = decode(once, api::DecodeOptions{.keep_raw = true});
  Check(again.ok());
  Check(encode(**again) == once);
}

template <typename T, typename Encode>
void CheckPatch(const std::string& request, const api::JsonPatch& patch, const T& defaulted,
                Encode encode) {
  auto patched = api::ApplyJsonPatch(request, patch);
  Check(patched.ok());
  json::Document got;
  json::Document want;
  Check(json::Parse(*patched, &got).ok());
  Check(json::Parse(encode(defaulted), &want).ok());
  Check(json::Equal(got, want));  // by value: member order may differ
}

void FuzzJob(std::string_view text, bool invariants) {
  auto decoded = api::DecodeJob(text, {.keep_raw = true});
  if (!decoded.ok()) return;
  const api::Job& job = **decoded;
  (void)api::ValidateJobCreate(job, &Queues());
  (void)api::ValidateJobUpdate(job, job);
  auto decode = [](std::string_view t, const api::DecodeOptions& o) {
    return api::DecodeJob(t, o);
  };
  api::Job defaulted = job;
  api::JsonPatch patch = api::DefaultJob(&defaulted);
  if (invariants) {
    RoundTrip(job, decode, api::EncodeJob);
    CheckPatch(*job.raw, patch, defaulted, api::EncodeJob);
  }
  (void)api::ValidateJobUpdate(job, defaulted);
}

void FuzzQueue(std::string_view text, bool invariants) {
  auto decoded = api::DecodeQueue(text, {.keep_raw = true});
  if (!decoded.ok()) return;
  const api::Queue& queue = **decoded;
  (void)api::ValidateQueueCreate(queue, Queues());
  (void)api::ValidateQueueUpdate(*Queues().Get("a"), queue, Queues());
  (void)api::ValidateQueueDelete(queue, Queues());
  auto decode = [](std::string_view t, const api::DecodeOptions& o) {
    return api::DecodeQueue(t, o);
  };
  api::Queue defaulted = queue;
  api::JsonPatch patch = api::DefaultQueue(&defaulted);
  if (invariants) {
    RoundTrip(queue, decode, api::EncodeQueue);
    CheckPatch(*queue.raw, patch, defaulted, api::EncodeQueue);
  }
}

void FuzzPodGroup(std::string_view text, bool invariants) {
  auto decoded = api::DecodePodGroup(text, {.keep_raw = true});
  if (!decoded.ok()) return;
  const api::PodGroup& pg = **decoded;
  (void)api::ValidatePodGroupCreate(pg, &Queues());
  auto decode = [](std::string_view t, const api::DecodeOptions& o) {
    return api::DecodePodGroup(t, o);
  };
  if (invariants) RoundTrip(pg, decode, api::EncodePodGroup);
  (void)api::EncodePodGroup(pg);
  (void)api::Resources::FromList(pg.spec.min_resources.value_or(api::ResourceList{})).ToString();
}

void FuzzQuantity(std::string_view text) {
  if (text.size() > 64) return;
  auto q = api::Quantity::Parse(text);
  if (!q.ok()) return;
  std::string canonical = q->String();
  auto again = api::Quantity::Parse(canonical);
  Check(again.ok());
  Check(*again == *q);
  Check(again->String() == canonical);
  (void)q->MilliValue();
  (void)q->Value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  bool invariants = WellFormed(text);
  FuzzJob(text, invariants);
  FuzzQueue(text, invariants);
  FuzzPodGroup(text, invariants);
  FuzzQuantity(text);
  return 0;
}

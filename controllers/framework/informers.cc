#include "controllers/framework/informers.h"

#include <glog/logging.h>

#include "api/batch.h"
#include "api/core.h"
#include "api/scheduling.h"

namespace tephra::controllers {
namespace {

template <typename Decode>
kube::ObjectDecoder Typed(Decode decode) {
  return [decode](const json::Value& v) -> StatusOr<kube::ObjectPtr> {
    auto object = decode(v, api::DecodeOptions{});
    if (!object.ok()) return object.status();
    return kube::ObjectPtr(std::move(*object));
  };
}

}  // namespace

kube::ObjectDecoder JobDecoder() {
  return Typed([](const json::Value& v, const api::DecodeOptions& o) { return api::DecodeJob(v, o); });
}
kube::ObjectDecoder PodDecoder() {
  return Typed([](const json::Value& v, const api::DecodeOptions& o) { return api::DecodePod(v, o); });
}
kube::ObjectDecoder PodGroupDecoder() {
  return Typed(
      [](const json::Value& v, const api::DecodeOptions& o) { return api::DecodePodGroup(v, o); });
}
kube::ObjectDecoder QueueDecoder() {
  return Typed([](const json::Value& v, const api::DecodeOptions& o) { return api::DecodeQueue(v, o); });
}
kube::ObjectDecoder CommandDecoder() {
  return Typed(
      [](const json::Value& v, const api::DecodeOptions& o) { return api::DecodeCommand(v, o); });
}
kube::ObjectDecoder PriorityClassDecoder() {
  return Typed([](const json::Value& v, const api::DecodeOptions& o) {
    return api::DecodePriorityClass(v, o);
  });
}

void WorkerPool::Start(base::WorkQueue* queue, int threads, std::string what,
                       std::function<Status(const std::string&)> sync) {
  queue_ = queue;
  for (int i = 0; i < std::max(1, threads); ++i) {
    threads_.emplace_back([queue, what, sync] {
      while (auto key = queue->Get()) {
        Status s = sync(*key);
        if (s.ok()) {
          queue->Forget(*key);
        } else {
          LOG(WARNING) << what << " " << *key << ": " << s.ToString();
          queue->AddRateLimited(*key);
        }
        queue->Done(*key);
      }
    });
  }
}

void WorkerPool::Stop() {
  if (queue_ != nullptr) queue_->ShutDown();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace tephra::controllers

// Typed informer decoders and a pool of workers over a work queue, shared by the controllers.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kube/informer.h"
#include "base/status.h"
#include "base/workqueue.h"

namespace tephra::controllers {

// Decoders into api::Job, api::Pod, api::PodGroup, api::Queue, api::Command and
// api::PriorityClass for kube::Informer.
kube::ObjectDecoder JobDecoder();
kube::ObjectDecoder PodDecoder();
kube::ObjectDecoder PodGroupDecoder();
kube::ObjectDecoder QueueDecoder();
kube::ObjectDecoder CommandDecoder();
kube::ObjectDecoder PriorityClassDecoder();

// `threads` workers taking keys from one queue: `sync` OK forgets the key's failures, an
// error logs it (naming `what`) and retries the key through the queue's rate limiter.
class WorkerPool {
 public:
  ~WorkerPool() { Stop(); }
  void Start(base::WorkQueue* queue, int threads, std::string what,
             std::function<Status(const std::string&)> sync);
  // Shuts the queue down and joins the workers. Idempotent.
  void Stop();

 private:
  base::WorkQueue* queue_ = nullptr;
  std::vector<std::thread> threads_;
};

}  // namespace tephra::controllers

// The thread-safety canary: writes a GUARDED_BY member without holding its mutex. A clang build
// with Tephra's warnings must reject it; lint:thread-safety fails if it compiles (the analysis
// would then be checking nothing). Never part of a default build.
#include "sync/mutex.h"

namespace tephra::lint {

class Counter {
 public:
  void Increment() { ++count_; }  // the deliberate mistake: no MutexLock

 private:
  sync::Mutex mu_;
  int count_ GUARDED_BY(mu_) = 0;
};

void Use(Counter& counter) {
  counter.Increment();
}

}  // namespace tephra::lint

#include "scheduler/actions/actions.h"

namespace tephra::scheduler {

std::vector<ActionFactory> BuiltinActionFactories() {
  return {NewEnqueueAction, NewAllocateAction, NewBackfillAction, NewPreemptAction,
          NewReclaimAction};
}

}  // namespace tephra::scheduler

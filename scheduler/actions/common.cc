#include <algorithm>

#include "scheduler/actions/actions.h"

namespace tephra::scheduler {

bool Schedulable(const TaskInfo& t) {
  return t.status == TaskStatus::kPending && !t.best_effort() &&
         t.pod->spec->scheduling_gates.empty();
}

void IndexHeap::Push(size_t i) {
  items_.push_back(i);
  // std heaps keep the "largest" on top: invert so the element that goes first is on top.
  std::push_heap(items_.begin(), items_.end(), [this](size_t a, size_t b) { return first_(b, a); });
}

size_t IndexHeap::Pop() {
  std::pop_heap(items_.begin(), items_.end(), [this](size_t a, size_t b) { return first_(b, a); });
  size_t top = items_.back();
  items_.pop_back();
  return top;
}

bool NodePicker::Reusable(const SchedulingSpec& spec) {
  // A pod's claims take volumes, which changes where its siblings' claims fit.
  return spec.host_ports.empty() && !spec.has_pod_affinity && spec.spread.empty() &&
         spec.claims.empty();
}

Placement NodePicker::FromMemo() {
  Placement out;
  size_t best_k = 0;
  for (size_t k = 1; k < memo_->nodes.size(); ++k) {
    if (memo_->per_node[k] + memo_->batch[k] > memo_->per_node[best_k] + memo_->batch[best_k]) {
      best_k = k;
    }
  }
  out.node = memo_->nodes[best_k];
  return out;
}

void NodePicker::Placed(const TaskInfo& task, size_t node) {
  if (!memo_ || memo_->spec != task.pod->spec.get()) return;
  for (size_t k = 0; k < memo_->nodes.size(); ++k) {
    if (memo_->nodes[k] != node) continue;
    const NodeInfo& n = session_.node(node);
    if (!n.FitsIdle(task.request(), nullptr) || !session_.PredicateAt(task, node).ok()) {
      memo_->nodes.erase(memo_->nodes.begin() + static_cast<std::ptrdiff_t>(k));
      memo_->per_node.erase(memo_->per_node.begin() + static_cast<std::ptrdiff_t>(k));
      memo_->batch.erase(memo_->batch.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      memo_->per_node[k] = session_.NodeOrderScore(task, n);
    }
    break;
  }
  if (memo_->nodes.empty()) memo_.reset();
}

Placement NodePicker::Pick(const TaskInfo& task, bool allow_pipeline) {
  const SchedulingSpec* spec = task.pod->spec.get();
  if (memo_ && memo_->spec == spec) return FromMemo();
  memo_.reset();
  Placement out;
  const size_t n = domain_ ? domain_->size() : session_.node_count();
  if (n == 0) {
    out.errors.other = "no nodes are available";
    return out;
  }
  const size_t want = session_.NodesToFind(n);
  const api::Resources& request = task.request();
  size_t idle_found = 0;
  indexes_.clear();
  future_.clear();  // nodes that fit only once releasing resources are free
  size_t scanned = 0;
  for (; scanned < n && idle_found < want; ++scanned) {
    size_t i = (next_start_ + scanned) % n;
    if (domain_) i = (*domain_)[i];
    const NodeInfo& node = session_.node(i);
    const char* why = nullptr;
    bool idle = node.FitsIdle(request, &why);
    if (!idle) {
      const char* future_why = nullptr;
      if (!allow_pipeline || !node.FitsFutureIdle(request, &future_why)) {
        out.errors.Add(why);
        continue;
      }
    }
    Fit fit = session_.PredicateAt(task, i);
    if (!fit.ok()) {
      out.errors.Add(fit.reason);
      continue;
    }
    if (idle) {
      indexes_.push_back(i);
      ++idle_found;
    } else {
      future_.push_back(i);
    }
  }
  next_start_ = (next_start_ + scanned) % n;
  bool pipelined = false;
  if (indexes_.empty()) {
    if (future_.empty()) {
      out.errors.nodes = static_cast<int>(scanned);
      return out;
    }
    indexes_.swap(future_);
    pipelined = true;
  }
  if (!pipelined && Reusable(*spec) && session_.HasNodeOrder()) {
    Memo memo;
    memo.spec = spec;
    memo.nodes = indexes_;
    candidates_.clear();
    for (size_t i : indexes_) candidates_.push_back(&session_.node(i));
    session_.NodeScoresSplit(task, candidates_, &memo.per_node, &memo.batch);
    memo_ = std::move(memo);
    return FromMemo();
  }
  size_t best = indexes_[0];
  if (indexes_.size() > 1 && session_.HasNodeOrder()) {
    candidates_.clear();
    for (size_t i : indexes_) candidates_.push_back(&session_.node(i));
    session_.NodeScores(task, candidates_, &scores_);
    size_t best_k = 0;
    for (size_t k = 1; k < scores_.size(); ++k) {
      if (scores_[k] > scores_[best_k]) best_k = k;
    }
    best = indexes_[best_k];
  }
  out.node = best;
  out.pipelined = pipelined;
  return out;
}

}  // namespace tephra::scheduler

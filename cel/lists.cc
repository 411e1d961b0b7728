// List functions (docs/cel.md, "Lists"): cel-go's lists extension at version 3 (slice,
// flatten, sort, lists.range, reverse, distinct), its sets extension (sets.contains,
// sets.equivalent, sets.intersects) and Kubernetes' lists library (isSorted, sum, min, max,
// indexOf, lastIndexOf).
#include <algorithm>
#include <limits>

#include "cel/functions.h"

namespace tephra::cel {
namespace {

std::shared_ptr<VectorList> NewList(size_t reserve) {
  auto list = std::make_shared<VectorList>();
  list->items().reserve(reserve);
  return list;
}

Value Slice(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsList() || a[1].kind() != ValueKind::kInt || a[2].kind() != ValueKind::kInt) {
    return NoSuchOverload();
  }
  const ListValue& list = a[0].list();
  int64_t start = a[1].int_value();
  int64_t end = a[2].int_value();
  std::string range = "cannot slice(" + std::to_string(start) + ", " + std::to_string(end) + ")";
  if (start < 0 || end < 0) return Value::Error(range + ", negative indexes not supported");
  if (start > end) {
    return Value::Error(range + ", start index must be less than or equal to end index");
  }
  if (static_cast<uint64_t>(end) > list.size()) {
    return Value::Error(range + ", list is length " + std::to_string(list.size()));
  }
  ctx.cost += TraversalCost(static_cast<size_t>(end - start));
  auto out = NewList(static_cast<size_t>(end - start));
  for (auto i = static_cast<size_t>(start); i < static_cast<size_t>(end); ++i) {
    out->items().push_back(list.Get(i));
  }
  return Value::List(std::move(out));
}

// Flattens `depth` levels with an explicit stack of (list, next index, level).
Value Flatten(const Value* a, size_t n, CallContext& ctx) {
  if (!a[0].IsList() || (n == 2 && a[1].kind() != ValueKind::kInt)) return NoSuchOverload();
  int64_t depth = n == 2 ? a[1].int_value() : 1;
  if (depth < 0) return Value::Error("level must be non-negative");
  auto out = NewList(a[0].list().size());
  struct Frame {
    const ListValue* list;
    size_t next;
    int64_t level;
  };
  std::vector<Value> keep{a[0]};  // the nested lists being walked
  std::vector<Frame> stack{{&a[0].list(), 0, 0}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next >= f.list->size()) {
      stack.pop_back();
      continue;
    }
    Value item = f.list->Get(f.next++);
    ctx.cost += 1;
    if (item.IsList() && f.level < depth) {
      int64_t level = f.level + 1;
      keep.push_back(item);
      stack.push_back({&keep.back().list(), 0, level});
    } else {
      out->items().push_back(std::move(item));
    }
  }
  return Value::List(std::move(out));
}

// The order of two elements of a sortable list: the same kind, with an order (Order), NaN
// placed as equal; 3 otherwise.
int ElementOrder(const Value& x, const Value& y) {
  if (x.kind() != y.kind()) return 3;
  int c = Order(x, y);
  return c == 2 ? 0 : c;
}

Value Sort(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsList()) return NoSuchOverload();
  const ListValue& list = a[0].list();
  auto out = NewList(list.size());
  for (size_t i = 0; i < list.size(); ++i) out->items().push_back(list.Get(i));
  for (size_t i = 1; i < out->items().size(); ++i) {
    if (ElementOrder(out->items()[0], out->items()[i]) == 3) {
      return Value::Error("list elements must have the same comparable type");
    }
  }
  ctx.cost += TraversalCost(list.size()) * 4;
  std::stable_sort(out->items().begin(), out->items().end(),
                   [](const Value& x, const Value& y) { return ElementOrder(x, y) < 0; });
  return Value::List(std::move(out));
}

Value Range(const Value* a, size_t, CallContext& ctx) {
  if (a[0].kind() != ValueKind::kInt) return NoSuchOverload();
  int64_t n = std::max<int64_t>(a[0].int_value(), 0);
  // Charged before the list is built, so an oversized range stops at the cost limit.
  ctx.cost += static_cast<uint64_t>(n);
  if (n > 10'000'000) return Value::Error("lists.range: " + std::to_string(n) + " is too long");
  auto out = NewList(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out->items().push_back(Value::Int(i));
  return Value::List(std::move(out));
}

Value Reverse(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsList()) return NoSuchOverload();
  const ListValue& list = a[0].list();
  ctx.cost += TraversalCost(list.size());
  auto out = NewList(list.size());
  for (size_t i = list.size(); i-- > 0;) out->items().push_back(list.Get(i));
  return Value::List(std::move(out));
}

Value Distinct(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsList()) return NoSuchOverload();
  const ListValue& list = a[0].list();
  auto out = NewList(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    Value item = list.Get(i);
    ctx.cost += TraversalCost(out->items().size());
    bool seen = std::any_of(out->items().begin(), out->items().end(),
                            [&](const Value& v) { return Equal(v, item); });
    if (!seen) out->items().push_back(std::move(item));
  }
  return Value::List(std::move(out));
}

bool ListHas(const ListValue& list, const Value& item) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (Equal(list.Get(i), item)) return true;
  }
  return false;
}

// sets.contains(a, b): every element of b is in a.
Value SetsContains(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsList() || !a[1].IsList()) return NoSuchOverload();
  ctx.cost += TraversalCost(a[0].list().size() * a[1].list().size());
  for (size_t i = 0; i < a[1].list().size(); ++i) {
    if (!ListHas(a[0].list(), a[1].list().Get(i))) return Value::Bool(false);
  }
  return Value::Bool(true);
}

Value SetsEquivalent(const Value* a, size_t n, CallContext& ctx) {
  Value forward = SetsContains(a, n, ctx);
  if (!forward.IsTrue()) return forward;
  Value swapped[2] = {a[1], a[0]};
  return SetsContains(swapped, n, ctx);
}

Value SetsIntersects(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsList() || !a[1].IsList()) return NoSuchOverload();
  ctx.cost += TraversalCost(a[0].list().size() * a[1].list().size());
  for (size_t i = 0; i < a[1].list().size(); ++i) {
    if (ListHas(a[0].list(), a[1].list().Get(i))) return Value::Bool(true);
  }
  return Value::Bool(false);
}

Value IsSorted(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsList()) return NoSuchOverload();
  const ListValue& list = a[0].list();
  ctx.cost += TraversalCost(list.size());
  for (size_t i = 1; i < list.size(); ++i) {
    int c = ElementOrder(list.Get(i - 1), list.Get(i));
    if (c == 3) return Value::Error("isSorted: list elements must have the same comparable type");
    if (c > 0) return Value::Bool(false);
  }
  return Value::Bool(true);
}

Value Sum(const Value* a, size_t, CallContext& ctx) {
  if (!a[0].IsList()) return NoSuchOverload();
  const ListValue& list = a[0].list();
  ctx.cost += TraversalCost(list.size());
  if (list.size() == 0) return Value::Int(0);
  Value total = list.Get(0);
  if (!total.IsNumber()) return Value::Error("sum: list elements must be numbers");
  for (size_t i = 1; i < list.size(); ++i) {
    Value item = list.Get(i);
    if (item.kind() != total.kind()) return Value::Error("sum: list elements must have one type");
    switch (total.kind()) {
      case ValueKind::kInt: {
        int64_t r;
        if (__builtin_add_overflow(total.int_value(), item.int_value(), &r)) {
          return Value::Error("integer overflow");
        }
        total = Value::Int(r);
        break;
      }
      case ValueKind::kUint: {
        uint64_t r;
        if (__builtin_add_overflow(total.uint_value(), item.uint_value(), &r)) {
          return Value::Error("integer overflow");
        }
        total = Value::Uint(r);
        break;
      }
      default:
        total = Value::Double(total.double_value() + item.double_value());
        break;
    }
  }
  return total;
}

Value Extreme(const Value* a, CallContext& ctx, bool want_max) {
  if (!a[0].IsList()) return NoSuchOverload();
  const ListValue& list = a[0].list();
  if (list.size() == 0) {
    return Value::Error(std::string(want_max ? "max" : "min") + " called on an empty list");
  }
  ctx.cost += TraversalCost(list.size());
  Value best = list.Get(0);
  for (size_t i = 1; i < list.size(); ++i) {
    Value item = list.Get(i);
    int c = ElementOrder(item, best);
    if (c == 3) return Value::Error("list elements must have the same comparable type");
    if (want_max ? c > 0 : c < 0) best = std::move(item);
  }
  return best;
}

Value Min(const Value* a, size_t, CallContext& ctx) {
  return Extreme(a, ctx, false);
}

Value Max(const Value* a, size_t, CallContext& ctx) {
  return Extreme(a, ctx, true);
}

Value ListIndexOf(const Value* a, size_t, CallContext& ctx, bool last) {
  if (!a[0].IsList()) return NoSuchOverload();
  const ListValue& list = a[0].list();
  ctx.cost += TraversalCost(list.size());
  for (size_t k = 0; k < list.size(); ++k) {
    size_t i = last ? list.size() - 1 - k : k;
    if (Equal(list.Get(i), a[1])) return Value::Int(static_cast<int64_t>(i));
  }
  return Value::Int(-1);
}

Value ListFirstIndexOf(const Value* a, size_t n, CallContext& ctx) {
  return ListIndexOf(a, n, ctx, false);
}

Value ListLastIndexOf(const Value* a, size_t n, CallContext& ctx) {
  return ListIndexOf(a, n, ctx, true);
}

}  // namespace

void RegisterListFunctions(FunctionRegistry& r) {
  r.Add(Library::kLists, "slice", Slice, {"list(A).(int, int) -> list(A)"});
  r.Add(Library::kLists, "flatten", Flatten,
        {"list(dyn).() -> list(dyn)", "list(dyn).(int) -> list(dyn)"});
  r.Add(Library::kLists, "sort", Sort, {"list(A).() -> list(A)"});
  r.Add(Library::kLists, "lists.range", Range, {"(int) -> list(int)"});
  r.Add(Library::kLists, "reverse", Reverse, {"list(A).() -> list(A)"});
  r.Add(Library::kLists, "distinct", Distinct, {"list(A).() -> list(A)"});
  r.Add(Library::kSets, "sets.contains", SetsContains, {"(list(A), list(A)) -> bool"});
  r.Add(Library::kSets, "sets.equivalent", SetsEquivalent, {"(list(A), list(A)) -> bool"});
  r.Add(Library::kSets, "sets.intersects", SetsIntersects, {"(list(A), list(A)) -> bool"});
  r.Add(Library::kKubernetes, "isSorted", IsSorted, {"list(A).() -> bool"});
  r.Add(Library::kKubernetes, "sum", Sum, {"list(A).() -> A"});
  r.Add(Library::kKubernetes, "min", Min, {"list(A).() -> A"});
  r.Add(Library::kKubernetes, "max", Max, {"list(A).() -> A"});
  r.Add(Library::kKubernetes, "indexOf", ListFirstIndexOf, {"list(A).(A) -> int"});
  r.Add(Library::kKubernetes, "lastIndexOf", ListLastIndexOf, {"list(A).(A) -> int"});
}

}  // namespace tephra::cel

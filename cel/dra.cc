#include "cel/dra.h"

#include "cel/semver.h"

namespace tephra::cel {
namespace {

bool KeyIs(const Value& key, std::string_view name) {
  return key.kind() == ValueKind::kString && key.text() == name;
}

// name -> value, for one domain's attributes or capacities. Lookups hand out views of the
// stored values, so reading an attribute copies no owner.
class NameMap final : public MapValue {
 public:
  explicit NameMap(std::string domain) : domain_(std::move(domain)) {}

  size_t size() const override { return entries_.size(); }
  bool Find(const Value& key, Value* value) const override {
    if (key.kind() != ValueKind::kString) return false;
    for (const auto& [name, v] : entries_) {
      if (name == key.text()) {
        *value = v.View();
        return true;
      }
    }
    return false;
  }
  Value KeyAt(size_t i) const override { return Value::StringView(entries_[i].first); }
  Value ValueAt(size_t i) const override { return entries_[i].second.View(); }

  const std::string& domain() const { return domain_; }
  void Set(std::string_view name, Value value) {
    for (auto& [n, v] : entries_) {
      if (n == name) {
        v = std::move(value);
        return;
      }
    }
    entries_.emplace_back(std::string(name), std::move(value));
  }

 private:
  std::string domain_;
  std::vector<std::pair<std::string, Value>> entries_;
};

// domain -> NameMap. Kubernetes answers a lookup of a domain the device does not have with an
// empty map (so selectors can test attributes of another driver's domain without an error),
// while `in` still says the domain is absent.
class DomainMap final : public MapValue {
 public:
  size_t size() const override { return domains_.size(); }
  bool Find(const Value& key, Value* value) const override {
    if (key.kind() != ValueKind::kString) return false;
    const NameMap* domain = Lookup(key.text());
    *value = Value::MapView(domain != nullptr ? domain : &Empty());
    return true;
  }
  bool Contains(const Value& key) const override {
    return key.kind() == ValueKind::kString && Lookup(key.text()) != nullptr;
  }
  Value KeyAt(size_t i) const override { return Value::StringView(domains_[i]->domain()); }
  Value ValueAt(size_t i) const override { return Value::MapView(domains_[i].get()); }

  NameMap& Domain(std::string_view domain) {
    for (auto& d : domains_) {
      if (d->domain() == domain) return *d;
    }
    domains_.push_back(std::make_unique<NameMap>(std::string(domain)));
    return *domains_.back();
  }

 private:
  static const NameMap& Empty() {
    static const NameMap* empty = new NameMap("");
    return *empty;
  }
  const NameMap* Lookup(std::string_view domain) const {
    for (const auto& d : domains_) {
      if (d->domain() == domain) return d.get();
    }
    return nullptr;
  }

  std::vector<std::unique_ptr<NameMap>> domains_;
};

constexpr std::string_view kDriver = "driver";
constexpr std::string_view kAttributes = "attributes";
constexpr std::string_view kCapacity = "capacity";
constexpr std::string_view kAllowMultipleAllocations = "allowMultipleAllocations";

}  // namespace

struct DraDevice::Impl final : public MapValue {
  std::string driver;
  bool allow_multiple_allocations = false;
  DomainMap attributes;
  DomainMap capacity;

  size_t size() const override { return 4; }
  bool Find(const Value& key, Value* value) const override {
    if (KeyIs(key, kDriver)) {
      *value = Value::StringView(driver);
    } else if (KeyIs(key, kAttributes)) {
      *value = Value::MapView(&attributes);
    } else if (KeyIs(key, kCapacity)) {
      *value = Value::MapView(&capacity);
    } else if (KeyIs(key, kAllowMultipleAllocations)) {
      *value = Value::Bool(allow_multiple_allocations);
    } else {
      return false;
    }
    return true;
  }
  Value KeyAt(size_t i) const override {
    static constexpr std::string_view kKeys[] = {kDriver, kAttributes, kCapacity,
                                                 kAllowMultipleAllocations};
    return Value::StringView(kKeys[i]);
  }
  Value ValueAt(size_t i) const override {
    Value v;
    Find(KeyAt(i), &v);
    return v;
  }

  // "domain/name" or "name" (the driver's domain).
  NameMap& DomainOf(DomainMap& map, std::string_view* name) {
    size_t slash = name->find('/');
    if (slash == std::string_view::npos) return map.Domain(driver);
    std::string_view domain = name->substr(0, slash);
    name->remove_prefix(slash + 1);
    return map.Domain(domain);
  }
  void SetAttribute(std::string_view name, Value value) {
    NameMap& domain = DomainOf(attributes, &name);
    domain.Set(name, std::move(value));
  }
};

DraDevice::DraDevice(std::string driver, bool allow_multiple_allocations)
    : impl_(std::make_unique<Impl>()) {
  impl_->driver = std::move(driver);
  impl_->allow_multiple_allocations = allow_multiple_allocations;
}

DraDevice::DraDevice(DraDevice&&) noexcept = default;
DraDevice& DraDevice::operator=(DraDevice&&) noexcept = default;
DraDevice::~DraDevice() = default;

void DraDevice::SetInt(std::string_view name, int64_t value) {
  impl_->SetAttribute(name, Value::Int(value));
}

void DraDevice::SetBool(std::string_view name, bool value) {
  impl_->SetAttribute(name, Value::Bool(value));
}

void DraDevice::SetString(std::string_view name, std::string value) {
  impl_->SetAttribute(name, Value::String(std::move(value)));
}

void DraDevice::SetVersion(std::string_view name, std::string_view version) {
  StatusOr<Semver> parsed = Semver::Parse(version);
  if (!parsed.ok()) {
    impl_->SetAttribute(
        name, Value::Error("attribute " + std::string(name) + ": " + parsed.status().message()));
    return;
  }
  impl_->SetAttribute(name, Value::SemverValue(std::make_shared<const Semver>(*parsed)));
}

void DraDevice::SetList(std::string_view name, std::vector<Value> values) {
  impl_->SetAttribute(name, Value::List(std::make_shared<VectorList>(std::move(values))));
}

void DraDevice::SetCapacity(std::string_view name, api::Quantity value) {
  NameMap& domain = impl_->DomainOf(impl_->capacity, &name);
  domain.Set(name, Value::Quantity(std::move(value)));
}

const std::string& DraDevice::driver() const {
  return impl_->driver;
}

Value DraDevice::AsValue() const {
  return Value::MapView(impl_.get());
}

TypeRef DraDeviceType() {
  static const TypeRef type = Type::Object(
      "kubernetes.DRADevice",
      {
          {"driver", Type::String()},
          {"allowMultipleAllocations", Type::Bool()},
          {"attributes", Type::Map(Type::String(), Type::Map(Type::String(), Type::Any()))},
          {"capacity", Type::Map(Type::String(), Type::Map(Type::String(), Type::Quantity()))},
      });
  return type;
}

const Environment& DeviceSelectorEnvironment() {
  static const Environment* env = [] {
    auto* e = new Environment(Environment::Kubernetes());
    e->DeclareVariable("device", DraDeviceType())
        .SetResultType(Type::Bool())
        .SetCostLimit(kDeviceSelectorCostLimit);
    return e;
  }();
  return *env;
}

StatusOr<Program> CompileDeviceSelector(std::string_view expression) {
  if (expression.size() > kDeviceSelectorMaxLength) {
    return InvalidArgument("the expression is " + std::to_string(expression.size()) +
                           " bytes long; at most " + std::to_string(kDeviceSelectorMaxLength) +
                           " are allowed");
  }
  return Compile(expression, DeviceSelectorEnvironment());
}

StatusOr<bool> DeviceMatches(const Program& selector, const DraDevice& device) {
  const Value variables[] = {device.AsValue()};
  Value result = selector.Evaluate(variables);
  if (result.IsError()) {
    return InvalidArgument("CEL runtime error: " + std::string(result.error_message()));
  }
  if (!result.IsBool()) {
    return InvalidArgument("CEL result of type " + std::string(result.Type().name) +
                           " could not be converted to bool");
  }
  return result.bool_value();
}

}  // namespace tephra::cel

#include "cel/types.h"

#include <cctype>

namespace tephra::cel {

#define TEPHRA_CEL_SIMPLE_TYPE(Name, Kind)                                   \
  TypeRef Type::Name() {                                                     \
    static const TypeRef type = std::shared_ptr<const Type>(new Type(Kind)); \
    return type;                                                             \
  }
TEPHRA_CEL_SIMPLE_TYPE(Dyn, TypeKind::kDyn)
TEPHRA_CEL_SIMPLE_TYPE(Null, TypeKind::kNull)
TEPHRA_CEL_SIMPLE_TYPE(Bool, TypeKind::kBool)
TEPHRA_CEL_SIMPLE_TYPE(Int, TypeKind::kInt)
TEPHRA_CEL_SIMPLE_TYPE(Uint, TypeKind::kUint)
TEPHRA_CEL_SIMPLE_TYPE(Double, TypeKind::kDouble)
TEPHRA_CEL_SIMPLE_TYPE(String, TypeKind::kString)
TEPHRA_CEL_SIMPLE_TYPE(Bytes, TypeKind::kBytes)
TEPHRA_CEL_SIMPLE_TYPE(Quantity, TypeKind::kQuantity)
TEPHRA_CEL_SIMPLE_TYPE(Semver, TypeKind::kSemver)
TEPHRA_CEL_SIMPLE_TYPE(Error, TypeKind::kError)
#undef TEPHRA_CEL_SIMPLE_TYPE

TypeRef Type::Any() {
  static const TypeRef type = [] {
    auto* t = new Type(TypeKind::kDyn);
    t->name_ = "any";
    return TypeRef(t);
  }();
  return type;
}

TypeRef Type::List(TypeRef element) {
  auto* t = new Type(TypeKind::kList);
  t->params_ = {std::move(element)};
  return TypeRef(t);
}

TypeRef Type::Map(TypeRef key, TypeRef value) {
  auto* t = new Type(TypeKind::kMap);
  t->params_ = {std::move(key), std::move(value)};
  return TypeRef(t);
}

TypeRef Type::TypeOf(TypeRef type) {
  auto* t = new Type(TypeKind::kType);
  if (type) t->params_ = {std::move(type)};
  return TypeRef(t);
}

TypeRef Type::Param(std::string name) {
  auto* t = new Type(TypeKind::kParam);
  t->name_ = std::move(name);
  return TypeRef(t);
}

TypeRef Type::Object(std::string name, std::vector<std::pair<std::string, TypeRef>> fields) {
  auto* t = new Type(TypeKind::kObject);
  t->name_ = std::move(name);
  t->fields_ = std::move(fields);
  return TypeRef(t);
}

TypeRef Type::Field(std::string_view field) const {
  for (const auto& [name, type] : fields_) {
    if (name == field) return type;
  }
  return nullptr;
}

std::string Type::ToString() const {
  switch (kind_) {
    case TypeKind::kDyn:
      return name_.empty() ? "dyn" : name_;
    case TypeKind::kNull:
      return "null_type";
    case TypeKind::kBool:
      return "bool";
    case TypeKind::kInt:
      return "int";
    case TypeKind::kUint:
      return "uint";
    case TypeKind::kDouble:
      return "double";
    case TypeKind::kString:
      return "string";
    case TypeKind::kBytes:
      return "bytes";
    case TypeKind::kList:
      return "list(" + params_[0]->ToString() + ")";
    case TypeKind::kMap:
      return "map(" + params_[0]->ToString() + ", " + params_[1]->ToString() + ")";
    case TypeKind::kType:
      return params_.empty() ? "type" : "type(" + params_[0]->ToString() + ")";
    case TypeKind::kQuantity:
      return "kubernetes.Quantity";
    case TypeKind::kSemver:
      return "kubernetes.Semver";
    case TypeKind::kObject:
    case TypeKind::kParam:
      return name_;
    case TypeKind::kError:
      return "*error*";
  }
  return "?";
}

namespace {

// Declarations are this library's own constant strings, so the recursion here follows their
// (shallow) nesting, never an input's.
class TypeNotation {
 public:
  explicit TypeNotation(std::string_view text) : text_(text) {}

  StatusOr<TypeRef> ParseAll() {
    TEPHRA_ASSIGN_OR_RETURN(TypeRef t, ParseOne());
    Skip();
    if (pos_ != text_.size()) return Bad();
    return t;
  }

 private:
  Status Bad() const { return InvalidArgument("bad type notation \"" + std::string(text_) + "\""); }
  void Skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  StatusOr<TypeRef> ParseOne() {
    Skip();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    std::string_view word = text_.substr(start, pos_ - start);
    if (word == "dyn") return Type::Dyn();
    if (word == "null") return Type::Null();
    if (word == "bool") return Type::Bool();
    if (word == "int") return Type::Int();
    if (word == "uint") return Type::Uint();
    if (word == "double") return Type::Double();
    if (word == "string") return Type::String();
    if (word == "bytes") return Type::Bytes();
    if (word == "quantity") return Type::Quantity();
    if (word == "semver") return Type::Semver();
    if (word.size() == 1 && word[0] >= 'A' && word[0] <= 'Z') return Type::Param(std::string(word));
    if (word == "list" || word == "map" || word == "type") {
      if (!Eat('(')) {
        if (word == "type") return Type::TypeOf(nullptr);
        return Bad();
      }
      TEPHRA_ASSIGN_OR_RETURN(TypeRef first, ParseOne());
      TypeRef result;
      if (word == "map") {
        if (!Eat(',')) return Bad();
        TEPHRA_ASSIGN_OR_RETURN(TypeRef second, ParseOne());
        result = Type::Map(first, second);
      } else {
        result = word == "list" ? Type::List(first) : Type::TypeOf(first);
      }
      if (!Eat(')')) return Bad();
      return result;
    }
    return Bad();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<TypeRef> Type::Parse(std::string_view text) {
  return TypeNotation(text).ParseAll();
}

bool SameType(const TypeRef& a, const TypeRef& b) {
  if (a->kind() != b->kind()) return false;
  if (a->kind() == TypeKind::kObject || a->kind() == TypeKind::kParam) {
    return a->name() == b->name();
  }
  if (a->params().size() != b->params().size()) return false;
  for (size_t i = 0; i < a->params().size(); ++i) {
    if (!SameType(a->params()[i], b->params()[i])) return false;
  }
  return true;
}

bool IsAssignable(const TypeRef& formal, const TypeRef& actual, Substitution* subst) {
  if (actual->kind() == TypeKind::kDyn || actual->kind() == TypeKind::kError) return true;
  switch (formal->kind()) {
    case TypeKind::kDyn:
      return true;
    case TypeKind::kParam: {
      auto it = subst->find(formal->name());
      if (it == subst->end()) {
        subst->emplace(formal->name(), actual);
        return true;
      }
      if (it->second->kind() == TypeKind::kDyn) return true;
      if (IsAssignable(it->second, actual, subst)) return true;
      // A wider binding: list(int) then list(dyn) binds the parameter to the wider type.
      Substitution trial = *subst;
      if (IsAssignable(actual, it->second, &trial)) {
        it->second = actual;
        return true;
      }
      return false;
    }
    default:
      break;
  }
  if (formal->kind() != actual->kind()) return false;
  switch (formal->kind()) {
    case TypeKind::kList:
    case TypeKind::kMap:
      for (size_t i = 0; i < formal->params().size(); ++i) {
        if (!IsAssignable(formal->params()[i], actual->params()[i], subst)) return false;
      }
      return true;
    case TypeKind::kType:
      return true;  // every type value is a value of type `type`
    case TypeKind::kObject:
      return formal->name() == actual->name();
    default:
      return true;
  }
}

TypeRef Substitute(const TypeRef& formal, const Substitution& subst) {
  switch (formal->kind()) {
    case TypeKind::kParam: {
      auto it = subst.find(formal->name());
      return it == subst.end() ? Type::Dyn() : Substitute(it->second, subst);
    }
    case TypeKind::kList:
      return Type::List(Substitute(formal->params()[0], subst));
    case TypeKind::kMap:
      return Type::Map(Substitute(formal->params()[0], subst),
                       Substitute(formal->params()[1], subst));
    case TypeKind::kType:
      if (formal->params().empty()) return formal;
      return Type::TypeOf(Substitute(formal->params()[0], subst));
    default:
      return formal;
  }
}

}  // namespace tephra::cel

#include "cel/semver.h"

#include <algorithm>

namespace tephra::cel {
namespace {

Status Invalid(std::string_view text, std::string_view why) {
  return InvalidArgument("invalid semantic version \"" + std::string(text) +
                         "\": " + std::string(why));
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsIdentifier(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
  });
}

bool ParseNumber(std::string_view s, uint64_t* out) {
  if (!IsDigits(s) || (s.size() > 1 && s[0] == '0')) return false;
  uint64_t value = 0;
  for (char c : s) {
    auto digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

std::vector<std::string_view> Split(std::string_view s, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t at = s.find(separator, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

}  // namespace

StatusOr<Semver> Semver::Parse(std::string_view text) {
  if (text.empty()) return Invalid(text, "empty");
  std::string_view rest = text;
  std::string_view build;
  if (size_t plus = rest.find('+'); plus != std::string_view::npos) {
    build = rest.substr(plus + 1);
    rest = rest.substr(0, plus);
    for (std::string_view part : Split(build, '.')) {
      if (!IsIdentifier(part)) return Invalid(text, "invalid build metadata");
    }
  }
  std::string_view prerelease;
  bool has_prerelease = false;
  if (size_t dash = rest.find('-'); dash != std::string_view::npos) {
    prerelease = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
    has_prerelease = true;
  }
  std::vector<std::string_view> numbers = Split(rest, '.');
  if (numbers.size() != 3) return Invalid(text, "expected MAJOR.MINOR.PATCH");
  Semver v;
  uint64_t* fields[] = {&v.major_, &v.minor_, &v.patch_};
  for (size_t i = 0; i < 3; ++i) {
    if (!ParseNumber(numbers[i], fields[i])) {
      return Invalid(text, "version numbers are digits without leading zeros");
    }
  }
  if (has_prerelease) {
    for (std::string_view part : Split(prerelease, '.')) {
      if (!IsIdentifier(part)) return Invalid(text, "invalid pre-release identifier");
      if (IsDigits(part) && part.size() > 1 && part[0] == '0') {
        return Invalid(text, "numeric pre-release identifiers have no leading zeros");
      }
      v.prerelease_.emplace_back(part);
    }
  }
  v.build_ = std::string(build);
  return v;
}

StatusOr<Semver> Semver::ParseNormalized(std::string_view text) {
  std::string_view s = text;
  if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
  // MAJOR.MINOR.(PATCH with its pre-release and build)
  std::vector<std::string> parts;
  for (int i = 0; i < 2; ++i) {
    size_t dot = s.find('.');
    if (dot == std::string_view::npos) break;
    parts.emplace_back(s.substr(0, dot));
    s.remove_prefix(dot + 1);
  }
  parts.emplace_back(s);
  for (std::string& part : parts) {
    if (part.size() > 1) {
      size_t lead = part.find_first_not_of('0');
      part = lead == std::string::npos ? "" : part.substr(lead);
      if (part.empty() || part[0] < '0' || part[0] > '9') part.insert(0, "0");
    }
  }
  if (parts.size() < 3) {
    if (parts.back().find_first_of("+-") != std::string::npos) {
      return Invalid(text, "a short version cannot carry pre-release or build metadata");
    }
    while (parts.size() < 3) parts.emplace_back("0");
  }
  return Parse(parts[0] + "." + parts[1] + "." + parts[2]);
}

int Semver::Compare(const Semver& other) const {
  auto cmp = [](uint64_t a, uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); };
  if (int c = cmp(major_, other.major_); c != 0) return c;
  if (int c = cmp(minor_, other.minor_); c != 0) return c;
  if (int c = cmp(patch_, other.patch_); c != 0) return c;
  if (prerelease_.empty() || other.prerelease_.empty()) {
    if (prerelease_.empty() == other.prerelease_.empty()) return 0;
    return prerelease_.empty() ? 1 : -1;  // a release follows its pre-releases
  }
  size_t common = std::min(prerelease_.size(), other.prerelease_.size());
  for (size_t i = 0; i < common; ++i) {
    const std::string& a = prerelease_[i];
    const std::string& b = other.prerelease_[i];
    bool a_number = IsDigits(a);
    bool b_number = IsDigits(b);
    if (a_number && b_number) {
      if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
      if (int c = a.compare(b); c != 0) return c < 0 ? -1 : 1;
    } else if (a_number != b_number) {
      return a_number ? -1 : 1;
    } else if (int c = a.compare(b); c != 0) {
      return c < 0 ? -1 : 1;
    }
  }
  return cmp(prerelease_.size(), other.prerelease_.size());
}

std::string Semver::String() const {
  std::string out =
      std::to_string(major_) + "." + std::to_string(minor_) + "." + std::to_string(patch_);
  for (size_t i = 0; i < prerelease_.size(); ++i) {
    out += (i == 0 ? "-" : ".") + prerelease_[i];
  }
  if (!build_.empty()) out += "+" + build_;
  return out;
}

}  // namespace tephra::cel

#include "dflow/flags.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dflow {
namespace {

bool Contains(const std::vector<std::string>& names, absl::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

absl::Status Invalid(absl::string_view a, absl::string_view b, absl::string_view c = "", absl::string_view d = "") {
  return absl::InvalidArgumentError(absl::StrCat(a, b, c, d));
}

// "an integer in 0..9", or for a range open above "a positive integer" and the like.
std::string RangeText(int64_t min, int64_t max) {
  if (max == std::numeric_limits<int64_t>::max()) {
    if (min == 1) return "must be a positive integer";
    if (min == 0) return "must be a non-negative integer";
    if (min == std::numeric_limits<int64_t>::min()) return "must be an integer";
    return absl::StrCat("must be an integer >= ", min);
  }
  return absl::StrCat("takes an integer in ", min, "..", max);
}

}  // namespace

absl::StatusOr<ParsedFlags> ParsedFlags::Parse(const std::vector<std::string>& args, const FlagSpec& spec) {
  ParsedFlags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--" && spec.keep_unknown) {  // for the second parser, which may give it a meaning
      flags.positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      flags.positional_.insert(flags.positional_.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (a.size() < 2 || a[0] != '-') {
      if (spec.stop_at_positional) {
        flags.positional_.insert(flags.positional_.end(), args.begin() + i, args.end());
        break;
      }
      flags.positional_.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    std::string name = a.substr(0, eq);
    if (auto alias = spec.aliases.find(name); alias != spec.aliases.end()) name = alias->second;
    if (Contains(spec.switches, name)) {
      if (eq != std::string::npos) return Invalid(name, " takes no value, got '", a, "'");
      flags.given_.emplace_back(name, "");
    } else if (Contains(spec.values, name)) {
      if (eq != std::string::npos) {
        flags.given_.emplace_back(name, a.substr(eq + 1));
      } else if (i + 1 < args.size()) {
        flags.given_.emplace_back(name, args[++i]);
      } else {
        return Invalid(name, " needs a value");
      }
    } else if (spec.keep_unknown) {
      flags.positional_.push_back(a);
    } else {
      return Invalid("unknown flag '", name, "'", spec.unknown_hint);
    }
  }
  return flags;
}

int ParsedFlags::Count(absl::string_view name) const {
  return static_cast<int>(std::count_if(given_.begin(), given_.end(), [&](const auto& g) { return g.first == name; }));
}

std::string ParsedFlags::GetString(absl::string_view name, absl::string_view fallback) const {
  for (auto it = given_.rbegin(); it != given_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return std::string(fallback);
}

std::vector<std::string> ParsedFlags::GetAll(absl::string_view name) const {
  std::vector<std::string> values;
  for (const auto& [flag, value] : given_) {
    if (flag == name) values.push_back(value);
  }
  return values;
}

absl::StatusOr<int64_t> ParsedFlags::GetInt64(absl::string_view name, int64_t fallback, int64_t min,
                                              int64_t max) const {
  if (!Has(name)) return fallback;
  return ParseFlagInt64(name, GetString(name), min, max);
}

absl::StatusOr<double> ParsedFlags::GetDouble(absl::string_view name, double fallback) const {
  if (!Has(name)) return fallback;
  const std::string value = GetString(name);
  double d = 0;
  if (value.empty() || absl::ascii_isspace(static_cast<unsigned char>(value[0])) ||
      absl::ascii_isspace(static_cast<unsigned char>(value.back())) || !absl::SimpleAtod(value, &d) ||
      !std::isfinite(d)) {
    return Invalid(name, " takes a number, got '", value, "'");
  }
  return d;
}

absl::StatusOr<bool> ParsedFlags::GetBool(absl::string_view name, bool fallback) const {
  if (!Has(name)) return fallback;
  const std::string value = GetString(name);
  if (value.empty() || value == "true" || value == "1") return true;  // a switch records ""
  if (value == "false" || value == "0") return false;
  return Invalid(name, " takes true or false, got '", value, "'");
}

std::vector<std::string> ParsedFlags::GetList(absl::string_view name, char separator) const {
  if (!Has(name)) return {};
  return absl::StrSplit(GetString(name), separator, absl::SkipEmpty());
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParsedFlags::GetKeyValues(
    absl::string_view name) const {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& v : GetAll(name)) {
    const size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) return Invalid(name, " takes KEY=VALUE, got '", v, "'");
    pairs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
  }
  return pairs;
}

absl::StatusOr<int64_t> ParseFlagInt64(absl::string_view name, absl::string_view value, int64_t min, int64_t max) {
  const absl::string_view digits = absl::StartsWith(value, "-") ? value.substr(1) : value;
  int64_t v = 0;
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      !absl::SimpleAtoi(value, &v) || v < min || v > max) {
    return Invalid(name, " ", RangeText(min, max), absl::StrCat(", got '", value, "'"));
  }
  return v;
}

}  // namespace dflow

// Command-line flag parsing shared by the `dflow` subcommands.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"

namespace dflow::tools {

// Whether args[*i] is `flag` with a value: "--flag=value", or "--flag value" (then *i moves to
// the value). False for anything else, and for a bare --flag that is the last argument.
inline bool FlagValue(const std::vector<std::string>& args, size_t* i, const std::string& flag, std::string* v) {
  const std::string& a = args[*i];
  if (a == flag) {
    if (*i + 1 >= args.size()) return false;
    *v = args[++*i];
    return true;
  }
  if (absl::StartsWith(a, flag + "=")) {
    *v = a.substr(flag.size() + 1);
    return true;
  }
  return false;
}

// Splits "KEY=VALUE" (KEY not empty) at the first '='; false when there is no such key.
inline bool SplitKeyValue(const std::string& v, std::pair<std::string, std::string>* out) {
  const size_t eq = v.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  *out = {v.substr(0, eq), v.substr(eq + 1)};
  return true;
}

}  // namespace dflow::tools

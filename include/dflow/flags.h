// Command-line flags, as the dflow tools and examples read them.
//
//   dflow::FlagSpec spec;
//   spec.values = {"--data_dir", "--train_steps", "--feed"};
//   spec.switches = {"--sync"};
//   DFLOW_ASSIGN_OR_RETURN(dflow::ParsedFlags flags, dflow::ParsedFlags::Parse(args, spec));
//   std::string dir = flags.GetString("--data_dir", "data/iris");
//   DFLOW_ASSIGN_OR_RETURN(int64_t steps, flags.GetInt64("--train_steps", 1000, 1));
//   bool sync = flags.Has("--sync");
//   for (const std::string& feed : flags.GetAll("--feed")) ...
//   flags.positional()   // the other arguments, in order
//
// A flag that takes a value is written "--name=value" or "--name value" (the next argument is
// the value, whatever it looks like); a switch is written "--name". An argument that starts
// with '-' (and is not "-" alone) is a flag; "--" ends the flags. Errors are
// absl::InvalidArgument values that name the flag: "--steps needs a value", "unknown flag
// '--stesp'", "--fail_fast takes no value, got '--fail_fast=1'", "--workers takes an integer in
// 1..256, got '0'", "--train_steps must be a positive integer, got 'x'".
//
// Self-contained: it includes only std and absl headers.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dflow {

// The flags a program accepts. Names are written with their dashes: "--steps".
struct FlagSpec {
  std::vector<std::string> values;    // flags that take a value
  std::vector<std::string> switches;  // flags that take none
  // Other names for flags: alias -> the flag it stands for ({"--feed", "--input"}). Values are
  // recorded under the flag's own name.
  std::map<std::string, std::string> aliases;
  // Unknown flags are errors, unless kept: then each such argument stays, as it is and in order,
  // among the positional arguments (for a second parser that knows them); "--" is kept too, and
  // the known flags after it are still read (the cluster flags that `dflow launch` appends).
  bool keep_unknown = false;
  // The first positional argument ends the flags: it and all after it are positional (a
  // command and its own arguments, as in `dflow launch ... TRAINER ARGS`).
  bool stop_at_positional = false;
  // Appended to the unknown-flag error: " (flags: --a --b)".
  std::string unknown_hint;
};

// The arguments, read according to a FlagSpec. Copyable.
class ParsedFlags {
 public:
  static absl::StatusOr<ParsedFlags> Parse(const std::vector<std::string>& args, const FlagSpec& spec);

  // Whether the flag was given; how many times.
  bool Has(absl::string_view name) const { return Count(name) > 0; }
  int Count(absl::string_view name) const;
  // The last value given, or `fallback`.
  std::string GetString(absl::string_view name, absl::string_view fallback = "") const;
  // Every value given, in order (for a flag that may repeat: --fetch a --fetch b).
  std::vector<std::string> GetAll(absl::string_view name) const;
  // The last value as an integer in [min, max], or `fallback` when not given.
  absl::StatusOr<int64_t> GetInt64(absl::string_view name, int64_t fallback,
                                   int64_t min = std::numeric_limits<int64_t>::min(),
                                   int64_t max = std::numeric_limits<int64_t>::max()) const;
  // The last value as a finite number, or `fallback` when not given.
  absl::StatusOr<double> GetDouble(absl::string_view name, double fallback) const;
  // A switch: whether it was given. A flag with a value: true/false/1/0, or `fallback`.
  absl::StatusOr<bool> GetBool(absl::string_view name, bool fallback = false) const;
  // The last value split at `separator`, empty parts dropped ("a,,b" -> {a, b}); empty when not given.
  std::vector<std::string> GetList(absl::string_view name, char separator = ',') const;
  // Every value as KEY=VALUE (KEY not empty), in order: "--feed takes KEY=VALUE, got 'x'".
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> GetKeyValues(absl::string_view name) const;

  // The arguments that are not flags or their values, in order.
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::vector<std::pair<std::string, std::string>> given_;  // flag -> value ("" for a switch), in order
  std::vector<std::string> positional_;
};

// `value` as an integer in [min, max]; the error names `name` ("--steps", "STEPS"). What
// GetInt64 uses, for positional arguments too.
absl::StatusOr<int64_t> ParseFlagInt64(absl::string_view name, absl::string_view value,
                                       int64_t min = std::numeric_limits<int64_t>::min(),
                                       int64_t max = std::numeric_limits<int64_t>::max());

}  // namespace dflow

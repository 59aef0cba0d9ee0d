// Checks on JSON text from outside the process, made before protobuf's JSON parser
// (google::protobuf::util::JsonStringToMessage) reads it, and that parser's errors as one line.
//
//   RETURN_IF_ERROR(CheckJsonText(text, {.max_bytes = 1 << 20, .max_depth = 16}));
//   google::protobuf::Value v;
//   if (auto s = JsonStringToMessage(text, &v); !s.ok()) return JsonParseError(s.message());
//
// CheckJsonText bounds the input (size; nesting depth, which protobuf's parser limits only
// indirectly, with a cryptic error) and rejects what RFC 8259 forbids but protobuf 3.21's parser
// lets through: invalid escapes and control characters in strings, single-quoted strings and
// trailing commas. The rest of the grammar (and UTF-8, surrogates, number ranges, duplicate keys)
// is protobuf's to check. Every error is InvalidArgument starting "JSON: ".
#pragma once

#include <cstddef>

#include "absl/strings/string_view.h"
#include "base/status.h"

namespace dflow {

struct JsonLimits {
  size_t max_bytes = size_t{16} << 20;
  int max_depth = 64;  // nested arrays and objects
};

// "JSON: <what> at byte <offset>" for input over the limits or against the rules above.
Status CheckJsonText(absl::string_view text, const JsonLimits& limits);

// protobuf's parse error ("<what>\n<text around the error>\n   ^") as one InvalidArgument line:
// "JSON: <what> near '<text from the error on>'" (or "... at the end of the input").
Status JsonParseError(absl::string_view parser_message);

}  // namespace dflow

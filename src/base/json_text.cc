#include "base/json_text.h"

#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace dflow {

Status CheckJsonText(absl::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return errors::InvalidArgument("JSON: the input is ", text.size(), " bytes, which exceeds the limit of ",
                                   limits.max_bytes);
  }
  auto error = [](absl::string_view what, size_t at) {
    return errors::InvalidArgument("JSON: ", what, " at byte ", at);
  };
  int depth = 0;
  bool in_string = false;
  char last = 0;  // the last character outside strings that is not white space
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '"') {
        in_string = false;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        return error("a control character in a string (escape it)", i);
      } else if (c == '\\' && i + 1 < text.size()) {
        const char e = text[++i];
        if (e == '\0' || std::strchr("\"\\/bfnrtu", e) == nullptr) return error("invalid escape in a string", i - 1);
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '\'': return error("a single-quoted string (JSON strings take double quotes)", i);
      case '[':
      case '{':
        if (++depth > limits.max_depth) {
          return error(absl::StrCat("arrays and objects nested deeper than ", limits.max_depth), i);
        }
        break;
      case ']':
      case '}':
        if (last == ',') return error("a trailing comma", i);
        --depth;
        break;
      default: break;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') last = c;
  }
  return absl::OkStatus();
}

Status JsonParseError(absl::string_view parser_message) {
  // protobuf 3.x: "<what>\n<up to 20 bytes either side of the error>\n<spaces>^" (the bytes
  // around the error may hold line breaks of their own).
  const size_t first = parser_message.find('\n'), last = parser_message.rfind('\n');
  std::string what(parser_message.substr(0, first));
  if (first != absl::string_view::npos && last > first && absl::EndsWith(parser_message, "^")) {
    const absl::string_view around = parser_message.substr(first + 1, last - first - 1);
    const size_t column = parser_message.size() - last - 2;
    std::string rest(absl::StripAsciiWhitespace(column <= around.size() ? around.substr(column) : absl::string_view()));
    if (rest.empty()) return errors::InvalidArgument("JSON: ", what, " at the end of the input");
    for (char& c : rest) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    return errors::InvalidArgument("JSON: ", what, " near '", rest, "'");
  }
  what = std::string(parser_message);
  for (char& c : what) {
    if (c == '\n') c = ' ';
  }
  return errors::InvalidArgument("JSON: ", absl::StripAsciiWhitespace(what));
}

}  // namespace dflow

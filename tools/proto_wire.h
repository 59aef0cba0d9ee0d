// Reading the protobuf wire format by hand, for the tools that look into files without knowing
// (or trusting) their message type: file kind detection and the V1 checkpoint reader.
#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"

namespace dflow::tools {

// Reads a base-128 varint off the front of *s; false when *s ends first or it runs past 64 bits.
inline bool ReadVarint(absl::string_view* s, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (s->empty()) return false;
    const uint8_t b = static_cast<uint8_t>((*s)[0]);
    s->remove_prefix(1);
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// One field of a message.
struct WireField {
  uint64_t number = 0;      // as written (not checked against the valid range)
  int wire = 0;             // wire type: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  uint64_t value = 0;       // wire type 0: the varint; 2: the length
  absl::string_view bytes;  // wire type 2
};

// Reads one field off the front of *s; false when it is malformed (truncated, or of a wire type
// other than 0, 1, 2 or 5).
inline bool ReadWireField(absl::string_view* s, WireField* f) {
  uint64_t tag;
  if (!ReadVarint(s, &tag)) return false;
  f->number = tag >> 3;
  f->wire = static_cast<int>(tag & 7);
  switch (f->wire) {
    case 0: return ReadVarint(s, &f->value);
    case 1:
      if (s->size() < 8) return false;
      s->remove_prefix(8);
      return true;
    case 2:
      if (!ReadVarint(s, &f->value) || f->value > s->size()) return false;
      f->bytes = s->substr(0, f->value);
      s->remove_prefix(f->value);
      return true;
    case 5:
      if (s->size() < 4) return false;
      s->remove_prefix(4);
      return true;
    default: return false;
  }
}

}  // namespace dflow::tools

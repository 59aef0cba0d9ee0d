// CRC32C (Castagnoli), as TensorFlow, LevelDB and TFRecord files use it, and the "masked" form
// they store (a CRC of data that itself contains CRCs is then not trivially related to them).
// Uses the SSE4.2 instruction when the CPU has it. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace dflow::crc32c {

// The CRC of data[0, n) continued from `crc` (the CRC of what came before).
uint32_t Extend(uint32_t crc, const char* data, size_t n);
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(absl::string_view s) { return Extend(0, s.data(), s.size()); }

constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace dflow::crc32c

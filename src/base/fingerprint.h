// Fingerprint64: FarmHash's 64-bit fingerprint (farmhashna::Hash64 of the farmhash library),
// the hash TensorFlow's StringToHashBucketFast, tf.fingerprint and the hashed feature columns use.
// The value is fixed forever (it is a fingerprint, not a hash that may change between releases),
// so ids computed here equal TensorFlow's. Not cryptographic. Thread-safe, allocation-free.
#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"

namespace dflow {

uint64_t Fingerprint64(absl::string_view s);

}  // namespace dflow

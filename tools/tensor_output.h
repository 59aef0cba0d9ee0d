// How the `dflow` command shows and writes tensors: string elements as escaped text, and whole
// tensors as NumPy .npy / .npz files.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow::tools {

// `s` as a Python bytes literal: b'abc', b'a\nb', b'\x00\xff' (printable ASCII as is, \\ and \'
// escaped, \t \n \r, every other byte \xNN).
std::string BytesLiteral(absl::string_view s);

// Tensor::ToString, with each string element written as BytesLiteral (NumPy's look of a bytes
// array: [b'a' b'b']); large tensors are abbreviated with "..." as NumPy does.
std::string PrintableTensor(const Tensor& t);

// .npy (format 1.0) bytes of any tensor dflow holds except resource and variant: numbers and
// bools as Tensor's dtype, strings as fixed-width bytes '|S<n>' (n the longest element, at least
// 1; NumPy drops trailing NUL bytes of each element on reading).
StatusOr<std::string> NpyBytes(const Tensor& t);

// An .npz archive (a stored, uncompressed zip as numpy.savez writes) of named tensors: each is
// "<name>.npy" in the archive, read back by numpy.load(path)[name].
StatusOr<std::string> NpzBytes(const std::vector<std::pair<std::string, Tensor>>& arrays);

}  // namespace dflow::tools

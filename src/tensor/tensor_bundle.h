// Tensor bundles: TensorFlow's V2 checkpoint files.
//
// A bundle "PREFIX" is
//   PREFIX.index                   a table (base/table.h): under the empty key a
//                                  BundleHeaderProto (number of data files, endianness, version),
//                                  under each tensor name a BundleEntryProto (dtype, shape, data
//                                  file, offset, size, masked CRC32C of the bytes)
//   PREFIX.data-00000-of-0000N     the tensors' bytes, back to back: numbers as little-endian
//                                  arrays; strings as the varint64 length of each element, the
//                                  masked CRC32C of those lengths (each as a uint32), then the
//                                  elements' bytes, the entry's checksum covering the lengths,
//                                  that checksum and the bytes
// A tensor saved in slices (a partitioned variable) has an entry under its name with its full
// shape and the list of slices, and one entry per slice under EncodeTensorNameSlice(name, slice).
//
// Writers create every file under a temporary name, fsync it and rename it; the index comes last,
// so a bundle whose index exists is complete. The data file is streamed through staging buffers
// to a writer thread, with O_DIRECT where the file system allows it (bundle_io.h); large tensors
// are read back by several threads. Readers check everything they read against the
// file sizes and checksums: damage is DataLoss naming the file and the tensor.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/env.h"
#include "base/status.h"
#include "proto/tensor_bundle.pb.h"
#include "tensor/bundle_io.h"
#include "tensor/tensor.h"
#include "tensor/tensor_slice.h"

namespace dflow {

// "PREFIX.index" and "PREFIX.data-00003-of-00008".
std::string BundleIndexFilename(absl::string_view prefix);
std::string BundleDataFilename(absl::string_view prefix, int shard, int num_shards);

// Writes one bundle with one data file. Not thread-safe. Files go through `env` (not owned), so
// tests can inject failures. A writer destroyed before a successful Finish removes its
// temporary files; a bundle already under `prefix` is replaced only by a successful Finish.
class BundleWriter {
 public:
  BundleWriter(Env* env, std::string prefix);
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Adds a whole tensor. InvalidArgument for a duplicate or empty key or an unsupported dtype.
  Status Add(absl::string_view key, const Tensor& t);
  // Adds `slice_tensor`, the part `slice` of the tensor `full_name` of `full_shape`. A slice
  // that covers the whole shape is stored as a whole tensor.
  Status AddSlice(absl::string_view full_name, const TensorShape& full_shape, const TensorSlice& slice,
                  const Tensor& slice_tensor);
  // Syncs and renames the data file, then writes, syncs and renames the index, and syncs the
  // directory. The first error of any step is returned (and sticks). A failure removes the
  // temporary files, and the renamed data file too when the index could not be written (unless
  // the prefix was a bundle before: its index then still points into that file).
  Status Finish();

 private:
  Env* env_;
  std::string prefix_, data_tmp_, index_tmp_;
  std::unique_ptr<WritableFile> data_;
  std::unique_ptr<bundle_io::StagedWriter> stage_;  // writes data_; destroyed before data_ closes
  std::map<std::string, proto::BundleEntryProto> entries_;
  Status status_;
  bool finished_ = false;
};

// Merges bundles written by BundleWriter (one per device of a sharded save) into `merged_prefix`:
// their data files are renamed to merged_prefix.data-i-of-N and a new index lists every entry
// (slices of one tensor from several bundles are joined). The sources' index files are deleted
// afterwards, and with delete_old_dirs their directories too when empty. InvalidArgument for a
// tensor found in two bundles; the readers' errors for damaged sources. When the merged index
// cannot be written, the data files already renamed into place are removed (as BundleWriter does);
// the sources that were not moved stay where they were.
Status MergeBundles(Env* env, const std::vector<std::string>& prefixes, const std::string& merged_prefix,
                    bool delete_old_dirs = true);

// Deletes the index and data files of bundle `prefix` (best effort: the number of data files
// comes from the index if it can be read, else from the names beside it).
Status DeleteBundle(Env* env, const std::string& prefix);

// Reads one bundle. Thread-safe after Open.
class BundleReader {
 public:
  // Reads and verifies the index. NotFound when PREFIX.index is missing; DataLoss when it is
  // damaged; Unimplemented for a big-endian bundle.
  static StatusOr<std::unique_ptr<BundleReader>> Open(Env* env, const std::string& prefix);

  const std::string& prefix() const { return prefix_; }
  int num_shards() const { return header_.num_shards(); }
  // The names of the tensors (not the slice entries), sorted.
  std::vector<std::string> TensorNames() const;
  bool Contains(absl::string_view name) const { return entries_.count(std::string(name)) > 0; }
  // NotFound naming the tensor and the checkpoint when it is not there.
  StatusOr<proto::BundleEntryProto> GetEntry(absl::string_view name) const;
  // dtype and full shape of a tensor (a sliced one included).
  Status GetDTypeAndShape(absl::string_view name, DType* dtype, TensorShape* shape) const;

  // The whole tensor, assembled from its slices when it was saved in slices.
  StatusOr<Tensor> Lookup(absl::string_view name) const;
  // The part `slice` of the tensor (full extents allowed), whether it was saved whole or in any
  // slicing. NotFound when the saved slices do not cover it.
  StatusOr<Tensor> LookupSlice(absl::string_view name, const TensorSlice& slice) const;

 private:
  BundleReader() = default;
  StatusOr<const RandomAccessFile*> DataFile(int shard, uint64_t* size) const;
  // DataLoss unless the entry's bytes lie inside its data file and its size fits its dtype and
  // shape (checked before anything is allocated for it).
  Status CheckEntryBounds(absl::string_view display_name, const proto::BundleEntryProto& entry) const;
  // The bytes of one stored (non-slice-list) entry, verified.
  StatusOr<Tensor> ReadEntry(absl::string_view key, absl::string_view display_name,
                             const proto::BundleEntryProto& entry) const;

  Env* env_ = nullptr;
  std::string prefix_;
  proto::BundleHeaderProto header_;
  std::map<std::string, proto::BundleEntryProto> entries_;  // every key but the header's
  mutable std::mutex mu_;
  mutable std::map<int, std::pair<std::unique_ptr<RandomAccessFile>, uint64_t>> data_files_;
};

}  // namespace dflow

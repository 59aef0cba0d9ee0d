// Input pipelines: tf.data's Dataset as graph ops.
//
//   Scope root = Scope::NewRootScope();
//   auto ds = data::Dataset::FromTensorSlices(root, {{{0, 1}, {2, 3}, {4, 5}, {6, 7}}})
//                 .Map([](const Scope& s, const std::vector<Output>& x) {
//                   return std::vector<Output>{ops::Mul(s, x[0], 2)};
//                 })
//                 .Shuffle(4, /*seed=*/7).Batch(2).Repeat(3).Prefetch(1);
//   data::Iterator it = ds.MakeOneShotIterator();
//   data::Element next = it.GetNext();
//   ClientSession session(root);
//   session.Run({next[0]});   // ... until OutOfRange "End of sequence"
//
// A Dataset is a handle to a graph tensor of dtype variant (the op that makes the dataset) plus
// the structure of its elements: the dtype, static shape and (optional) name of each component.
// Building is lazy in the graph sense: nothing is read until an iterator's GetNext runs. Every
// builder records its first error in the scope (Scope::status()), like every other op builder;
// a Dataset built from a failed one is invalid and builds nothing more.
//
// Functions (Map, Filter): the lambda builds the function body on a fresh sub-scope whose ops
// go into a function of the graph's function library (sent with the graph to any session,
// local or remote). Its arguments are the element's components; it may not use tensors of the
// enclosing graph (an error names the tensor).
//
// Iterators: a one-shot iterator builds the whole pipeline into a factory function and needs no
// initialization (it may not depend on placeholders: that is an error naming the placeholder);
// an initializable iterator has an initializer op that (re)starts it from the dataset as built
// in the graph, so its parameters can be fed through placeholders. The end of input is
// OutOfRange "End of sequence". Iterators live in the device's resource manager (per graph in
// process, shared by name on a server); their background work (Prefetch, Map with parallel
// calls) stops when the iterator is re-initialized or destroyed or the session that made it is
// closed.
//
// Thread-safety: building is single-threaded like all graph building; running GetNext from
// several concurrent steps is safe (elements are handed out one at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "dflow/scope.h"

namespace dflow::data {

// One element of a dataset as graph tensors: its components in order, each with a name (""
// when unnamed). An estimator's input_fn returns (Named(), Unnamed()[0]) for datasets built
// from named feature columns zipped with a label.
struct Element {
  std::vector<Output> components;
  std::vector<std::string> names;  // one per component

  size_t size() const { return components.size(); }
  const Output& operator[](size_t i) const { return components[i]; }
  // The component named `name`; an invalid Output when there is none.
  Output Get(const std::string& name) const;
  // The named components by name.
  std::map<std::string, Output> Named() const;
  // The components without a name, in order.
  std::vector<Output> Unnamed() const;
};

// Options of Dataset::Csv and of DecodeCsv (TensorFlow's CsvDataset / decode_csv).
struct CsvOptions {
  bool header = false;                    // skip the first line of every file
  std::string field_delim = ",";          // one character
  bool use_quote_delim = true;            // "..." quotes fields; "" inside quotes is a quote
  std::string na_value;                   // a field equal to this takes its default ("" by default)
  std::vector<int64_t> select_cols;       // increasing column indices to keep; empty: all
  std::vector<std::string> column_names;  // names of the components (after select_cols)
  std::string compression_type;           // "" only
  int64_t buffer_size = 256 << 10;        // read-ahead bytes per file
};

class Iterator {
 public:
  Iterator() = default;
  bool ok() const { return handle_.valid(); }
  // The iterator resource.
  Output handle() const { return handle_; }
  // Runs to (re)start iteration: MakeIterator for an initializable iterator; invalid (nothing
  // to run) for a one-shot iterator.
  Operation initializer() const { return initializer_; }
  // The next element (IteratorGetNext), built in the iterator's scope or in `scope`. Running
  // it at the end of input fails with OutOfRange "End of sequence".
  Element GetNext() const;
  Element GetNext(const Scope& scope) const;

 private:
  friend class Dataset;
  Scope scope_ = Scope::NewRootScope();
  Output handle_;
  Operation initializer_;
  std::vector<DType> types_;
  std::vector<PartialTensorShape> shapes_;
  std::vector<std::string> names_;
};

class Dataset {
 public:
  // The body of Map: the element's components in, the new components out.
  using MapFn = std::function<std::vector<Output>(const Scope&, const std::vector<Output>&)>;
  // The body of Filter: the element's components in, a scalar bool out (true keeps it).
  using PredicateFn = std::function<Output(const Scope&, const std::vector<Output>&)>;

  // ---- sources ----
  // The rows (slices along dimension 0) of each component, which must agree in their first
  // dimension (InvalidArgument when they do not). The map form names the components (in key
  // order) so that elements come out as named features.
  static Dataset FromTensorSlices(const Scope& scope, const std::vector<Input>& components);
  static Dataset FromTensorSlices(const Scope& scope, std::initializer_list<Input> components) {
    return FromTensorSlices(scope, std::vector<Input>(components));
  }
  static Dataset FromTensorSlices(const Scope& scope, const std::map<std::string, Input>& columns);
  // One element: the components themselves.
  static Dataset FromTensors(const Scope& scope, const std::vector<Input>& components);
  static Dataset FromTensors(const Scope& scope, std::initializer_list<Input> components) {
    return FromTensors(scope, std::vector<Input>(components));
  }
  static Dataset FromTensors(const Scope& scope, const std::map<std::string, Input>& columns);
  // int64 scalars start, start+step, ... below stop (above it for a negative step).
  static Dataset Range(const Scope& scope, Input start, Input stop, Input step = int64_t{1});
  static Dataset Range(const Scope& scope, Input stop) { return Range(scope, int64_t{0}, std::move(stop)); }
  // The lines of the files (a string scalar or vector), without their line ends.
  static Dataset TextLine(const Scope& scope, Input filenames);
  // The records of TFRecord files; a truncated or corrupted record is DataLoss naming the file
  // and the record's offset. compression_type: "" (none), "ZLIB" or "GZIP".
  static Dataset TFRecord(const Scope& scope, Input filenames, const std::string& compression_type = "");
  // Parsed CSV lines: one component per (selected) column, of the dtype of its record default
  // (float, double, int32, int64 or string; a default of shape [0] makes the field required).
  // Errors name the file and line: "iris.csv:7: Field 2 ...".
  static Dataset Csv(const Scope& scope, Input filenames, const std::vector<Input>& record_defaults,
                     const CsvOptions& options = CsvOptions());
  // Elements made of the components of each dataset's elements, in order; ends with the
  // shortest. Names carry over.
  static Dataset Zip(const std::vector<Dataset>& datasets);

  // ---- transformations ----
  // `num_parallel_calls` > 1 runs that many calls at once (ParallelMapDataset) and keeps the
  // order. Names carry over when the function returns as many components as it takes.
  Dataset Map(MapFn fn, int num_parallel_calls = 0) const;
  Dataset Filter(PredicateFn predicate) const;
  // A random permutation within a window of `buffer_size` elements. Seeds follow the graph
  // seed rule (Scope::SetRandomSeed); with a seed the order is the same in every run, and
  // `reshuffle_each_iteration` gives each new iteration (each epoch of a Repeat) another order.
  Dataset Shuffle(Input buffer_size, int64_t seed = 0, bool reshuffle_each_iteration = true) const;
  // Stacks `batch_size` consecutive elements; the last batch is smaller unless drop_remainder.
  Dataset Batch(Input batch_size, bool drop_remainder = false) const;
  // -1: forever.
  Dataset Repeat(Input count = int64_t{-1}) const;
  Dataset Take(Input count) const;  // -1: all
  Dataset Skip(Input count) const;  // -1: all
  // Every num_shards-th element starting at `index` (one shard per worker).
  Dataset Shard(Input num_shards, Input index) const;
  // Produces up to `buffer_size` elements ahead on a background thread.
  Dataset Prefetch(Input buffer_size) const;
  // The same dataset with its components renamed (one name per component; "" for none).
  Dataset WithNames(std::vector<std::string> names) const;

  // ---- iterators ----
  Iterator MakeOneShotIterator() const;
  // `shared_name` shares the iterator by name across sessions of a server ("" : private).
  Iterator MakeInitializableIterator(const std::string& shared_name = "") const;

  // ---- what it is ----
  bool ok() const { return variant_.valid(); }
  Output variant() const { return variant_; }
  const Scope& scope() const { return scope_; }
  const std::vector<DType>& output_types() const { return types_; }
  const std::vector<PartialTensorShape>& output_shapes() const { return shapes_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  Dataset(Scope scope) : scope_(std::move(scope)) {}  // NOLINT: an invalid dataset in `scope`
  friend struct DatasetAccess;
  Scope scope_;
  Output variant_;
  std::vector<DType> types_;
  std::vector<PartialTensorShape> shapes_;
  std::vector<std::string> names_;
};

// TensorFlow's decode_csv on a tensor of lines: one output per (selected) column, shaped like
// `records`. Errors name the record: "Field 1 in record 3 is not a valid float: abc".
std::vector<Output> DecodeCsv(const Scope& scope, Input records, const std::vector<Input>& record_defaults,
                              const CsvOptions& options = CsvOptions());

}  // namespace dflow::data

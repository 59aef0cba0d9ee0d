// Input pipelines for the Python package: dflow::data::Dataset and Iterator bound as they are,
// with Map/Filter bodies traced from Python functions, decode_csv, and TFRecord files.
//
// The Python layer (dflow/data/) keeps the nested structure of elements and converts values to
// tensors; here every component is a flat list of Outputs. A Python function given to map or
// filter is called while the C++ Dataset builds the function: with the function's Scope and its
// argument Outputs, it returns the result Outputs. An exception it raises is kept and raised
// again, unchanged, once the C++ call returns (the build error it leaves is cleared).
#include <optional>

#include "base/env.h"
#include "base/record_io.h"
#include "binding.h"
#include "dflow/dataset.h"
#include "ops/data/compressed_file.h"

namespace dflow::python {
namespace {

using data::Dataset;
using data::Iterator;

// A tensor argument: an Output, or a Python value made a constant of `dtype` (DT_INVALID: its own).
Input InputOf(py::handle v, DType dtype) {
  if (py::isinstance<OutputRef>(v)) return Input(v.cast<const OutputRef&>().out);
  return Input(Input::Initializer(ToTensor(v, dtype)));
}

std::vector<Input> InputsOf(const py::list& l, DType dtype = DT_INVALID) {
  std::vector<Input> out;
  for (py::handle h : l) out.push_back(InputOf(h, dtype));
  return out;
}

py::list OutputsToList(const std::shared_ptr<Graph>& g, const std::vector<Output>& outs) {
  py::list l;
  for (const Output& o : outs) l.append(OutputRef{g, o});
  return l;
}

std::vector<Output> OutputsOf(py::handle result, const char* what) {
  std::vector<Output> outs;
  for (py::handle h : result) {
    if (!py::isinstance<OutputRef>(h)) {
      throw py::type_error(std::string(what) + " must return tensors, got " + std::string(py::repr(h)));
    }
    outs.push_back(h.cast<const OutputRef&>().out);
  }
  return outs;
}

// Raises the build error of `scope`'s graph, if any.
void Check(const Scope& scope) { ThrowIfBuildError(scope.graph()); }

// Calls a Python function while a C++ builder runs: a raised exception is kept in *error and
// recorded as a build error so that the builder stops.
class Traced {
 public:
  std::vector<Output> Call(const py::function& fn, const Scope& fs, const std::vector<Output>& args, const char* what) {
    try {
      py::object r = fn(fs, OutputsToList(fs.graph_as_shared_ptr(), args));
      return OutputsOf(r, what);
    } catch (py::error_already_set& e) {
      error_.emplace(std::move(e));
    } catch (py::builtin_exception& e) {
      e.set_error();
      error_.emplace();
    }
    fs.UpdateStatus(errors::Cancelled("the Python function raised an exception"));
    return {};
  }
  // After the builder returned: raises the function's exception (clearing the build error it
  // caused), or else the builder's own error.
  void Rethrow(const Scope& scope) {
    if (error_.has_value()) {
      Status ignored = scope.graph()->TakeBuildError();  // the function's exception says it
      (void)ignored;
      throw *error_;
    }
    Check(scope);
  }

 private:
  std::optional<py::error_already_set> error_;
};

data::CsvOptions CsvOptionsOf(bool header, const std::string& field_delim, bool use_quote_delim,
                              const std::string& na_value, const std::vector<int64_t>& select_cols,
                              int64_t buffer_size) {
  data::CsvOptions o;
  o.header = header;
  o.field_delim = field_delim;
  o.use_quote_delim = use_quote_delim;
  o.na_value = na_value;
  o.select_cols = select_cols;
  if (buffer_size > 0) o.buffer_size = buffer_size;
  return o;
}

// TensorFlow's TFRecordWriter: records appended to a new file.
class RecordFileWriter {
 public:
  RecordFileWriter(const std::string& path, const std::string& compression_type) : path_(path) {
    file_ = ValueOrThrow(data::NewDeflatingFile(ValueOrThrow(Env::Default()->NewWritableFile(path)), compression_type));
    writer_ = std::make_unique<RecordWriter>(file_.get());
  }
  void Write(py::bytes record) {
    if (!writer_) ThrowStatus(errors::FailedPrecondition("Writer is closed: ", path_));
    std::string s = record;
    ThrowIfError(writer_->WriteRecord(s));
  }
  void Flush() {
    if (writer_) ThrowIfError(writer_->Flush());
  }
  void Close() {
    if (!writer_) return;
    writer_.reset();
    Status s = file_->Close();
    file_.reset();
    ThrowIfError(s);
  }

 private:
  std::string path_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<RecordWriter> writer_;
};

py::list ReadRecords(const std::string& path, const std::string& compression_type) {
  std::unique_ptr<RandomAccessFile> file =
      ValueOrThrow(data::NewInflatingFile(ValueOrThrow(Env::Default()->NewRandomAccessFile(path)), compression_type));
  RecordReader reader(file.get());
  py::list out;
  uint64_t offset = 0;
  for (;;) {
    std::string record;
    Status s = reader.ReadRecord(&offset, &record);
    if (absl::IsOutOfRange(s)) break;
    ThrowIfError(s);
    out.append(py::bytes(record));
  }
  return out;
}

}  // namespace

void BindData(py::module_& m) {
  py::class_<Iterator>(m, "Iterator")
      .def("get_next",
           [](const Iterator& it, const Scope& scope) {
             data::Element e = it.GetNext(scope);
             Check(scope);
             return OutputsToList(scope.graph_as_shared_ptr(), e.components);
           })
      .def("initializer",
           [](const Iterator& it, const Scope& scope) -> py::object {
             if (!it.initializer().valid()) return py::none();
             return py::cast(NodeRef{scope.graph_as_shared_ptr(), it.initializer().node()});
           })
      .def("handle_of", [](const Iterator& it, const Scope& scope) {
        return OutputRef{scope.graph_as_shared_ptr(), it.handle()};
      });

  py::class_<Dataset>(m, "Dataset")
      .def_static("from_tensor_slices",
                  [](const Scope& s, py::list components) {
                    Dataset d = Dataset::FromTensorSlices(s, InputsOf(components));
                    Check(s);
                    return d;
                  })
      .def_static("from_tensors",
                  [](const Scope& s, py::list components) {
                    Dataset d = Dataset::FromTensors(s, InputsOf(components));
                    Check(s);
                    return d;
                  })
      .def_static("range",
                  [](const Scope& s, py::object start, py::object stop, py::object step) {
                    Dataset d = Dataset::Range(s, InputOf(start, DT_INT64), InputOf(stop, DT_INT64),
                                               InputOf(step, DT_INT64));
                    Check(s);
                    return d;
                  })
      .def_static("text_line",
                  [](const Scope& s, py::object filenames) {
                    Dataset d = Dataset::TextLine(s, InputOf(filenames, DT_STRING));
                    Check(s);
                    return d;
                  })
      .def_static(
          "tf_record",
          [](const Scope& s, py::object filenames, const std::string& compression_type) {
            Dataset d = Dataset::TFRecord(s, InputOf(filenames, DT_STRING), compression_type);
            Check(s);
            return d;
          },
          py::arg("scope"), py::arg("filenames"), py::arg("compression_type") = "")
      .def_static("csv",
                  [](const Scope& s, py::object filenames, py::list record_defaults, bool header,
                     const std::string& field_delim, bool use_quote_delim, const std::string& na_value,
                     const std::vector<int64_t>& select_cols, int64_t buffer_size) {
                    Dataset d = Dataset::Csv(s, InputOf(filenames, DT_STRING), InputsOf(record_defaults),
                                             CsvOptionsOf(header, field_delim, use_quote_delim, na_value, select_cols,
                                                          buffer_size));
                    Check(s);
                    return d;
                  })
      .def_static("zip",
                  [](const std::vector<Dataset>& datasets) {
                    Dataset d = Dataset::Zip(datasets);
                    Check(d.scope());
                    return d;
                  })
      .def("map",
           [](const Dataset& in, py::function fn, int num_parallel_calls) {
             Traced traced;
             Dataset d = in.Map(
                 [&](const Scope& fs, const std::vector<Output>& args) {
                   return traced.Call(fn, fs, args, "The function given to map");
                 },
                 num_parallel_calls);
             traced.Rethrow(in.scope());
             return d;
           })
      .def("filter",
           [](const Dataset& in, py::function fn) {
             Traced traced;
             Dataset d = in.Filter([&](const Scope& fs, const std::vector<Output>& args) {
               std::vector<Output> r = traced.Call(fn, fs, args, "The predicate given to filter");
               if (r.size() != 1) {
                 if (!r.empty() || fs.ok()) {
                   fs.UpdateStatus(errors::InvalidArgument(
                       "A filter predicate must return one scalar bool tensor, not ", r.size(), " tensors"));
                 }
                 return Output();
               }
               return r[0];
             });
             traced.Rethrow(in.scope());
             return d;
           })
      .def("shuffle",
           [](const Dataset& in, py::object buffer_size, int64_t seed, bool reshuffle) {
             Dataset d = in.Shuffle(InputOf(buffer_size, DT_INT64), seed, reshuffle);
             Check(in.scope());
             return d;
           })
      .def("batch",
           [](const Dataset& in, py::object batch_size, bool drop_remainder) {
             Dataset d = in.Batch(InputOf(batch_size, DT_INT64), drop_remainder);
             Check(in.scope());
             return d;
           })
      .def("repeat",
           [](const Dataset& in, py::object count) {
             Dataset d = in.Repeat(InputOf(count, DT_INT64));
             Check(in.scope());
             return d;
           })
      .def("take",
           [](const Dataset& in, py::object count) {
             Dataset d = in.Take(InputOf(count, DT_INT64));
             Check(in.scope());
             return d;
           })
      .def("skip",
           [](const Dataset& in, py::object count) {
             Dataset d = in.Skip(InputOf(count, DT_INT64));
             Check(in.scope());
             return d;
           })
      .def("shard",
           [](const Dataset& in, py::object num_shards, py::object index) {
             Dataset d = in.Shard(InputOf(num_shards, DT_INT64), InputOf(index, DT_INT64));
             Check(in.scope());
             return d;
           })
      .def("prefetch",
           [](const Dataset& in, py::object buffer_size) {
             Dataset d = in.Prefetch(InputOf(buffer_size, DT_INT64));
             Check(in.scope());
             return d;
           })
      .def("with_names",
           [](const Dataset& in, std::vector<std::string> names) {
             Dataset d = in.WithNames(std::move(names));
             Check(in.scope());
             return d;
           })
      .def("make_one_shot_iterator",
           [](const Dataset& in) {
             Iterator it = in.MakeOneShotIterator();
             Check(in.scope());
             return it;
           })
      .def("make_initializable_iterator",
           [](const Dataset& in, const std::string& shared_name) {
             Iterator it = in.MakeInitializableIterator(shared_name);
             Check(in.scope());
             return it;
           })
      .def_property_readonly("ok", &Dataset::ok)
      .def_property_readonly("variant",
                             [](const Dataset& d) {
                               return OutputRef{d.scope().graph_as_shared_ptr(), d.variant()};
                             })
      .def_property_readonly("graph_id", [](const Dataset& d) { return d.scope().graph()->id(); })
      .def_property_readonly("output_types",
                             [](const Dataset& d) {
                               std::vector<int> t;
                               for (DType x : d.output_types()) t.push_back(static_cast<int>(x));
                               return t;
                             })
      .def_property_readonly("output_shapes",
                             [](const Dataset& d) {
                               py::list l;
                               for (const PartialTensorShape& s : d.output_shapes()) l.append(FromShape(s));
                               return l;
                             })
      .def_property_readonly("names", &Dataset::names);

  m.def("decode_csv", [](const Scope& s, py::object records, py::list record_defaults, const std::string& field_delim,
                         bool use_quote_delim, const std::string& na_value, const std::vector<int64_t>& select_cols) {
    std::vector<Output> outs = data::DecodeCsv(s, InputOf(records, DT_STRING), InputsOf(record_defaults),
                                               CsvOptionsOf(false, field_delim, use_quote_delim, na_value, select_cols,
                                                            0));
    Check(s);
    return OutputsToList(s.graph_as_shared_ptr(), outs);
  });

  py::class_<RecordFileWriter>(m, "RecordFileWriter")
      .def(py::init<const std::string&, const std::string&>(), py::arg("path"), py::arg("compression_type") = "")
      .def("write", &RecordFileWriter::Write)
      .def("flush", &RecordFileWriter::Flush)
      .def("close", &RecordFileWriter::Close);
  m.def("read_records", &ReadRecords, py::arg("path"), py::arg("compression_type") = "",
        "Every record of a TFRecord file, in order (DataLoss for a damaged one).");
}

}  // namespace dflow::python

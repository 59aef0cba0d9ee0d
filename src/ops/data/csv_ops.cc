// DecodeCSV (tf.io.decode_csv) and CSVDataset (tf.data.experimental.CsvDataset): TensorFlow's
// op names, inputs and attrs. CSVDataset errors name the file and line: "iris.csv:7: ...".
#include "framework/shape_inference.h"
#include "ops/data/csv.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/line_reader.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

Status ReadDelim(const std::string& delim, absl::string_view op, char* out) {
  if (delim.size() != 1) return errors::InvalidArgument(op, ": field_delim must be one character, not '", delim, "'");
  *out = delim[0];
  if (*out == '\n' || *out == '\r' || *out == '"') {
    return errors::InvalidArgument(op, ": field_delim cannot be a newline or a quote");
  }
  return absl::OkStatus();
}

class DecodeCSVOp : public OpKernel {
 public:
  explicit DecodeCSVOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string delim;
    c->SetStatus(c->GetAttr("field_delim", &delim));
    c->SetStatus(c->GetAttr("use_quote_delim", &spec_.use_quote_delim));
    c->SetStatus(c->GetAttr("na_value", &spec_.na_value));
    c->SetStatus(c->GetAttr("select_cols", &spec_.select_cols));
    if (c->status().ok()) c->SetStatus(ReadDelim(delim, "DecodeCSV", &spec_.delim));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& records = ctx->input(0);
    OP_REQUIRES(ctx, records.dtype() == DT_STRING,
                errors::InvalidArgument("DecodeCSV ", name(), ": records must be strings"));
    CsvSpec spec = spec_;
    for (int i = 1; i < ctx->num_inputs(); ++i) spec.defaults.push_back(ctx->input(i));
    OP_REQUIRES_OK(ctx, spec.Validate(absl::StrCat("DecodeCSV ", name())));
    std::vector<Tensor> outs;
    for (size_t i = 0; i < spec.defaults.size(); ++i) {
      OP_REQUIRES_ASSIGN(ctx, Tensor t, Tensor::Allocate(spec.defaults[i].dtype(), records.shape()));
      outs.push_back(std::move(t));
    }
    auto recs = records.flat<std::string>();
    for (int64_t r = 0; r < static_cast<int64_t>(recs.size()); ++r) {
      OP_REQUIRES_OK(ctx, ParseCsvRecord(recs[r], spec, absl::StrCat(" in record ", r), &outs, r));
    }
    for (size_t i = 0; i < outs.size(); ++i) ctx->set_output(static_cast<int>(i), std::move(outs[i]));
  }

 private:
  CsvSpec spec_;
};

class CsvDataset : public DatasetBase {
 public:
  CsvDataset(std::shared_ptr<Env> env, std::vector<std::string> files, int64_t buffer_size, bool header, CsvSpec spec,
             std::vector<DType> types)
      : DatasetBase(types, std::vector<PartialTensorShape>(types.size(), PartialTensorShape::Scalar())),
        env_(std::move(env)),
        files_(std::move(files)),
        buffer_size_(buffer_size),
        header_(header),
        spec_(std::move(spec)) {}
  std::string Name() const override { return "CSVDataset"; }

  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      explicit Iter(std::shared_ptr<const CsvDataset> ds) : ds_(std::move(ds)) {}
      Status GetNext(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
        out->clear();
        for (DType t : ds_->output_dtypes()) out->emplace_back(t, TensorShape{});
        int64_t count = 0;
        RETURN_IF_ERROR(Parse(1, out, &count));
        *end = count == 0;
        if (*end) out->clear();
        return absl::OkStatus();
      }

      // Batches parse straight into the batch tensors: no tensor per field.
      bool SupportsBatch() const override { return true; }
      Status GetNextBatch(IteratorContext*, int64_t max, std::vector<Tensor>* out, int64_t* count) override {
        out->clear();
        for (DType t : ds_->output_dtypes()) {
          ASSIGN_OR_RETURN(Tensor b, Tensor::Allocate(t, TensorShape{max}));
          out->push_back(std::move(b));
        }
        RETURN_IF_ERROR(Parse(max, out, count));
        if (*count < max) {
          for (Tensor& t : *out) {
            ASSIGN_OR_RETURN(t, t.Slice(0, *count));
          }
        }
        return absl::OkStatus();
      }

     private:
      // Parses up to `max` records into rows 0.. of `out`.
      Status Parse(int64_t max, std::vector<Tensor>* out, int64_t* count) {
        const CsvDataset& d = *ds_;
        *count = 0;
        while (*count < max) {
          if (reader_ == nullptr) {
            if (file_ >= d.files_.size()) return absl::OkStatus();
            ASSIGN_OR_RETURN(auto f, d.env_->NewRandomAccessFile(d.files_[file_]));
            reader_ = std::make_unique<LineReader>(std::move(f), d.buffer_size_);
            if (d.header_) {
              ASSIGN_OR_RETURN(bool got, reader_->ReadLine(&line_));
              (void)got;
            }
          }
          ASSIGN_OR_RETURN(bool got, reader_->ReadLine(&line_));
          if (!got) {
            reader_.reset();
            ++file_;
            continue;
          }
          if (line_.empty()) continue;  // blank lines (a trailing one, typically) are not records
          Status s = ParseCsvRecord(line_, d.spec_, "", out, *count);
          if (!s.ok()) return errors::InvalidArgument(reader_->path(), ":", reader_->line_number(), ": ", s.message());
          ++*count;
        }
        return absl::OkStatus();
      }

      std::shared_ptr<const CsvDataset> ds_;
      size_t file_ = 0;
      std::unique_ptr<LineReader> reader_;
      std::string line_;
    };
    return std::unique_ptr<IteratorBase>(std::make_unique<Iter>(std::static_pointer_cast<const CsvDataset>(self())));
  }

 private:
  std::shared_ptr<Env> env_;  // checks the files against the device's file policy
  std::vector<std::string> files_;
  int64_t buffer_size_;
  bool header_;
  CsvSpec spec_;
};

template <typename T>
StatusOr<T> Scalar(const Tensor& t, absl::string_view what) {
  if (t.dtype() != DTypeOf<T>::value || t.dims() != 0) {
    return errors::InvalidArgument("CSVDataset: ", what, " must be a ", DTypeString(DTypeOf<T>::value), " scalar");
  }
  return t.scalar<T>();
}

class CSVDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    const Tensor& names = ctx->input(0);
    if (names.dtype() != DT_STRING || names.dims() > 1) return Error("filenames must be a string scalar or vector");
    std::vector<std::string> files(names.flat<std::string>().begin(), names.flat<std::string>().end());
    ASSIGN_OR_RETURN(std::string compression, Scalar<std::string>(ctx->input(1), "compression_type"));
    if (!compression.empty()) return errors::Unimplemented("CSVDataset: compression_type '", compression, "'");
    ASSIGN_OR_RETURN(int64_t buffer, Scalar<int64_t>(ctx->input(2), "buffer_size"));
    if (buffer <= 0) buffer = 256 << 10;
    if (buffer > (int64_t{256} << 20)) return Error("buffer_size ", buffer, " is above 256 MiB");
    ASSIGN_OR_RETURN(bool header, Scalar<bool>(ctx->input(3), "header"));
    ASSIGN_OR_RETURN(std::string delim, Scalar<std::string>(ctx->input(4), "field_delim"));
    CsvSpec spec;
    RETURN_IF_ERROR(ReadDelim(delim, "CSVDataset", &spec.delim));
    ASSIGN_OR_RETURN(spec.use_quote_delim, Scalar<bool>(ctx->input(5), "use_quote_delim"));
    ASSIGN_OR_RETURN(spec.na_value, Scalar<std::string>(ctx->input(6), "na_value"));
    const Tensor& cols = ctx->input(7);
    if (cols.dtype() != DT_INT64 || cols.dims() != 1) return Error("select_cols must be an int64 vector");
    spec.select_cols.assign(cols.flat<int64_t>().begin(), cols.flat<int64_t>().end());
    std::vector<DType> types;
    for (int i = 8; i < ctx->num_inputs(); ++i) {
      spec.defaults.push_back(ctx->input(i));
      types.push_back(ctx->input(i).dtype());
    }
    RETURN_IF_ERROR(spec.Validate(absl::StrCat("CSVDataset ", name())));
    ASSIGN_OR_RETURN(std::shared_ptr<Env> env, FileEnv(ctx, files));
    return std::shared_ptr<const DatasetBase>(std::make_shared<CsvDataset>(std::move(env), std::move(files), buffer,
                                                                           header, std::move(spec), std::move(types)));
  }
};

Status DecodeCSVShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(0));
  return absl::OkStatus();
}

}  // namespace

void RegisterCsvOps() {
  RegisterOp(OpDefBuilder("DecodeCSV")
                 .Input("records: string")
                 .Input("record_defaults: OUT_TYPE")
                 .Output("output: OUT_TYPE")
                 .Attr("OUT_TYPE: list({float, double, int32, int64, string})")
                 .Attr("field_delim: string = ','")
                 .Attr("use_quote_delim: bool = true")
                 .Attr("na_value: string = ''")
                 .Attr("select_cols: list(int) = []")
                 .SetShapeFn(DecodeCSVShape)
                 .Doc("Parses CSV records: one output per column, shaped like records."));
  RegisterOp(OpDefBuilder("CSVDataset")
                 .Input("filenames: string")
                 .Input("compression_type: string")
                 .Input("buffer_size: int64")
                 .Input("header: bool")
                 .Input("field_delim: string")
                 .Input("use_quote_delim: bool")
                 .Input("na_value: string")
                 .Input("select_cols: int64")
                 .Input("record_defaults: output_types")
                 .Output("handle: variant")
                 .Attr("output_types: list({float, double, int32, int64, string}) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("The parsed lines of CSV files."));
  RegisterKernel<DecodeCSVOp>(KernelBuilder("DecodeCSV"));
  RegisterKernel<CSVDatasetOp>(KernelBuilder("CSVDataset"));
}

}  // namespace dflow

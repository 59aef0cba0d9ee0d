// Datasets that read from tensors, counters and files: TensorSliceDataset, TensorDataset,
// RangeDataset, TextLineDataset and TFRecordDataset, with TensorFlow's op names and attrs.
#include <algorithm>

#include "base/record_io.h"
#include "framework/shape_inference.h"
#include "ops/data/compressed_file.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/line_reader.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

// ---- TensorSliceDataset / TensorDataset ----

class TensorSliceDataset : public DatasetBase {
 public:
  TensorSliceDataset(std::vector<Tensor> components, std::vector<DType> types, std::vector<PartialTensorShape> shapes)
      : DatasetBase(std::move(types), std::move(shapes)), components_(std::move(components)) {}
  std::string Name() const override { return "TensorSliceDataset"; }
  bool MayBlock() const override { return false; }
  int64_t Cardinality() const override { return components_[0].dim_size(0); }
  Status Gather(absl::Span<const int64_t> indices, std::vector<Tensor>* out) const override {
    out->clear();
    for (const Tensor& t : components_) {
      ASSIGN_OR_RETURN(Tensor rows, GatherRows(t, indices));
      out->push_back(std::move(rows));
    }
    return absl::OkStatus();
  }

  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      explicit Iter(std::shared_ptr<const TensorSliceDataset> ds) : ds_(std::move(ds)) {}
      // Consecutive rows are a slice of each component: no copy.
      bool SupportsBatch() const override { return true; }
      Status GetNextBatch(IteratorContext*, int64_t max, std::vector<Tensor>* out, int64_t* count) override {
        const int64_t n = std::min(max, ds_->Cardinality() - next_);
        out->clear();
        *count = std::max<int64_t>(n, 0);
        if (n <= 0) return absl::OkStatus();
        for (const Tensor& t : ds_->components_) {
          ASSIGN_OR_RETURN(Tensor rows, t.Slice(next_, next_ + n));
          out->push_back(std::move(rows));
        }
        next_ += n;
        return absl::OkStatus();
      }
      Status GetNext(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
        const auto& c = ds_->components_;
        if (next_ >= c[0].dim_size(0)) {
          *end = true;
          return absl::OkStatus();
        }
        *end = false;
        out->clear();
        for (const Tensor& t : c) {
          ASSIGN_OR_RETURN(Tensor row, t.Slice(next_, next_ + 1));
          TensorShape s;
          for (int d = 1; d < t.dims(); ++d) s.AddDimUnchecked(t.dim_size(d));
          ASSIGN_OR_RETURN(Tensor r, row.Reshaped(s));
          out->push_back(std::move(r));
        }
        ++next_;
        return absl::OkStatus();
      }

     private:
      std::shared_ptr<const TensorSliceDataset> ds_;
      int64_t next_ = 0;
    };
    return std::unique_ptr<IteratorBase>(
        std::make_unique<Iter>(std::static_pointer_cast<const TensorSliceDataset>(self())));
  }

 private:
  std::vector<Tensor> components_;
};

class TensorDataset : public DatasetBase {
 public:
  TensorDataset(std::vector<Tensor> components, std::vector<DType> types, std::vector<PartialTensorShape> shapes)
      : DatasetBase(std::move(types), std::move(shapes)), components_(std::move(components)) {}
  std::string Name() const override { return "TensorDataset"; }
  bool MayBlock() const override { return false; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      explicit Iter(std::shared_ptr<const TensorDataset> ds) : ds_(std::move(ds)) {}
      Status GetNext(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
        *end = done_;
        if (!done_) *out = ds_->components_;
        done_ = true;
        return absl::OkStatus();
      }

     private:
      std::shared_ptr<const TensorDataset> ds_;
      bool done_ = false;
    };
    return std::unique_ptr<IteratorBase>(std::make_unique<Iter>(std::static_pointer_cast<const TensorDataset>(self())));
  }

 private:
  std::vector<Tensor> components_;
};

class TensorSliceDatasetOp : public DatasetOpKernel {
 public:
  explicit TensorSliceDatasetOp(OpKernelConstruction* c) : DatasetOpKernel(c) {
    c->SetStatus(c->GetAttr("Toutput_types", &types_));
  }
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    std::vector<Tensor> comps;
    std::vector<PartialTensorShape> shapes;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() == 0) return Error("component ", i, " is a scalar: slicing needs at least one dimension");
      if (t.dim_size(0) != ctx->input(0).dim_size(0)) {
        return Error("all components must have the same size in dimension 0: component 0 has ",
                     ctx->input(0).dim_size(0), " rows but component ", i, " has ", t.dim_size(0));
      }
      TensorShape s;
      for (int d = 1; d < t.dims(); ++d) s.AddDimUnchecked(t.dim_size(d));
      shapes.emplace_back(s);
      comps.push_back(t);
    }
    std::vector<DType> types = types_;
    return std::shared_ptr<const DatasetBase>(std::make_shared<TensorSliceDataset>(std::move(comps), std::move(types),
                                                                                   std::move(shapes)));
  }
};

class TensorDatasetOp : public DatasetOpKernel {
 public:
  explicit TensorDatasetOp(OpKernelConstruction* c) : DatasetOpKernel(c) {
    c->SetStatus(c->GetAttr("Toutput_types", &types_));
  }
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    std::vector<Tensor> comps;
    std::vector<PartialTensorShape> shapes;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      comps.push_back(ctx->input(i));
      shapes.emplace_back(ctx->input(i).shape());
    }
    std::vector<DType> types = types_;
    return std::shared_ptr<const DatasetBase>(std::make_shared<TensorDataset>(std::move(comps), std::move(types),
                                                                              std::move(shapes)));
  }
};

// ---- RangeDataset ----

class RangeDataset : public DatasetBase {
 public:
  RangeDataset(int64_t start, int64_t stop, int64_t step)
      : DatasetBase({DT_INT64}, {PartialTensorShape::Scalar()}), start_(start), stop_(stop), step_(step) {}
  std::string Name() const override { return "RangeDataset"; }
  bool MayBlock() const override { return false; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      Iter(int64_t start, int64_t stop, int64_t step) : next_(start), stop_(stop), step_(step) {}
      Status GetNext(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
        *end = step_ > 0 ? next_ >= stop_ : next_ <= stop_;
        if (*end) return absl::OkStatus();
        out->assign(1, Tensor(next_));
        // Past the last value the counter may not step again (no overflow near INT64_MAX).
        if (__builtin_add_overflow(next_, step_, &next_)) next_ = stop_;
        return absl::OkStatus();
      }

     private:
      int64_t next_, stop_, step_;
    };
    return std::unique_ptr<IteratorBase>(std::make_unique<Iter>(start_, stop_, step_));
  }

 private:
  int64_t start_, stop_, step_;
};

class RangeDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(int64_t start, ScalarInt(ctx, 0, "start"));
    ASSIGN_OR_RETURN(int64_t stop, ScalarInt(ctx, 1, "stop"));
    ASSIGN_OR_RETURN(int64_t step, ScalarInt(ctx, 2, "step"));
    if (step == 0) return Error("step must be a non-zero integer");
    return std::shared_ptr<const DatasetBase>(std::make_shared<RangeDataset>(start, stop, step));
  }
};

// ---- file datasets ----

StatusOr<std::vector<std::string>> Filenames(const Tensor& t, absl::string_view op) {
  if (t.dtype() != DT_STRING || t.dims() > 1) {
    return errors::InvalidArgument(op, ": filenames must be a string scalar or vector, not ", DTypeString(t.dtype()),
                                   " ", t.shape().DebugString());
  }
  std::vector<std::string> out(t.flat<std::string>().begin(), t.flat<std::string>().end());
  return out;
}

Status CheckCompression(OpKernelContext* ctx, int index, absl::string_view op) {
  const Tensor& t = ctx->input(index);
  if (t.dtype() != DT_STRING || t.dims() != 0)
    return errors::InvalidArgument(op, ": compression_type must be a string scalar");
  if (!t.scalar<std::string>().empty()) {
    return errors::Unimplemented(op, ": compression_type '", t.scalar<std::string>(),
                                 "' is not supported (only uncompressed files)");
  }
  return absl::OkStatus();
}

constexpr int64_t kDefaultBufferSize = 256 << 10;
constexpr int64_t kMaxBufferSize = int64_t{256} << 20;

class TextLineDataset : public DatasetBase {
 public:
  TextLineDataset(std::shared_ptr<Env> env, std::vector<std::string> files, int64_t buffer_size)
      : DatasetBase({DT_STRING}, {PartialTensorShape::Scalar()}),
        env_(std::move(env)),
        files_(std::move(files)),
        buffer_size_(buffer_size) {}
  std::string Name() const override { return "TextLineDataset"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      explicit Iter(std::shared_ptr<const TextLineDataset> ds) : ds_(std::move(ds)) {}
      Status GetNext(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
        std::string line;
        while (true) {
          if (reader_ == nullptr) {
            if (file_ >= ds_->files_.size()) {
              *end = true;
              return absl::OkStatus();
            }
            ASSIGN_OR_RETURN(auto f, ds_->env_->NewRandomAccessFile(ds_->files_[file_]));
            reader_ = std::make_unique<LineReader>(std::move(f), ds_->buffer_size_);
          }
          ASSIGN_OR_RETURN(bool got, reader_->ReadLine(&line));
          if (got) break;
          reader_.reset();
          ++file_;
        }
        *end = false;
        out->assign(1, Tensor(std::move(line)));
        return absl::OkStatus();
      }

     private:
      std::shared_ptr<const TextLineDataset> ds_;
      size_t file_ = 0;
      std::unique_ptr<LineReader> reader_;
    };
    return std::unique_ptr<IteratorBase>(
        std::make_unique<Iter>(std::static_pointer_cast<const TextLineDataset>(self())));
  }

 private:
  std::shared_ptr<Env> env_;  // checks the files against the device's file policy
  std::vector<std::string> files_;
  int64_t buffer_size_;
};

class TFRecordDataset : public DatasetBase {
 public:
  TFRecordDataset(std::shared_ptr<Env> env, std::vector<std::string> files, std::string compression)
      : DatasetBase({DT_STRING}, {PartialTensorShape::Scalar()}),
        env_(std::move(env)),
        files_(std::move(files)),
        compression_(std::move(compression)) {}
  std::string Name() const override { return "TFRecordDataset"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      explicit Iter(std::shared_ptr<const TFRecordDataset> ds) : ds_(std::move(ds)) {}
      Status GetNext(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
        std::string record;
        while (true) {
          if (file_ == nullptr) {
            if (index_ >= ds_->files_.size()) {
              *end = true;
              return absl::OkStatus();
            }
            ASSIGN_OR_RETURN(auto raw, ds_->env_->NewRandomAccessFile(ds_->files_[index_]));
            ASSIGN_OR_RETURN(file_, data::NewInflatingFile(std::move(raw), ds_->compression_));
            offset_ = 0;
          }
          RecordReader reader(file_.get());
          Status s = reader.ReadRecord(&offset_, &record);
          if (s.ok()) break;
          if (!absl::IsOutOfRange(s)) return s;  // DataLoss names the file and offset
          file_.reset();
          ++index_;
        }
        *end = false;
        out->assign(1, Tensor(std::move(record)));
        return absl::OkStatus();
      }

     private:
      std::shared_ptr<const TFRecordDataset> ds_;
      size_t index_ = 0;
      std::unique_ptr<RandomAccessFile> file_;
      uint64_t offset_ = 0;
    };
    return std::unique_ptr<IteratorBase>(
        std::make_unique<Iter>(std::static_pointer_cast<const TFRecordDataset>(self())));
  }

 private:
  std::shared_ptr<Env> env_;  // checks the files against the device's file policy
  std::vector<std::string> files_;
  std::string compression_;  // "", "ZLIB" or "GZIP"
};

StatusOr<int64_t> BufferSize(const Tensor& t, absl::string_view op) {
  if (t.dtype() != DT_INT64 || t.dims() != 0)
    return errors::InvalidArgument(op, ": buffer_size must be an int64 scalar");
  int64_t n = t.scalar<int64_t>();
  if (n == 0) return kDefaultBufferSize;
  if (n < 0 || n > kMaxBufferSize) {
    return errors::InvalidArgument(op, ": buffer_size ", n, " must be in [0, ", kMaxBufferSize, "]");
  }
  return n;
}

class TextLineDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<std::string> files, Filenames(ctx->input(0), "TextLineDataset"));
    RETURN_IF_ERROR(CheckCompression(ctx, 1, "TextLineDataset"));
    ASSIGN_OR_RETURN(int64_t buffer, BufferSize(ctx->input(2), "TextLineDataset"));
    ASSIGN_OR_RETURN(std::shared_ptr<Env> env, FileEnv(ctx, files));
    return std::shared_ptr<const DatasetBase>(std::make_shared<TextLineDataset>(std::move(env), std::move(files),
                                                                                buffer));
  }
};

class TFRecordDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<std::string> files, Filenames(ctx->input(0), "TFRecordDataset"));
    const Tensor& compression = ctx->input(1);
    if (compression.dtype() != DT_STRING || compression.dims() != 0) {
      return errors::InvalidArgument("TFRecordDataset: compression_type must be a string scalar");
    }
    RETURN_IF_ERROR(data::CheckCompressionType(compression.scalar<std::string>()));
    RETURN_IF_ERROR(BufferSize(ctx->input(2), "TFRecordDataset").status());
    ASSIGN_OR_RETURN(std::shared_ptr<Env> env, FileEnv(ctx, files));
    return std::shared_ptr<const DatasetBase>(std::make_shared<TFRecordDataset>(std::move(env), std::move(files),
                                                                                compression.scalar<std::string>()));
  }
};

}  // namespace

void RegisterSourceDatasetOps() {
  RegisterOp(OpDefBuilder("TensorSliceDataset")
                 .Input("components: Toutput_types")
                 .Output("handle: variant")
                 .Attr("Toutput_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .SetShapeFn(ScalarShape)
                 .Doc("The rows (slices along dimension 0) of the components."));
  RegisterOp(OpDefBuilder("TensorDataset")
                 .Input("components: Toutput_types")
                 .Output("handle: variant")
                 .Attr("Toutput_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .SetShapeFn(ScalarShape)
                 .Doc("One element: the components."));
  RegisterOp(OpDefBuilder("RangeDataset")
                 .Input("start: int64")
                 .Input("stop: int64")
                 .Input("step: int64")
                 .Output("handle: variant")
                 .Attr("output_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .SetShapeFn(ScalarShape)
                 .Doc("start, start + step, ... up to (not including) stop."));
  RegisterOp(OpDefBuilder("TextLineDataset")
                 .Input("filenames: string")
                 .Input("compression_type: string")
                 .Input("buffer_size: int64")
                 .Output("handle: variant")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("The lines of text files."));
  RegisterOp(OpDefBuilder("TFRecordDataset")
                 .Input("filenames: string")
                 .Input("compression_type: string")
                 .Input("buffer_size: int64")
                 .Output("handle: variant")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("The records of TFRecord files."));
  RegisterKernel<TensorSliceDatasetOp>(KernelBuilder("TensorSliceDataset"));
  RegisterKernel<TensorDatasetOp>(KernelBuilder("TensorDataset"));
  RegisterKernel<RangeDatasetOp>(KernelBuilder("RangeDataset"));
  RegisterKernel<TextLineDatasetOp>(KernelBuilder("TextLineDataset"));
  RegisterKernel<TFRecordDatasetOp>(KernelBuilder("TFRecordDataset"));
}

}  // namespace dflow

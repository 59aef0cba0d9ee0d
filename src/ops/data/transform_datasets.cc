// Transformations without functions: ShuffleDataset, BatchDatasetV2, RepeatDataset,
// TakeDataset, SkipDataset, ZipDataset and ShardDataset, with TensorFlow's names and attrs.
#include <algorithm>
#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"
#include "framework/shape_inference.h"
#include "ops/data/dataset_kernel.h"
#include "ops/random/philox.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

template <typename D>
std::shared_ptr<const D> Self(const D* d) {
  return std::static_pointer_cast<const D>(d->shared_from_this());
}

// A dataset over one input, with the input's element structure unless told otherwise.
class UnaryDataset : public DatasetBase {
 public:
  explicit UnaryDataset(std::shared_ptr<const DatasetBase> input)
      : DatasetBase(input->output_dtypes(), input->output_shapes()), input_(std::move(input)) {}
  UnaryDataset(std::shared_ptr<const DatasetBase> input, std::vector<PartialTensorShape> shapes)
      : DatasetBase(input->output_dtypes(), std::move(shapes)), input_(std::move(input)) {}
  const std::shared_ptr<const DatasetBase>& input() const { return input_; }
  // These transformations wait for nothing but their input.
  bool MayBlock() const override { return input_->MayBlock(); }

 private:
  std::shared_ptr<const DatasetBase> input_;
};

// ---- ShuffleDataset ----

class ShuffleDataset : public UnaryDataset {
 public:
  ShuffleDataset(std::shared_ptr<const DatasetBase> input, int64_t buffer_size, uint64_t seed, uint64_t seed2,
                 bool reshuffle)
      : UnaryDataset(std::move(input)),
        buffer_size_(buffer_size),
        seeds_(seed, seed2),
        reshuffle_(reshuffle),
        seed_(seed),
        seed2_(seed2) {}
  std::string Name() const override { return "ShuffleDataset"; }

  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    uint64_t s = seed_, s2 = seed2_;
    if (reshuffle_) {
      // Each iteration (each epoch of a Repeat above) draws its own seeds from the dataset's
      // generator, so the orders differ per epoch and repeat exactly from run to run.
      std::lock_guard<std::mutex> l(mu_);
      Philox4x32::Block b = seeds_.Next();
      s = uint64_t{b[0]} << 32 | b[1];
      s2 = uint64_t{b[2]} << 32 | b[3];
    }
    if (input()->Cardinality() >= 0) {
      return std::unique_ptr<IteratorBase>(std::make_unique<IndexIter>(Self(this), s, s2));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> in, input()->MakeIterator());
    return std::unique_ptr<IteratorBase>(std::make_unique<Iter>(Self(this), std::move(in), s, s2));
  }

 private:
  // The element at random from a buffer of n: the draw both iterators make.
  static size_t Draw(Philox4x32* rng, size_t n) {
    Philox4x32::Block b = rng->Next();
    uint64_t r = uint64_t{b[0]} << 32 | b[1];
    return static_cast<size_t>(r % n);
  }

  // Over an input with random access, the buffer holds the input's indices instead of its
  // elements (element i of such an input is index i): the same order as Iter gives, and a batch
  // of them is one Gather.
  class IndexIter : public IteratorBase {
   public:
    IndexIter(std::shared_ptr<const ShuffleDataset> ds, uint64_t s, uint64_t s2)
        : ds_(std::move(ds)), rng_(s, s2), size_(ds_->input()->Cardinality()) {}
    Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      int64_t count = 0;
      RETURN_IF_ERROR(GetNextBatch(ctx, 1, out, &count));
      *end = count == 0;
      for (Tensor& t : *out) {
        ASSIGN_OR_RETURN(t, FirstRow(t));
      }
      return absl::OkStatus();
    }
    bool SupportsBatch() const override { return true; }
    Status GetNextBatch(IteratorContext*, int64_t max, std::vector<Tensor>* out, int64_t* count) override {
      picked_.clear();
      while (static_cast<int64_t>(picked_.size()) < max) {
        while (next_ < size_ && static_cast<int64_t>(buffer_.size()) < ds_->buffer_size_) buffer_.push_back(next_++);
        if (buffer_.empty()) break;
        size_t i = Draw(&rng_, buffer_.size());
        picked_.push_back(buffer_[i]);
        buffer_[i] = buffer_.back();
        buffer_.pop_back();
      }
      *count = static_cast<int64_t>(picked_.size());
      out->clear();
      if (picked_.empty()) return absl::OkStatus();
      return ds_->input()->Gather(picked_, out);
    }

   private:
    std::shared_ptr<const ShuffleDataset> ds_;
    Philox4x32 rng_;
    const int64_t size_;
    int64_t next_ = 0;
    std::vector<int64_t> buffer_, picked_;
  };

  class Iter : public IteratorBase {
   public:
    Iter(std::shared_ptr<const ShuffleDataset> ds, std::unique_ptr<IteratorBase> in, uint64_t s, uint64_t s2)
        : ds_(std::move(ds)), input_(std::move(in)), rng_(s, s2) {}
    Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      while (!input_done_ && static_cast<int64_t>(buffer_.size()) < ds_->buffer_size_) {
        std::vector<Tensor> e;
        bool e_end = false;
        RETURN_IF_ERROR(input_->GetNext(ctx, &e, &e_end));
        if (e_end) {
          input_done_ = true;
          break;
        }
        buffer_.push_back(std::move(e));
      }
      if (buffer_.empty()) {
        *end = true;
        return absl::OkStatus();
      }
      size_t i = Draw(&rng_, buffer_.size());
      *out = std::move(buffer_[i]);
      buffer_[i] = std::move(buffer_.back());
      buffer_.pop_back();
      *end = false;
      return absl::OkStatus();
    }

   private:
    std::shared_ptr<const ShuffleDataset> ds_;
    std::unique_ptr<IteratorBase> input_;
    Philox4x32 rng_;
    std::vector<std::vector<Tensor>> buffer_;
    bool input_done_ = false;
  };

  int64_t buffer_size_;
  mutable std::mutex mu_;
  mutable Philox4x32 seeds_;
  bool reshuffle_;
  uint64_t seed_, seed2_;
};

class ShuffleDatasetOp : public DatasetOpKernel {
 public:
  explicit ShuffleDatasetOp(OpKernelConstruction* c) : DatasetOpKernel(c) {
    c->SetStatus(c->GetAttr("reshuffle_each_iteration", &reshuffle_));
  }
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto input, InputDataset(ctx));
    ASSIGN_OR_RETURN(int64_t buffer, ScalarInt(ctx, 1, "buffer_size"));
    ASSIGN_OR_RETURN(int64_t seed, ScalarInt(ctx, 2, "seed"));
    ASSIGN_OR_RETURN(int64_t seed2, ScalarInt(ctx, 3, "seed2"));
    if (buffer <= 0) return Error("buffer_size must be greater than zero, not ", buffer);
    if (seed == 0 && seed2 == 0) {
      // TensorFlow's rule: no seeds at all means fresh randomness.
      std::random_device rd;
      seed = (int64_t{rd()} << 32) | rd();
      seed2 = (int64_t{rd()} << 32) | rd();
    }
    return std::shared_ptr<const DatasetBase>(std::make_shared<ShuffleDataset>(
        std::move(input), buffer, static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2), reshuffle_));
  }

 private:
  bool reshuffle_ = true;
};

// ---- BatchDatasetV2 ----

// Stacks equal-shaped tensors along a new first dimension.
StatusOr<Tensor> Stack(const std::vector<std::vector<Tensor>>& elems, size_t comp) {
  const Tensor& first = elems[0][comp];
  for (size_t i = 1; i < elems.size(); ++i) {
    if (elems[i][comp].shape() != first.shape()) {
      return errors::InvalidArgument("Cannot batch tensors with different shapes in component ", comp,
                                     ". First element had shape ", first.shape().DebugString(), " and element ", i,
                                     " had shape ", elems[i][comp].shape().DebugString(), ".");
    }
  }
  TensorShape shape;
  RETURN_IF_ERROR(shape.AddDim(static_cast<int64_t>(elems.size())));
  for (int d = 0; d < first.dims(); ++d) RETURN_IF_ERROR(shape.AddDim(first.dim_size(d)));
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(first.dtype(), shape));
  const int64_t n = first.NumElements();
  if (first.dtype() == DT_STRING) {
    std::string* dst = out.data<std::string>();
    for (size_t i = 0; i < elems.size(); ++i) {
      auto src = elems[i][comp].flat<std::string>();
      for (int64_t k = 0; k < n; ++k) dst[i * n + k] = src[k];
    }
  } else if (DTypeSize(first.dtype()) > 0) {
    const size_t bytes = first.TotalBytes();
    char* dst = static_cast<char*>(out.raw_data());
    for (size_t i = 0; i < elems.size(); ++i) {
      if (bytes > 0) std::memcpy(dst + i * bytes, elems[i][comp].raw_data(), bytes);
    }
  } else {
    return errors::InvalidArgument("Cannot batch tensors of type ", DTypeString(first.dtype()), " (component ", comp,
                                   ")");
  }
  return out;
}

class BatchDataset : public UnaryDataset {
 public:
  BatchDataset(std::shared_ptr<const DatasetBase> input, int64_t batch, bool drop_remainder)
      : UnaryDataset(input, BatchShapes(*input, batch, drop_remainder)), batch_(batch), drop_(drop_remainder) {}
  std::string Name() const override { return "BatchDatasetV2"; }

  static std::vector<PartialTensorShape> BatchShapes(const DatasetBase& in, int64_t batch, bool drop) {
    std::vector<PartialTensorShape> out;
    for (const PartialTensorShape& s : in.output_shapes()) {
      if (s.unknown_rank()) {
        out.push_back(PartialTensorShape());
        continue;
      }
      std::vector<int64_t> dims{drop ? batch : -1};
      for (int64_t d : s.dim_sizes()) dims.push_back(d);
      out.push_back(PartialTensorShape::FromDims(dims).value_or(PartialTensorShape()));
    }
    return out;
  }

  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      Iter(std::shared_ptr<const BatchDataset> ds, std::unique_ptr<IteratorBase> in)
          : ds_(std::move(ds)), input_(std::move(in)) {}
      Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
        if (input_->SupportsBatch()) {
          int64_t count = 0;
          if (!input_done_) RETURN_IF_ERROR(input_->GetNextBatch(ctx, ds_->batch_, out, &count));
          if (count < ds_->batch_) input_done_ = true;
          *end = count == 0 || (ds_->drop_ && count < ds_->batch_);
          if (*end) out->clear();
          return absl::OkStatus();
        }
        std::vector<std::vector<Tensor>> elems;
        while (!input_done_ && static_cast<int64_t>(elems.size()) < ds_->batch_) {
          std::vector<Tensor> e;
          bool e_end = false;
          RETURN_IF_ERROR(input_->GetNext(ctx, &e, &e_end));
          if (e_end) {
            input_done_ = true;
            break;
          }
          elems.push_back(std::move(e));
        }
        if (elems.empty() || (ds_->drop_ && static_cast<int64_t>(elems.size()) < ds_->batch_)) {
          *end = true;
          return absl::OkStatus();
        }
        out->clear();
        for (size_t c = 0; c < elems[0].size(); ++c) {
          ASSIGN_OR_RETURN(Tensor t, Stack(elems, c));
          out->push_back(std::move(t));
        }
        *end = false;
        return absl::OkStatus();
      }

     private:
      std::shared_ptr<const BatchDataset> ds_;
      std::unique_ptr<IteratorBase> input_;
      bool input_done_ = false;
    };
    ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> in, input()->MakeIterator());
    return std::unique_ptr<IteratorBase>(std::make_unique<Iter>(Self(this), std::move(in)));
  }

 private:
  int64_t batch_;
  bool drop_;
};

class BatchDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto input, InputDataset(ctx));
    ASSIGN_OR_RETURN(int64_t batch, ScalarInt(ctx, 1, "batch_size"));
    ASSIGN_OR_RETURN(int64_t drop, ScalarInt(ctx, 2, "drop_remainder"));
    if (batch <= 0) return Error("Batch size must be greater than zero, not ", batch);
    return std::shared_ptr<const DatasetBase>(std::make_shared<BatchDataset>(std::move(input), batch, drop != 0));
  }
};

// ---- RepeatDataset, TakeDataset, SkipDataset, ShardDataset ----

class RepeatDataset : public UnaryDataset {
 public:
  RepeatDataset(std::shared_ptr<const DatasetBase> input, int64_t count)
      : UnaryDataset(std::move(input)), count_(count) {}
  std::string Name() const override { return "RepeatDataset"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      Iter(std::shared_ptr<const RepeatDataset> ds, std::unique_ptr<IteratorBase> first)
          : ds_(std::move(ds)), input_(std::move(first)), batchable_(input_ != nullptr && input_->SupportsBatch()) {}
      // Batches of the input, joined across the end of an epoch.
      bool SupportsBatch() const override { return batchable_; }
      Status GetNextBatch(IteratorContext* ctx, int64_t max, std::vector<Tensor>* out, int64_t* count) override {
        std::vector<std::vector<Tensor>> parts;
        int64_t got = 0;
        while (got < max && (ds_->count_ < 0 || epoch_ < ds_->count_)) {
          if (input_ == nullptr) {
            ASSIGN_OR_RETURN(input_, ds_->input()->MakeIterator());
          }
          std::vector<Tensor> part;
          int64_t n = 0;
          const int64_t want = max - got;
          RETURN_IF_ERROR(input_->GetNextBatch(ctx, want, &part, &n));
          if (n > 0) {
            produced_in_epoch_ = true;
            got += n;
            parts.push_back(std::move(part));
          }
          if (n < want) {  // the epoch ended
            input_.reset();
            ++epoch_;
            if (!produced_in_epoch_) break;  // an empty input: the end, as in GetNext
            produced_in_epoch_ = false;
          }
        }
        *count = got;
        out->clear();
        if (parts.size() == 1) *out = std::move(parts[0]);
        for (size_t c = 0; parts.size() > 1 && c < parts[0].size(); ++c) {
          std::vector<Tensor> pieces;
          for (auto& p : parts) pieces.push_back(std::move(p[c]));
          ASSIGN_OR_RETURN(Tensor joined, ConcatRows(pieces, absl::StrCat("component ", c)));
          out->push_back(std::move(joined));
        }
        return absl::OkStatus();
      }
      Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
        while (ds_->count_ < 0 || epoch_ < ds_->count_) {
          if (input_ == nullptr) {
            ASSIGN_OR_RETURN(input_, ds_->input()->MakeIterator());
          }
          RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
          if (!*end) {
            produced_in_epoch_ = true;
            return absl::OkStatus();
          }
          input_.reset();
          ++epoch_;
          // An empty input repeated forever would loop forever: it ends instead.
          if (!produced_in_epoch_) break;
          produced_in_epoch_ = false;
        }
        *end = true;
        return absl::OkStatus();
      }

     private:
      std::shared_ptr<const RepeatDataset> ds_;
      std::unique_ptr<IteratorBase> input_;
      const bool batchable_;
      int64_t epoch_ = 0;
      bool produced_in_epoch_ = false;
    };
    // The first epoch's iterator is made now, so that Batch knows whether it can ask for batches.
    std::unique_ptr<IteratorBase> first;
    if (count_ != 0) {
      ASSIGN_OR_RETURN(first, input()->MakeIterator());
    }
    return std::unique_ptr<IteratorBase>(std::make_unique<Iter>(Self(this), std::move(first)));
  }

 private:
  int64_t count_;
};

// Take (keep the first `count`), Skip (drop the first `count`) and Shard (every n-th from `index`)
// walk their input once; they differ in which positions they pass.
class SelectDataset : public UnaryDataset {
 public:
  enum Kind { kTake, kSkip, kShard };
  SelectDataset(std::shared_ptr<const DatasetBase> input, Kind kind, int64_t a, int64_t b)
      : UnaryDataset(std::move(input)), kind_(kind), a_(a), b_(b) {}
  std::string Name() const override {
    return kind_ == kTake ? "TakeDataset" : kind_ == kSkip ? "SkipDataset" : "ShardDataset";
  }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      Iter(std::shared_ptr<const SelectDataset> ds, std::unique_ptr<IteratorBase> in)
          : ds_(std::move(ds)), input_(std::move(in)) {}
      Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
        const SelectDataset& d = *ds_;
        if (d.kind_ == kTake && d.a_ >= 0 && pos_ >= d.a_) {
          *end = true;
          return absl::OkStatus();
        }
        while (true) {
          RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
          if (*end) return absl::OkStatus();
          const int64_t i = pos_++;
          bool keep = d.kind_ == kTake || (d.kind_ == kSkip ? (d.a_ >= 0 && i >= d.a_) : i % d.a_ == d.b_);
          if (keep) return absl::OkStatus();
        }
      }

     private:
      std::shared_ptr<const SelectDataset> ds_;
      std::unique_ptr<IteratorBase> input_;
      int64_t pos_ = 0;
    };
    ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> in, input()->MakeIterator());
    return std::unique_ptr<IteratorBase>(std::make_unique<Iter>(Self(this), std::move(in)));
  }

 private:
  Kind kind_;
  int64_t a_, b_;
};

class RepeatDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto input, InputDataset(ctx));
    ASSIGN_OR_RETURN(int64_t count, ScalarInt(ctx, 1, "count"));
    return std::shared_ptr<const DatasetBase>(std::make_shared<RepeatDataset>(std::move(input), count));
  }
};

template <SelectDataset::Kind kKind>
class SelectDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto input, InputDataset(ctx));
    int64_t a = 0, b = 0;
    if (kKind == SelectDataset::kShard) {
      ASSIGN_OR_RETURN(a, ScalarInt(ctx, 1, "num_shards"));
      ASSIGN_OR_RETURN(b, ScalarInt(ctx, 2, "index"));
      if (a <= 0) return Error("Number of shards must be greater than zero (currently num_shards = ", a, ")");
      if (b < 0 || b >= a) return Error("Index must be between 0 and ", a - 1, " (currently index = ", b, ")");
    } else {
      ASSIGN_OR_RETURN(a, ScalarInt(ctx, 1, "count"));
    }
    return std::shared_ptr<const DatasetBase>(std::make_shared<SelectDataset>(std::move(input), kKind, a, b));
  }
};

// ---- ZipDataset ----

class ZipDataset : public DatasetBase {
 public:
  ZipDataset(std::vector<std::shared_ptr<const DatasetBase>> inputs, std::vector<DType> types,
             std::vector<PartialTensorShape> shapes)
      : DatasetBase(std::move(types), std::move(shapes)), inputs_(std::move(inputs)) {}
  std::string Name() const override { return "ZipDataset"; }
  bool MayBlock() const override {
    for (const auto& in : inputs_) {
      if (in->MayBlock()) return true;
    }
    return false;
  }
  int64_t Cardinality() const override {
    int64_t n = -1;
    for (const auto& in : inputs_) {
      const int64_t c = in->Cardinality();
      if (c < 0) return -1;
      n = n < 0 ? c : std::min(n, c);
    }
    return n;
  }
  Status Gather(absl::Span<const int64_t> indices, std::vector<Tensor>* out) const override {
    out->clear();
    for (const auto& in : inputs_) {
      std::vector<Tensor> part;
      RETURN_IF_ERROR(in->Gather(indices, &part));
      for (Tensor& t : part) out->push_back(std::move(t));
    }
    return absl::OkStatus();
  }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      Iter(std::shared_ptr<const ZipDataset> ds, std::vector<std::unique_ptr<IteratorBase>> in)
          : ds_(std::move(ds)), inputs_(std::move(in)) {
        batchable_ = true;
        for (const auto& it : inputs_) batchable_ = batchable_ && it->SupportsBatch();
      }
      bool SupportsBatch() const override { return batchable_; }
      // Each input's batch; a longer one is cut to the shortest (the zip ends there).
      Status GetNextBatch(IteratorContext* ctx, int64_t max, std::vector<Tensor>* out, int64_t* count) override {
        std::vector<std::vector<Tensor>> parts(inputs_.size());
        int64_t n = max;
        for (size_t i = 0; i < inputs_.size(); ++i) {
          int64_t got = 0;
          RETURN_IF_ERROR(inputs_[i]->GetNextBatch(ctx, max, &parts[i], &got));
          n = std::min(n, got);
        }
        *count = n;
        out->clear();
        if (n == 0) return absl::OkStatus();
        for (auto& part : parts) {
          for (Tensor& t : part) {
            if (t.dim_size(0) != n) {
              ASSIGN_OR_RETURN(t, t.Slice(0, n));
            }
            out->push_back(std::move(t));
          }
        }
        return absl::OkStatus();
      }
      Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
        out->clear();
        for (auto& in : inputs_) {
          std::vector<Tensor> e;
          RETURN_IF_ERROR(in->GetNext(ctx, &e, end));
          if (*end) {
            out->clear();
            return absl::OkStatus();
          }
          for (Tensor& t : e) out->push_back(std::move(t));
        }
        return absl::OkStatus();
      }

     private:
      std::shared_ptr<const ZipDataset> ds_;
      std::vector<std::unique_ptr<IteratorBase>> inputs_;
      bool batchable_;
    };
    std::vector<std::unique_ptr<IteratorBase>> its;
    for (const auto& in : inputs_) {
      ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, in->MakeIterator());
      its.push_back(std::move(it));
    }
    return std::unique_ptr<IteratorBase>(std::make_unique<Iter>(Self(this), std::move(its)));
  }

 private:
  std::vector<std::shared_ptr<const DatasetBase>> inputs_;
};

class ZipDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    std::vector<std::shared_ptr<const DatasetBase>> inputs;
    std::vector<DType> types;
    std::vector<PartialTensorShape> shapes;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      ASSIGN_OR_RETURN(auto in, InputDataset(ctx, i));
      types.insert(types.end(), in->output_dtypes().begin(), in->output_dtypes().end());
      shapes.insert(shapes.end(), in->output_shapes().begin(), in->output_shapes().end());
      inputs.push_back(std::move(in));
    }
    return std::shared_ptr<const DatasetBase>(std::make_shared<ZipDataset>(std::move(inputs), std::move(types),
                                                                           std::move(shapes)));
  }
};

OpDefBuilder Unary(const char* name) { return std::move(OpDefBuilder(name).Input("input_dataset: variant")); }

OpDefBuilder& WithStructure(OpDefBuilder& b) {
  return b.Output("handle: variant")
      .Attr("output_types: list(type) >= 1")
      .Attr("output_shapes: list(shape) >= 1")
      .SetShapeFn(ScalarShape);
}

}  // namespace

void RegisterTransformDatasetOps() {
  {
    OpDefBuilder b = Unary("ShuffleDataset");
    b.Input("buffer_size: int64")
        .Input("seed: int64")
        .Input("seed2: int64")
        .Attr("reshuffle_each_iteration: bool = true")
        .Doc("A random permutation within a sliding window.");
    RegisterOp(WithStructure(b));
  }
  {
    OpDefBuilder b = Unary("BatchDatasetV2");
    b.Input("batch_size: int64")
        .Input("drop_remainder: bool")
        .Attr("parallel_copy: bool = false")
        .Doc("Consecutive elements stacked along a new first dimension.");
    RegisterOp(WithStructure(b));
  }
  for (const char* op : {"RepeatDataset", "TakeDataset", "SkipDataset"}) {
    OpDefBuilder b = Unary(op);
    b.Input("count: int64").Doc("Repeats, keeps the first or drops the first `count` elements (-1: all).");
    RegisterOp(WithStructure(b));
  }
  {
    OpDefBuilder b = Unary("ShardDataset");
    b.Input("num_shards: int64")
        .Input("index: int64")
        .Attr("require_non_empty: bool = false")
        .Doc("Every num_shards-th element, starting at index.");
    RegisterOp(WithStructure(b));
  }
  {
    OpDefBuilder b("ZipDataset");
    b.Input("input_datasets: N * variant").Attr("N: int >= 1").Doc("The elements of several datasets side by side.");
    RegisterOp(WithStructure(b));
  }
  RegisterKernel<ShuffleDatasetOp>(KernelBuilder("ShuffleDataset"));
  RegisterKernel<BatchDatasetOp>(KernelBuilder("BatchDatasetV2"));
  RegisterKernel<RepeatDatasetOp>(KernelBuilder("RepeatDataset"));
  RegisterKernel<SelectDatasetOp<SelectDataset::kTake>>(KernelBuilder("TakeDataset"));
  RegisterKernel<SelectDatasetOp<SelectDataset::kSkip>>(KernelBuilder("SkipDataset"));
  RegisterKernel<SelectDatasetOp<SelectDataset::kShard>>(KernelBuilder("ShardDataset"));
  RegisterKernel<ZipDatasetOp>(KernelBuilder("ZipDataset"));
}

}  // namespace dflow

// ResizeBilinear, ResizeNearestNeighbor, ResizeBilinearGrad and ResizeNearestNeighborGrad
// (TensorFlow's names, inputs and attrs align_corners / half_pixel_centers), and the gradients
// of the two forward ops (ResizeBilinearGrad has none; ResizeNearestNeighborGrad has no
// registered gradient, as in TensorFlow).
//
// TensorFlow's arithmetic, in float: scale = (in - 1) / (out - 1) when align_corners and out > 1,
// else in / out. Bilinear samples at (i + 0.5) * scale - 0.5 (half_pixel_centers) or i * scale,
// between floor and ceil clamped to the image, and outputs float for any input type. Nearest
// takes floor((i + 0.5) * scale) (half_pixel_centers), round(i * scale) (align_corners) or
// floor(i * scale), clamped. Images are NHWC.
#include <algorithm>
#include <cmath>
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/image/image_ops.h"
#include "ops/nn/dnnl_util.h"
#include "ops/nn/nn_grad_util.h"

namespace dflow {
namespace {

float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return (align_corners && out > 1) ? float(in - 1) / float(out - 1) : float(in) / float(out);
}

struct ResizeAttrs {
  bool align_corners = false, half_pixel_centers = false;
};

void ParseResizeAttrs(OpKernelConstruction* c, ResizeAttrs* a) {
  c->SetStatus(c->GetAttr("align_corners", &a->align_corners));
  c->SetStatus(c->GetAttr("half_pixel_centers", &a->half_pixel_centers));
  if (a->align_corners && a->half_pixel_centers) {
    c->SetStatus(errors::InvalidArgument(c->node().op, " '", c->node().name,
                                         "': If half_pixel_centers is True, align_corners must be False."));
  }
}

// Reads the [height, width] size tensor.
Status ReadSize(const Tensor& t, const char* what, int64_t* h, int64_t* w) {
  if (t.shape().dims() != 1) {
    return errors::InvalidArgument(what, " must be 1-dimensional", t.shape().DebugString());
  }
  if (t.NumElements() != 2) {
    return errors::InvalidArgument(what, " must have two elements", t.shape().DebugString());
  }
  *h = t.data<int32_t>()[0];
  *w = t.data<int32_t>()[1];
  return absl::OkStatus();
}

// Bilinear sample positions of one dimension.
struct Interp {
  int64_t lower, upper;
  float lerp;
};
std::vector<Interp> BilinearWeights(int64_t out, int64_t in, float scale, bool half_pixel) {
  std::vector<Interp> v(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const float p = half_pixel ? (float(i) + 0.5f) * scale - 0.5f : float(i) * scale;
    const float pf = std::floor(p);
    v[i].lower = std::max(static_cast<int64_t>(pf), int64_t{0});
    v[i].upper = std::min(static_cast<int64_t>(std::ceil(p)), in - 1);
    v[i].lerp = p - pf;
  }
  return v;
}

std::vector<int64_t> NearestIndices(int64_t out, int64_t in, float scale, const ResizeAttrs& a) {
  std::vector<int64_t> v(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const float p = a.half_pixel_centers ? (float(i) + 0.5f) * scale : float(i) * scale;
    int64_t k = std::min(a.align_corners ? static_cast<int64_t>(std::round(p)) : static_cast<int64_t>(std::floor(p)),
                         in - 1);
    if (a.half_pixel_centers) k = std::max(k, int64_t{0});
    v[i] = k;
  }
  return v;
}

// The validated geometry of a forward resize: images [batch, in_h, in_w, channels].
struct ResizeDims {
  int64_t batch, in_h, in_w, channels, out_h, out_w;
};
StatusOr<ResizeDims> ValidateResize(const Tensor& images, const Tensor& size, absl::string_view prefix) {
  if (images.shape().dims() != 4) {
    return errors::InvalidArgument(prefix, "input must be 4-dimensional", images.shape().DebugString());
  }
  ResizeDims d{images.shape().dim_size(0),
               images.shape().dim_size(1),
               images.shape().dim_size(2),
               images.shape().dim_size(3),
               0,
               0};
  Status s = ReadSize(size, "shape_t", &d.out_h, &d.out_w);
  if (!s.ok()) return errors::InvalidArgument(prefix, s.message());
  if (d.out_h <= 0 || d.out_w <= 0) return errors::InvalidArgument(prefix, "output dimensions must be positive");
  if (d.channels <= 0) return errors::InvalidArgument(prefix, "image must have at least one channel");
  if (d.in_h <= 0 || d.in_w <= 0) return errors::InvalidArgument(prefix, "input image must be of non-zero size");
  return d;
}

template <typename T>
class ResizeBilinearOp : public OpKernel {
 public:
  explicit ResizeBilinearOp(OpKernelConstruction* c) : OpKernel(c) { ParseResizeAttrs(c, &a_); }
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    OP_REQUIRES_ASSIGN(ctx, ResizeDims d,
                       ValidateResize(images, ctx->input(1), absl::StrCat(type_string(), " '", name(), "': ")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({d.batch, d.out_h, d.out_w, d.channels}), &out));
    if (out->NumElements() == 0) return;
    const auto ys = BilinearWeights(d.out_h, d.in_h, ResizeScale(d.in_h, d.out_h, a_.align_corners),
                                    a_.half_pixel_centers);
    const auto xs = BilinearWeights(d.out_w, d.in_w, ResizeScale(d.in_w, d.out_w, a_.align_corners),
                                    a_.half_pixel_centers);
    const T* in = images.data<T>();
    float* o = out->data<float>();
    const int64_t C = d.channels, row = d.in_w * C, rows = d.batch * d.out_h;
    DnnlThreads threads(out->NumElements() * 8);
#pragma omp parallel for num_threads(threads.threads()) schedule(static)
    for (int64_t by = 0; by < rows; ++by) {
      const int64_t b = by / d.out_h, y = by % d.out_h;
      const T* img = in + b * d.in_h * row;
      const T* top = img + ys[y].lower * row;
      const T* bottom = img + ys[y].upper * row;
      const float yl = ys[y].lerp;
      float* orow = o + by * d.out_w * C;
      for (int64_t x = 0; x < d.out_w; ++x) {
        const T* tl = top + xs[x].lower * C;
        const T* tr = top + xs[x].upper * C;
        const T* bl = bottom + xs[x].lower * C;
        const T* br = bottom + xs[x].upper * C;
        const float xl = xs[x].lerp;
        float* op = orow + x * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) {
          const float t = float(tl[c]) + (float(tr[c]) - float(tl[c])) * xl;
          const float bt = float(bl[c]) + (float(br[c]) - float(bl[c])) * xl;
          op[c] = t + (bt - t) * yl;
        }
      }
    }
  }

 private:
  ResizeAttrs a_;
};

template <typename T>
class ResizeNearestNeighborOp : public OpKernel {
 public:
  explicit ResizeNearestNeighborOp(OpKernelConstruction* c) : OpKernel(c) { ParseResizeAttrs(c, &a_); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    OP_REQUIRES_ASSIGN(ctx, ResizeDims d,
                       ValidateResize(images, ctx->input(1), absl::StrCat(type_string(), " '", name(), "': ")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({d.batch, d.out_h, d.out_w, d.channels}), &out));
    if (out->NumElements() == 0) return;
    const auto ys = NearestIndices(d.out_h, d.in_h, ResizeScale(d.in_h, d.out_h, a_.align_corners), a_);
    const auto xs = NearestIndices(d.out_w, d.in_w, ResizeScale(d.in_w, d.out_w, a_.align_corners), a_);
    const T* in = images.data<T>();
    T* o = out->data<T>();
    const int64_t C = d.channels, row = d.in_w * C;
    for (int64_t b = 0; b < d.batch; ++b) {
      const T* img = in + b * d.in_h * row;
      for (int64_t y = 0; y < d.out_h; ++y) {
        const T* src = img + ys[y] * row;
        for (int64_t x = 0; x < d.out_w; ++x) {
          std::copy(src + xs[x] * C, src + xs[x] * C + C, o);
          o += C;
        }
      }
    }
  }

 private:
  ResizeAttrs a_;
};

// grads: float [batch, resized_h, resized_w, channels]; original_image: T [batch, h, w, channels].
template <typename T>
class ResizeBilinearGradOp : public OpKernel {
 public:
  explicit ResizeBilinearGradOp(OpKernelConstruction* c) : OpKernel(c) { ParseResizeAttrs(c, &a_); }
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* ctx) override {
    const std::string prefix = absl::StrCat(type_string(), " '", name(), "': ");
    const Tensor& grads = ctx->input(0);
    const Tensor& orig = ctx->input(1);
    OP_REQUIRES(ctx, grads.shape().dims() == 4,
                errors::InvalidArgument(prefix, "input_grad must be 4-dimensional", grads.shape().DebugString()));
    OP_REQUIRES(ctx, orig.shape().dims() == 4,
                errors::InvalidArgument(prefix, "original_image must be 4-dimensional", orig.shape().DebugString()));
    const int64_t B = grads.shape().dim_size(0), rh = grads.shape().dim_size(1), rw = grads.shape().dim_size(2),
                  C = grads.shape().dim_size(3);
    const int64_t h = orig.shape().dim_size(1), w = orig.shape().dim_size(2);
    OP_REQUIRES(ctx, orig.shape().dim_size(0) == B,
                errors::InvalidArgument(prefix, "input_grad and original_image must have the same batch size"));
    OP_REQUIRES(ctx, orig.shape().dim_size(3) == C,
                errors::InvalidArgument(prefix, "input_grad and original_image must have the same depth"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, orig.shape(), &out));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    if (grads.NumElements() == 0 || out->NumElements() == 0) return;
    const auto ys = BilinearWeights(rh, h, ResizeScale(h, rh, a_.align_corners), a_.half_pixel_centers);
    const auto xs = BilinearWeights(rw, w, ResizeScale(w, rw, a_.align_corners), a_.half_pixel_centers);
    const float* g = grads.data<float>();
    for (int64_t b = 0; b < B; ++b) {
      T* img = o + b * h * w * C;
      for (int64_t y = 0; y < rh; ++y) {
        T* top = img + ys[y].lower * w * C;
        T* bottom = img + ys[y].upper * w * C;
        const float yl = ys[y].lerp, iyl = 1.0f - yl;
        for (int64_t x = 0; x < rw; ++x) {
          const int64_t l = xs[x].lower * C, r = xs[x].upper * C;
          const float xl = xs[x].lerp, ixl = 1.0f - xl;
          for (int64_t c = 0; c < C; ++c) {
            const float gv = *g++;
            top[l + c] += T(gv * iyl * ixl);
            top[r + c] += T(gv * iyl * xl);
            bottom[l + c] += T(gv * yl * ixl);
            bottom[r + c] += T(gv * yl * xl);
          }
        }
      }
    }
  }

 private:
  ResizeAttrs a_;
};

// grads: T [batch, resized_h, resized_w, channels]; size: the original [h, w].
template <typename T>
class ResizeNearestNeighborGradOp : public OpKernel {
 public:
  explicit ResizeNearestNeighborGradOp(OpKernelConstruction* c) : OpKernel(c) { ParseResizeAttrs(c, &a_); }
  void Compute(OpKernelContext* ctx) override {
    const std::string prefix = absl::StrCat(type_string(), " '", name(), "': ");
    const Tensor& grads = ctx->input(0);
    OP_REQUIRES(ctx, grads.shape().dims() == 4,
                errors::InvalidArgument(prefix, "input must be 4-dimensional", grads.shape().DebugString()));
    int64_t h = 0, w = 0;
    Status s = ReadSize(ctx->input(1), "shape_t", &h, &w);
    OP_REQUIRES(ctx, s.ok(), errors::InvalidArgument(prefix, s.message()));
    OP_REQUIRES(ctx, h > 0 && w > 0, errors::InvalidArgument(prefix, "output dimensions must be positive"));
    const int64_t B = grads.shape().dim_size(0), rh = grads.shape().dim_size(1), rw = grads.shape().dim_size(2),
                  C = grads.shape().dim_size(3);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({B, h, w, C}), &out));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    if (grads.NumElements() == 0) return;
    const auto ys = NearestIndices(rh, h, ResizeScale(h, rh, a_.align_corners), a_);
    const auto xs = NearestIndices(rw, w, ResizeScale(w, rw, a_.align_corners), a_);
    const T* g = grads.data<T>();
    for (int64_t b = 0; b < B; ++b) {
      T* img = o + b * h * w * C;
      for (int64_t y = 0; y < rh; ++y) {
        for (int64_t x = 0; x < rw; ++x) {
          T* dst = img + (ys[y] * w + xs[x]) * C;
          for (int64_t c = 0; c < C; ++c) dst[c] += *g++;
        }
      }
    }
  }

 private:
  ResizeAttrs a_;
};

// [batch, h, w, channels] with h, w from the size input (input 1) when it is a constant.
Status ResizeShape(InferenceContext* c) {
  PartialTensorShape images, size;
  Status s = c->WithRank(c->input(0), 4, &images);
  if (!s.ok()) return errors::InvalidArgument("Shape must be rank 4 but is ", c->input(0).DebugString());
  s = c->WithRank(c->input(1), 1, &size);
  if (!s.ok()) return errors::InvalidArgument("Shape must be rank 1 but is ", c->input(1).DebugString());
  if (!size.unknown_rank() && size.dim_size(0) >= 0 && size.dim_size(0) != 2) {
    return errors::InvalidArgument("Dimension must be 2 but is ", size.dim_size(0));
  }
  int64_t h = -1, w = -1;
  if (const Tensor* t = c->input_tensor(1)) {
    if (t->dtype() == DT_INT32 && t->NumElements() == 2) {
      h = t->data<int32_t>()[0];
      w = t->data<int32_t>()[1];
    }
  }
  c->set_output(0, PartialTensorShape({images.dim_size(0), h, w, images.dim_size(3)}));
  return absl::OkStatus();
}

Status BilinearGradShape(InferenceContext* c) {
  PartialTensorShape g, orig;
  Status s = c->WithRank(c->input(0), 4, &g);
  if (s.ok()) s = c->WithRank(c->input(1), 4, &orig);
  if (!s.ok()) {
    return errors::InvalidArgument("Shape must be rank 4, got ", c->input(0).DebugString(), " and ",
                                   c->input(1).DebugString());
  }
  c->set_output(0, orig);
  return absl::OkStatus();
}

AttrMap ResizeAttrMap(const Node* n) { return CopyAttrs(n, {"align_corners", "half_pixel_centers"}); }

template <template <typename> class K, typename... Ts>
void RegisterFor(const char* op) {
  (RegisterKernel<K<Ts>>(KernelBuilder(op).TypeConstraint<Ts>("T")), ...);
}

}  // namespace

void RegisterResizeOps() {
  RegisterOp(OpDefBuilder("ResizeBilinear")
                 .Input("images: T")
                 .Input("size: int32")
                 .Output("resized_images: float")
                 .Attr("T: {uint8, int32, int64, float, double}")
                 .Attr("align_corners: bool = false")
                 .Attr("half_pixel_centers: bool = false")
                 .SetShapeFn(ResizeShape)
                 .Doc("Resizes NHWC images to `size` with bilinear interpolation (float output)."));
  RegisterOp(OpDefBuilder("ResizeNearestNeighbor")
                 .Input("images: T")
                 .Input("size: int32")
                 .Output("resized_images: T")
                 .Attr("T: {uint8, int32, int64, float, double}")
                 .Attr("align_corners: bool = false")
                 .Attr("half_pixel_centers: bool = false")
                 .SetShapeFn(ResizeShape)
                 .Doc("Resizes NHWC images to `size` taking the nearest pixel."));
  RegisterOp(OpDefBuilder("ResizeBilinearGrad")
                 .Input("grads: float")
                 .Input("original_image: T")
                 .Output("output: T")
                 .Attr("T: {float, double}")
                 .Attr("align_corners: bool = false")
                 .Attr("half_pixel_centers: bool = false")
                 .SetShapeFn(BilinearGradShape)
                 .Doc("The gradient of ResizeBilinear with respect to its images."));
  RegisterOp(OpDefBuilder("ResizeNearestNeighborGrad")
                 .Input("grads: T")
                 .Input("size: int32")
                 .Output("output: T")
                 .Attr("T: {uint8, int32, float, double}")
                 .Attr("align_corners: bool = false")
                 .Attr("half_pixel_centers: bool = false")
                 .SetShapeFn(ResizeShape)
                 .Doc("The gradient of ResizeNearestNeighbor: grads summed into an image of the original size."));
  RegisterFor<ResizeBilinearOp, uint8_t, int32_t, int64_t, float, double>("ResizeBilinear");
  RegisterFor<ResizeNearestNeighborOp, uint8_t, int32_t, int64_t, float, double>("ResizeNearestNeighbor");
  RegisterFor<ResizeBilinearGradOp, float, double>("ResizeBilinearGrad");
  RegisterFor<ResizeNearestNeighborGradOp, uint8_t, int32_t, float, double>("ResizeNearestNeighborGrad");

  // TensorFlow's image_grad.py.
  RegisterGradient("ResizeNearestNeighbor", [](GradContext* c) {
    GraphBuilder* b = c->b;
    // The original [h, w]: a constant when known statically, else a slice of Shape.
    NodeOut hw;
    const PartialTensorShape& s = c->inputs[0].node->output_shape(c->inputs[0].index);
    if (!s.unknown_rank() && s.dims() == 4 && s.dim_size(1) >= 0 && s.dim_size(2) >= 0) {
      Tensor t(DT_INT32, TensorShape({2}));
      t.data<int32_t>()[0] = static_cast<int32_t>(s.dim_size(1));
      t.data<int32_t>()[1] = static_cast<int32_t>(s.dim_size(2));
      hw = b->Const(t);
    } else {
      Tensor begin(DT_INT32, TensorShape({1})), size(DT_INT32, TensorShape({1}));
      begin.data<int32_t>()[0] = 1;
      size.data<int32_t>()[0] = 2;
      hw = b->Op("Slice", {b->Op("Shape", {c->inputs[0]}), b->Const(begin), b->Const(size)});
    }
    c->grad_inputs[0] = b->Op("ResizeNearestNeighborGrad", {c->GradOrZeros(0), hw}, ResizeAttrMap(c->node));
    return b->status();
  });
  RegisterGradient("ResizeBilinear", [](GradContext* c) {
    c->grad_inputs[0] = c->b->Op("ResizeBilinearGrad", {c->GradOrZeros(0), c->inputs[0]}, ResizeAttrMap(c->node));
    return c->b->status();
  });
  RegisterNoGradient("ResizeBilinearGrad");
}

}  // namespace dflow

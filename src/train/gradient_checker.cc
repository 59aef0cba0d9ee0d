#include "train/gradient_checker.h"

#include <cmath>

#include "graph/graph_def.h"
#include "graph/gradients.h"
#include "ops/register_all.h"
#include "proto/graph.pb.h"
#include "runtime/direct_session.h"
#include "runtime/local_device.h"

namespace dflow {
namespace {

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v;
  if (t.dtype() == DT_FLOAT)
    for (float x : t.flat<float>()) v.push_back(x);
  else if (t.dtype() == DT_DOUBLE)
    for (double x : t.flat<double>()) v.push_back(x);
  return v;
}

void SetElement(Tensor* t, int64_t i, double v) {
  if (t->dtype() == DT_FLOAT) t->flat<float>()[i] = static_cast<float>(v);
  else t->flat<double>()[i] = v;
}

double GetElement(const Tensor& t, int64_t i) {
  return t.dtype() == DT_FLOAT ? t.flat<float>()[i] : t.flat<double>()[i];
}

}  // namespace

StatusOr<double> MaxGradientError(const std::vector<Tensor>& x_values, const GradCheckGraphFn& build, double delta) {
  RegisterAllOps();
  for (const Tensor& x : x_values) {
    if (x.dtype() != DT_FLOAT && x.dtype() != DT_DOUBLE) {
      return errors::InvalidArgument("Gradient checks need float or double inputs, not ", DTypeString(x.dtype()));
    }
  }
  Graph g;
  GraphBuilder b(&g);
  std::vector<NodeOut> xs;
  std::vector<std::string> x_names;
  for (size_t i = 0; i < x_values.size(); ++i) {
    xs.push_back(b.Op("Placeholder", {},
                      {{"dtype", x_values[i].dtype()}, {"shape", PartialTensorShape(x_values[i].shape())}},
                      absl::StrCat("x", i)));
    x_names.push_back(absl::StrCat(xs.back().node ? xs.back().node->name() : "?", ":0"));
  }
  std::vector<NodeOut> ys = build(&b, xs);
  RETURN_IF_ERROR(b.status());
  std::vector<NodeOut> gys;
  for (size_t j = 0; j < ys.size(); ++j) {
    gys.push_back(b.Op("Placeholder", {}, {{"dtype", ValueType(ys[j])}}, absl::StrCat("grad_y", j)));
  }
  RETURN_IF_ERROR(b.status());
  ASSIGN_OR_RETURN(std::vector<NodeOut> dxs, AddGradients(&g, ys, xs, gys));

  proto::GraphDef def;
  ExportGraphDef(g, &def);
  auto session = NewDirectSession(SessionOptions(), {LocalCpuDevice()});
  RETURN_IF_ERROR(session->Create(def));
  auto name = [](const NodeOut& t) { return absl::StrCat(t.node->name(), ":", t.index); };
  std::vector<std::string> y_names, dx_names, gy_names;
  for (const NodeOut& y : ys) y_names.push_back(name(y));
  for (const NodeOut& dx : dxs) dx_names.push_back(name(dx));
  for (const NodeOut& gy : gys) gy_names.push_back(name(gy));

  auto feeds_for = [&](const std::vector<Tensor>& xv) {
    std::vector<std::pair<std::string, Tensor>> f;
    for (size_t i = 0; i < xv.size(); ++i) f.emplace_back(x_names[i], xv[i]);
    return f;
  };
  std::vector<Tensor> y0;
  RETURN_IF_ERROR(session->Run(feeds_for(x_values), y_names, {}, &y0));

  // Theoretical Jacobian, one row per y element: the gradients for a one-hot grad_y.
  std::vector<std::vector<double>> theory;  // [y element][x element]
  for (size_t j = 0; j < ys.size(); ++j) {
    for (int64_t k = 0; k < y0[j].NumElements(); ++k) {
      auto feeds = feeds_for(x_values);
      for (size_t jj = 0; jj < ys.size(); ++jj) {
        Tensor gy(y0[jj].dtype(), y0[jj].shape());
        if (jj == j) SetElement(&gy, k, 1.0);
        feeds.emplace_back(gy_names[jj], gy);
      }
      std::vector<Tensor> dx;
      RETURN_IF_ERROR(session->Run(feeds, dx_names, {}, &dx));
      std::vector<double> row;
      for (size_t i = 0; i < dx.size(); ++i) {
        if (dx[i].NumElements() != x_values[i].NumElements()) {
          return errors::Internal("Gradient ", i, " has shape ", dx[i].shape().DebugString(), " but x has ",
                                  x_values[i].shape().DebugString());
        }
        for (double v : ToDoubles(dx[i])) row.push_back(v);
      }
      theory.push_back(std::move(row));
    }
  }
  // Numerical Jacobian, one column per x element.
  double max_err = 0;
  int64_t col = 0;
  for (size_t i = 0; i < x_values.size(); ++i) {
    for (int64_t m = 0; m < x_values[i].NumElements(); ++m, ++col) {
      std::vector<Tensor> plus = x_values, minus = x_values;
      plus[i] = x_values[i].DeepCopy();
      minus[i] = x_values[i].DeepCopy();
      double v = GetElement(x_values[i], m);
      SetElement(&plus[i], m, v + delta);
      SetElement(&minus[i], m, v - delta);
      std::vector<Tensor> yp, ym;
      RETURN_IF_ERROR(session->Run(feeds_for(plus), y_names, {}, &yp));
      RETURN_IF_ERROR(session->Run(feeds_for(minus), y_names, {}, &ym));
      int64_t row = 0;
      for (size_t j = 0; j < ys.size(); ++j) {
        std::vector<double> a = ToDoubles(yp[j]), c = ToDoubles(ym[j]);
        for (size_t k = 0; k < a.size(); ++k, ++row) {
          double numeric = (a[k] - c[k]) / (2 * delta);
          double err = std::abs(numeric - theory[row][col]);
          if (std::isnan(err)) return errors::Internal("NaN in the gradient check at x", i, "[", m, "]");
          max_err = std::max(max_err, err);
        }
      }
    }
  }
  return max_err;
}

}  // namespace dflow

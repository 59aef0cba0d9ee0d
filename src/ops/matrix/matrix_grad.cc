// Gradient functions of MatMul, BatchMatMulV2, MatrixInverse and MatrixDeterminant.
//
// For C = A B: dA = dC B^T and dB = A^T dC, with the transposes folded into the products'
// transpose / adjoint attrs. BatchMatMulV2 then sums each gradient over the batch dimensions
// that its operand was broadcast along.
#include <vector>

#include "ops/math/grad_util.h"
#include "ops/matrix/matrix_ops.h"

namespace dflow {
namespace {

using namespace math_grad;  // NOLINT: the helpers of the math family's gradients

// The two gradient products of op(a) * op(b) for transpose flags ta, tb, as calls of `product`
// (a, b, transpose_first, transpose_second).
template <typename Product>
void ProductGrads(bool ta, bool tb, const NodeOut& a, const NodeOut& b, const NodeOut& g, Product product, NodeOut* ga,
                  NodeOut* gb) {
  if (!ta && !tb) {
    *ga = product(g, b, false, true);
    *gb = product(a, g, true, false);
  } else if (!ta && tb) {
    *ga = product(g, b, false, false);
    *gb = product(g, a, true, false);
  } else if (ta && !tb) {
    *ga = product(b, g, false, true);
    *gb = product(a, g, false, false);
  } else {
    *ga = product(b, g, true, true);
    *gb = product(g, a, true, true);
  }
}

Status MatMulGrad(GradContext* c) {
  NodeOut g = c->grad_outputs[0];
  if (g.node == nullptr) return absl::OkStatus();
  bool ta = false, tb = false;
  RETURN_IF_ERROR(GetAttr(c->node->attrs(), "transpose_a", &ta));
  RETURN_IF_ERROR(GetAttr(c->node->attrs(), "transpose_b", &tb));
  GraphBuilder* b = c->b;
  auto product = [b](const NodeOut& x, const NodeOut& y, bool tx, bool ty) {
    return b->Op("MatMul", {x, y}, {{"transpose_a", tx}, {"transpose_b", ty}});
  };
  ProductGrads(ta, tb, c->inputs[0], c->inputs[1], g, product, &c->grad_inputs[0], &c->grad_inputs[1]);
  return absl::OkStatus();
}

// The static shape of the unreduced gradient of a BatchMatMulV2 operand: the output's batch
// dimensions and the operand's own matrix dimensions. Unknown unless fully known.
PartialTensorShape UnreducedGradShape(const PartialTensorShape& out, const PartialTensorShape& operand) {
  if (!out.IsFullyDefined() || !operand.IsFullyDefined() || out.dims() < 2 || operand.dims() < 2) {
    return PartialTensorShape();
  }
  std::vector<int64_t> dims(out.dim_sizes().begin(), out.dim_sizes().end() - 2);
  dims.push_back(operand.dim_size(operand.dims() - 2));
  dims.push_back(operand.dim_size(operand.dims() - 1));
  StatusOr<PartialTensorShape> s = PartialTensorShape::FromDims(dims);
  return s.ok() ? *s : PartialTensorShape();
}

Status BatchMatMulGrad(GradContext* c) {
  NodeOut g = c->grad_outputs[0];
  if (g.node == nullptr) return absl::OkStatus();
  bool adj_x = false, adj_y = false;
  RETURN_IF_ERROR(GetAttr(c->node->attrs(), "adj_x", &adj_x));
  RETURN_IF_ERROR(GetAttr(c->node->attrs(), "adj_y", &adj_y));
  GraphBuilder* b = c->b;
  auto product = [b](const NodeOut& x, const NodeOut& y, bool ax, bool ay) {
    return b->Op("BatchMatMulV2", {x, y}, {{"adj_x", ax}, {"adj_y", ay}});
  };
  NodeOut gx, gy;
  ProductGrads(adj_x, adj_y, c->inputs[0], c->inputs[1], g, product, &gx, &gy);
  const PartialTensorShape& out = c->node->output_shape(0);
  c->grad_inputs[0] = SumToShapeOf(b, gx, c->inputs[0], UnreducedGradShape(out, StaticShape(c->inputs[0])));
  c->grad_inputs[1] = SumToShapeOf(b, gy, c->inputs[1], UnreducedGradShape(out, StaticShape(c->inputs[1])));
  return absl::OkStatus();
}

// Y = A^-1: dA = -Y^T dY Y^T. With adjoint (Y = (A^T)^-1): dA = -Y dY^T Y.
Status MatrixInverseGrad(GradContext* c) {
  NodeOut g = c->grad_outputs[0];
  if (g.node == nullptr) return absl::OkStatus();
  bool adjoint = false;
  RETURN_IF_ERROR(GetAttr(c->node->attrs(), "adjoint", &adjoint));
  GraphBuilder* b = c->b;
  const NodeOut& y = c->outputs[0];
  NodeOut left = b->Op("BatchMatMulV2", {y, g}, {{"adj_x", !adjoint}, {"adj_y", adjoint}});
  NodeOut prod = b->Op("BatchMatMulV2", {left, y}, {{"adj_x", false}, {"adj_y", !adjoint}});
  c->grad_inputs[0] = b->Op("Neg", {prod});
  return absl::OkStatus();
}

// d det(A) / dA = det(A) * A^-T, one matrix per batch element.
Status MatrixDeterminantGrad(GradContext* c) {
  NodeOut g = c->grad_outputs[0];
  if (g.node == nullptr) return absl::OkStatus();
  GraphBuilder* b = c->b;
  const NodeOut& a = c->inputs[0];
  NodeOut inv_t = b->Op("MatrixInverse", {a}, {{"adjoint", true}});
  NodeOut scale = b->Op("Mul", {g, c->outputs[0]});
  NodeOut kept = KeptDimsShape(b, a, Int32Vector(b, {-2, -1}, "matrix_axes"));
  c->grad_inputs[0] = b->Op("Mul", {b->Op("Reshape", {scale, kept}), inv_t});
  return absl::OkStatus();
}

}  // namespace

void RegisterMatrixGradients() {
  RegisterGradient("MatMul", MatMulGrad);
  RegisterGradient("BatchMatMulV2", BatchMatMulGrad);
  RegisterGradient("MatrixInverse", MatrixInverseGrad);
  RegisterGradient("MatrixDeterminant", MatrixDeterminantGrad);
}

}  // namespace dflow

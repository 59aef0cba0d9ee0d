// A program that uses dflow the way a user's project does: only `#include "dflow/..."`, linked
// against an installed copy (find_package(dflow) or pkg-config). It builds a graph, trains one
// variable a few steps, runs the session and checks the values it gets back.
#include <cmath>
#include <cstdio>
#include <vector>

#include "dflow/dflow.h"
#include "dflow/meta_graph.h"

using namespace dflow;  // NOLINT: a small program reads better with short names

namespace {

int Fail(const char* what, const Status& s) {
  std::fprintf(stderr, "consumer: %s: %s\n", what, s.ToString().c_str());
  return 1;
}

}  // namespace

int main() {
  InitDflow();
  Scope root = Scope::NewRootScope();
  // y = 3x + 1 fed with x = [1, 2].
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output y = ops::Add(root.WithOpName("y"), ops::Mul(root, x, 3.0f), 1.0f);
  // w minimizes (w - 5)^2 by gradient descent: w = 0, then w += 2 * 0.25 * (5 - w) per step.
  Variable w = Variable::Create(root.WithOpName("w"), {}, DT_FLOAT, init::Zeros());
  Output loss = ops::Square(root, w.read() - 5.0f);
  train::GradientDescentOptimizer opt(0.25f);
  Operation step = opt.Minimize(root, loss);
  if (!root.status().ok()) return Fail("building the graph", root.status());

  ClientSession session(root);
  auto out = session.Run({{x, {1.0f, 2.0f}}}, {y});
  if (!out.ok()) return Fail("running y", out.status());
  const Tensor& t = (*out)[0];
  if (t.dtype() != DT_FLOAT || t.NumElements() != 2 || t.flat<float>()[0] != 4.0f || t.flat<float>()[1] != 7.0f) {
    std::fprintf(stderr, "consumer: y = 3x + 1 at x = [1, 2] is not [4, 7]\n");
    return 1;
  }
  if (Status s = session.Run({GlobalVariablesInitializer(root)}); !s.ok()) return Fail("initializing", s);
  for (int i = 0; i < 4; ++i) {
    if (Status s = session.Run({step}); !s.ok()) return Fail("training", s);
  }
  auto wv = session.Run({w.read()});
  if (!wv.ok()) return Fail("reading w", wv.status());
  // 0 -> 2.5 -> 3.75 -> 4.375 -> 4.6875
  const float w4 = (*wv)[0].scalar<float>();
  if (std::fabs(w4 - 4.6875f) > 1e-5f) {
    std::fprintf(stderr, "consumer: w after 4 steps is %g, not 4.6875\n", w4);
    return 1;
  }
  // The generated message classes are public too.
  auto meta = train::ExportMetaGraph(root, nullptr);
  if (!meta.ok()) return Fail("exporting the meta graph", meta.status());
  std::printf("consumer: y = [%g, %g], w = %g, meta graph of %d nodes\n", t.flat<float>()[0], t.flat<float>()[1], w4,
              meta->graph_def().node_size());
  return 0;
}

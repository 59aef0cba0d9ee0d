// Control flow in the client API: conditionals and while loops built from Switch, Merge, Enter,
// Exit, NextIteration and LoopCond, run by the executor with dead values and loop frames.
//
//   auto r = Cond(root, x > 0 /* bool scalar */, {x},
//                 [](const Scope& s, const std::vector<Output>& in) { return std::vector<Output>{in[0] * 2}; },
//                 [](const Scope& s, const std::vector<Output>& in) { return std::vector<Output>{-in[0]}; });
//
//   // sum of 1..10
//   auto out = WhileLoop(root, {ops::Const(root, 1), ops::Const(root, 0)},
//       [](const Scope& s, const std::vector<Output>& v) { return ops::LessEqual(s, v[0], 10); },
//       [](const Scope& s, const std::vector<Output>& v) {
//         return std::vector<Output>{v[0] + 1, v[1] + v[0]}; });   // out[1] = 55
//
// Only the taken branch of a Cond runs. Inside a loop, tensors built outside it may be used
// freely: they enter the loop as loop invariants. Build errors are recorded in the scope.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dflow/scope.h"

namespace dflow {

using BranchFn = std::function<std::vector<Output>(const Scope&, const std::vector<Output>&)>;
using LoopCondFn = std::function<Output(const Scope&, const std::vector<Output>&)>;
using LoopBodyFn = std::function<std::vector<Output>(const Scope&, const std::vector<Output>&)>;

// Runs then_fn(inputs) if `pred` (a bool scalar) is true, else else_fn(inputs). Both branches
// must return the same number of outputs with matching dtypes. Tensors from outside that a
// branch reads enter it through a Switch on `pred` (as in TensorFlow), so gradients that flow
// into them from the untaken branch are zeros.
std::vector<Output> Cond(const Scope& scope, Output pred, const std::vector<Output>& inputs, const BranchFn& then_fn,
                         const BranchFn& else_fn);

// Runs body_fn while cond_fn holds, starting from `loop_vars`; returns the final values. Loops
// nest: body_fn may build another WhileLoop or a Cond.
std::vector<Output> WhileLoop(const Scope& scope, const std::vector<Output>& loop_vars, const LoopCondFn& cond_fn,
                              const LoopBodyFn& body_fn, const std::string& name = "while");

}  // namespace dflow

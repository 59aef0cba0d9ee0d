"""Differential specs: the Apply* optimizer ops on reference variables. Each case builds, in
TensorFlow's graph, VariableV2 nodes (the variable and its slots) initialized by Assign from fed
values, then one or several chained applications of the op (each under a control dependency on the
one before, so that one Session.run initializes and trains), and fetches the variables after the
last step. (Format: see diffsuite's docstring.)"""
import numpy as np

from diffsuite import Case, Spec, gen

SPECS = []
TOL = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}


def _train(tf, op, n_vars, var_args, values, hyper, grads, indices=None, **attrs):
    """Variables named by var_args (first n_vars of `values`), initialized from them, updated by
    `op` once per tensor in `grads`; returns the variables' values after the last update and the
    op's output of the last step. A Resource* op gets resource variables (VarHandleOp)."""
    if op.startswith("Resource"):
        return _train_resource(tf, op, n_vars, var_args, values, hyper, grads, indices, **attrs)
    refs, inits = [], []
    for name, v in zip(var_args, values[:n_vars]):
        ref = tf.raw_ops.VariableV2(shape=v.shape, dtype=v.dtype, name=name)
        refs.append(ref)
        inits.append(tf.raw_ops.Assign(ref=ref, value=v))
    deps, last = inits, None
    for g in grads:
        with tf.control_dependencies(deps):
            kw = dict(zip(var_args, refs))
            kw.update(hyper)
            kw[_GRAD_NAME.get(op, "grad")] = g
            if indices is not None:  # SparseApply*: the rows of var that grad updates
                kw["indices"] = indices
            last = getattr(tf.raw_ops, op)(**kw, **attrs)
        deps = [last]
    with tf.control_dependencies(deps):
        return [tf.identity(last)] + [tf.identity(r) for r in refs]


_N = [0]


def _train_resource(tf, op, n_vars, var_args, values, hyper, grads, indices, **attrs):
    handles, inits = [], []
    for name, v in zip(var_args, values[:n_vars]):
        _N[0] += 1
        h = tf.raw_ops.VarHandleOp(dtype=v.dtype, shape=v.shape, shared_name="train_var_%d" % _N[0])
        handles.append(h)
        inits.append(tf.raw_ops.AssignVariableOp(resource=h, value=v))
    deps = inits
    for g in grads:
        with tf.control_dependencies(deps):
            kw = dict(zip(var_args, handles))
            kw.update(hyper)
            kw[_GRAD_NAME.get(op[len("Resource"):], "grad")] = g
            if indices is not None:
                kw["indices"] = indices
            deps = [getattr(tf.raw_ops, op)(**kw, **attrs)]
    with tf.control_dependencies(deps):
        return [tf.raw_ops.ReadVariableOp(resource=h, dtype=v.dtype) for h, v in zip(handles, values)]


_GRAD_NAME = {"ApplyGradientDescent": "delta", "ApplyProximalGradientDescent": "delta"}

# op → (slot argument names after var, hyperparameter names and values, attr variants)
OPS = {
    "ApplyGradientDescent": ([], {"alpha": 0.1}, [{}]),
    "ApplyMomentum": (["accum"], {"lr": 0.1, "momentum": 0.9}, [{}, {"use_nesterov": True}]),
    "ApplyAdagrad": (["accum"], {"lr": 0.1}, [{}, {"update_slots": False}]),
    "ApplyAdam": (["m", "v"], {"beta1_power": 0.9, "beta2_power": 0.999, "lr": 0.01, "beta1": 0.9, "beta2": 0.999,
                               "epsilon": 1e-7}, [{}, {"use_nesterov": True}]),
    "ApplyRMSProp": (["ms", "mom"], {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-7}, [{}]),
    "ApplyCenteredRMSProp": (["mg", "ms", "mom"], {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-7}, [{}]),
    "ApplyFtrl": (["accum", "linear"], {"lr": 0.1, "l1": 0.01, "l2": 0.02, "lr_power": -0.5},
                  [{}, {"multiply_linear_by_lr": True}]),
    "ApplyFtrlV2": (["accum", "linear"], {"lr": 0.1, "l1": 0.01, "l2": 0.02, "l2_shrinkage": 0.05, "lr_power": -0.5},
                    [{}, {"multiply_linear_by_lr": True}]),
    "ApplyAdadelta": (["accum", "accum_update"], {"lr": 1.0, "rho": 0.95, "epsilon": 1e-6}, [{}]),
    "ApplyProximalAdagrad": (["accum"], {"lr": 0.1, "l1": 0.05, "l2": 0.01}, [{}]),
    "ApplyProximalGradientDescent": ([], {"alpha": 0.1, "l1": 0.05, "l2": 0.01}, [{}]),
    "ApplyAdagradDA": (["gradient_accumulator", "gradient_squared_accumulator"],
                       {"lr": 0.1, "l1": 0.01, "l2": 0.02, "global_step": 3}, [{}]),
}
SPARSE = ["SparseApply" + _op[len("Apply"):] for _op in (
    "ApplyMomentum", "ApplyAdagrad", "ApplyAdadelta", "ApplyRMSProp", "ApplyCenteredRMSProp", "ApplyFtrl",
    "ApplyFtrlV2", "ApplyProximalAdagrad", "ApplyProximalGradientDescent", "ApplyAdagradDA")]
HYPER_DTYPE = {"global_step": "int64"}


def _hval(k, v, dtype):
    return np.array(v, HYPER_DTYPE.get(k, dtype))
# Slots that must be positive (square roots / powers of them are taken).
POSITIVE = {"accum", "ms", "v", "accum_update", "gradient_squared_accumulator"}


def _cases(op):
    slots, hyper, variants = OPS[op[len("Resource"):] if op.startswith("Resource") else op]
    names = ["var"] + slots

    def cases(dtype):
        out = []
        for shape in [(3, 4), (5,), (), (0, 3)]:
            for steps in (1, 3):
                for attrs in variants:
                    vals = [gen(dtype, shape, "positive" if n in POSITIVE else "normal", len(out) + 10 * i)
                            for i, n in enumerate(names)]
                    grads = [gen(dtype, shape, "normal", 100 + len(out) + s) for s in range(steps)]

                    def fn(tf, *xs, attrs=attrs, steps=steps):
                        n = len(names)
                        hv = dict(zip(sorted(hyper), xs[n:n + len(hyper)]))
                        return _train(tf, op, n, names, xs[:n], hv, xs[n + len(hyper):], **attrs)
                    hvals = [_hval(k, hyper[k], dtype) for k in sorted(hyper)]
                    out.append(Case("%s steps=%d %s" % (shape, steps, attrs or ""), fn, vals + hvals + grads))
        # special gradients (NaN, inf) propagate the same way
        vals = [gen(dtype, (9,), "positive" if n in POSITIVE else "normal", i) for i, n in enumerate(names)]
        hvals = [_hval(k, hyper[k], dtype) for k in sorted(hyper)]

        def fn1(tf, *xs):
            n = len(names)
            return _train(tf, op, n, names, xs[:n], dict(zip(sorted(hyper), xs[n:n + len(hyper)])), [xs[-1]])
        out.append(Case("special grad", fn1, vals + hvals + [gen(dtype, (9,), "special")]))
        out.append(Case("grad shape wrong", fn1, vals + hvals + [gen(dtype, (4,))]))
        # a hyperparameter that is not a scalar
        bad = [_hval(k, [hyper[k], hyper[k]], dtype) if i == 0 else h for i, (k, h) in
               enumerate(zip(sorted(hyper), hvals))]
        out.append(Case("hyperparameter not a scalar", fn1, vals + bad + [gen(dtype, (9,))]))
        if op in ("ApplyFtrl", "ApplyFtrlV2"):  # lr_power 0 and a positive one; l1 large enough to zero the variable
            for lrp, l1 in ((0.0, 0.01), (-1.0, 0.0), (-0.5, 10.0)):
                hv = dict(hyper, lr_power=lrp, l1=l1)
                out.append(Case("lr_power=%s l1=%s" % (lrp, l1), fn1,
                                vals + [_hval(k, hv[k], dtype) for k in sorted(hv)] + [gen(dtype, (9,), "normal", 3)]))
        return out
    return cases


def _sparse_cases(op):
    slots, hyper, variants = OPS["Apply" + op[op.index("SparseApply") + len("SparseApply"):]]
    names = ["var"] + slots

    def cases(dtype):
        out = []
        for it in (np.int32, np.int64):
            for shape, idx in [((5, 3), [0, 3, 1]), ((6,), [4, 0]), ((4, 2), [1, 1]), ((4, 2), []), ((3, 2), [3]),
                               ((3, 2), [-1])]:
                gshape = (len(idx),) + shape[1:]
                for steps in (1, 2):
                    for attrs in variants:
                        vals = [gen(dtype, shape, "positive" if n in POSITIVE else "normal", len(out) + 10 * i)
                                for i, n in enumerate(names)]
                        grads = [gen(dtype, gshape, "normal", 100 + len(out) + k) for k in range(steps)]

                        def fn(tf, *xs, attrs=attrs):
                            n = len(names)
                            hv = dict(zip(sorted(hyper), xs[n:n + len(hyper)]))
                            return _train(tf, op, n, names, xs[:n], hv, xs[n + len(hyper) + 1:],
                                          indices=xs[n + len(hyper)], **attrs)
                        hvals = [_hval(k, hyper[k], dtype) for k in sorted(hyper)]
                        out.append(Case("%s indices=%s %s steps=%d %s" % (shape, idx, np.dtype(it).name, steps,
                                                                           attrs or ""),
                                        fn, vals + hvals + [np.array(idx, it)] + grads))
        return out
    return cases


for _op in SPARSE:
    SPECS.append(Spec(_op, _sparse_cases(_op), tol=TOL, grad=False,
                      note="rows of VariableV2 variables updated at indices (duplicates, none, out of range)"))

for _op in SPARSE:
    SPECS.append(Spec("Resource" + _op, _sparse_cases("Resource" + _op), tol=TOL, grad=False,
                      note="resource variables (VarHandleOp) updated at indices"))
for _op in OPS:
    SPECS.append(Spec("Resource" + _op, _cases("Resource" + _op), tol=TOL, grad=False,
                      note="resource variables (VarHandleOp), 1 and 3 chained steps"))

for _op in OPS:
    SPECS.append(Spec(_op, _cases(_op), tol=TOL, grad=False,
                      note="variables initialized by Assign, 1 and 3 chained steps, values after the last"))

EXCLUDED = {}
_HANDLE_DATA = ("a gradient whose shape is not the variable's: TensorFlow's shape function rejects it when the graph "
                "is built (the resource handle carries the shape); dflow's kernel when it runs (InvalidArgument)")
KNOWN = {(_op, r"grad shape wrong: .*TensorFlow raises ValueError"): _HANDLE_DATA
         for _op in ("ResourceApplyGradientDescent", "ResourceApplyProximalAdagrad")}

"""Control flow: tf.cond, tf.while_loop, tf.case over the C++ API's Cond and WhileLoop (the Python
functions are called to build each branch and the loop body inside the Scope C++ passes), and
tf.group, tf.tuple, tf.Assert, with_dependencies.

A Python exception raised by a branch or body function reaches the caller as it was raised.
"""
import builtins
import collections
import functools

from dflow import _dflow
from dflow.framework import dtypes
from dflow.framework import errors
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.ops import array_ops
from dflow.ops import gen_ops
from dflow.ops import math_ops

builtin_tuple = builtins.tuple


# ---- nested structures (lists, tuples, namedtuples, dicts) ----

def _is_sequence(x):
    return isinstance(x, (list, builtin_tuple, dict)) and not isinstance(x, ops.Tensor)


def _flatten(x):
    if isinstance(x, dict):
        out = []
        for k in sorted(x):
            out.extend(_flatten(x[k]))
        return out
    if isinstance(x, (list, builtin_tuple)):
        out = []
        for e in x:
            out.extend(_flatten(e))
        return out
    return [x]


def _pack(structure, flat):
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            vals = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, vals[k]) for k in s) if not isinstance(s, collections.OrderedDict) else \
                collections.OrderedDict((k, vals[k]) for k in s)
        if isinstance(s, builtin_tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(e) for e in s])
        if isinstance(s, (list, builtin_tuple)):
            return type(s)(build(e) for e in s)
        v = next(it)
        if getattr(s, "_is_tensor_array", False):  # a tf.TensorArray travels as its flow
            return s._with_flow(v)
        return v
    return build(structure)


def _same_structure(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b) and all(
            _same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (list, builtin_tuple)) or isinstance(b, (list, builtin_tuple)):
        return (isinstance(a, (list, builtin_tuple)) and isinstance(b, (list, builtin_tuple)) and len(a) == len(b)
                and all(_same_structure(x, y) for x, y in zip(a, b)))
    return True


def _to_tensor(x):
    if isinstance(x, ops.Tensor):
        return x
    if getattr(x, "_is_tensor_array", False):
        return x.flow
    return ops.convert_to_tensor(x)


# ---- group, tuple, with_dependencies ----

def _op_of(x):
    if hasattr(x, "_as_graph_element") and not isinstance(x, (ops.Tensor, ops.Operation)):
        x = x._as_graph_element()
    if isinstance(x, ops.Tensor):
        return x.op
    if isinstance(x, ops.Operation):
        return x
    raise TypeError("Expected tf.group() expected Tensor arguments not '%s' with type '%s'" % (x, type(x)))


def _group_control_deps(dev, deps, name=None):
    with ops.control_dependencies(deps):
        if dev is None:
            return gen_ops.no_op(name=name)
        with ops.device(dev):
            return gen_ops.no_op(name=name)


def group(*inputs, **kwargs):
    """An op that runs all of `inputs` (tensors or ops) and has no output."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError("Unknown keyword arguments: " + ", ".join(kwargs.keys()))
    if not inputs:
        return gen_ops.no_op(name=name)
    with ops.name_scope(name, "group_deps", inputs) as name:
        ops_on_device = {}
        for inp in _flatten(list(inputs)):
            if inp is None:
                continue
            op = _op_of(inp)
            dev = op.device or None
            ops_on_device.setdefault(dev, []).append(op)
        if len(ops_on_device) == 1:
            (dev, deps), = ops_on_device.items()
            return _group_control_deps(dev, deps, name=name)
        all_deps = []

        def key(d):
            return "" if d is None else d
        for dev in sorted(ops_on_device, key=key):
            all_deps.append(_group_control_deps(dev, ops_on_device[dev]))
        with ops.control_dependencies(all_deps):
            return gen_ops.no_op(name=name)


def with_dependencies(dependencies, output_tensor, name=None):
    """`output_tensor` (an Identity of it) computed only after `dependencies` ran."""
    with ops.name_scope(name, "control_dependency", list(dependencies) + [output_tensor]) as name:
        with ops.colocate_with(output_tensor):
            with ops.control_dependencies(dependencies):
                output_tensor = ops.convert_to_tensor(output_tensor)
                return gen_ops.identity(output_tensor, name=name)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TensorFlow's name
    """The tensors, each available only once all of them are computed."""
    with ops.name_scope(name, "tuple", tensors) as name:
        tensors = [t if (isinstance(t, (ops.Operation, ops.Tensor)) or t is None) else ops.convert_to_tensor(t)
                   for t in tensors]
        gating_ops = [t if isinstance(t, ops.Operation) else t.op for t in tensors if t is not None]
        if control_inputs:
            for c in control_inputs:
                gating_ops.append(_op_of(c))
        seen = {}
        for op in gating_ops:
            seen.setdefault(op._node.id, op)
        gating_ops = [seen[k] for k in sorted(seen)]
        if not gating_ops:
            raise ValueError("Must have at least one Tensor: %s" % tensors)
        gate = group(*gating_ops)
        tpl = []
        for t in tensors:
            if isinstance(t, ops.Tensor):
                tpl.append(with_dependencies([gate], t))
            elif isinstance(t, ops.Operation):
                with ops.control_dependencies([gate]):
                    tpl.append(group(t))
            else:
                tpl.append(None)
        return tpl


def no_op(name=None):
    return gen_ops.no_op(name=name)


# ---- cond ----

def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """true_fn() if `pred` (a bool scalar tensor) is true, else false_fn(); only that branch runs."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): true_fn and fn1 may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): false_fn and fn2 may not be set simultaneously.")
        false_fn = fn2
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    g = ops.get_default_graph()
    with ops.name_scope(name, None, [pred]) if name else _null():
        pred = ops.convert_to_tensor(pred)
        if pred.dtype.base_dtype != dtypes.bool:
            raise TypeError("pred must be a boolean tensor, got %s" % pred.dtype.name)
        if pred.shape.ndims not in (None, 0):
            raise ValueError("Shape must be rank 0 but is rank %d for 'cond' (pred)" % pred.shape.ndims)
        results = {}

        def branch(fn, which):
            def call(scope, _inputs):
                with g._scope_override(scope):
                    r = fn()
                    if which == "false" and "true" in results:
                        rt = results["true"]
                        if not _same_structure(rt, r):
                            raise ValueError("The two structures don't have the same nested structure.\n\n"
                                             "First structure: %s\n\nSecond structure: %s" % (rt, r))
                    results[which] = r
                    if r is None:
                        return []
                    flat = []
                    for x in _flatten(r):
                        if isinstance(x, ops.Operation):
                            with ops.control_dependencies([x]):
                                flat.append(gen_ops.identity(pred))
                        else:
                            flat.append(_to_tensor(x))
                    if which == "false" and "true_flat" in results:
                        for a, b in zip(results["true_flat"], flat):
                            if a.dtype.base_dtype != b.dtype.base_dtype:
                                raise ValueError("Outputs of true_fn and false_fn must have the same type: %s, %s"
                                                 % (a.dtype.name, b.dtype.name))
                    results[which + "_flat"] = flat
                    return [t._out for t in flat]
            return call

        outs = _dflow.cond(g._scope, pred._out, [], branch(true_fn, "true"), branch(false_fn, "false"))
        rt, rf = results.get("true"), results.get("false")
        if rt is None and rf is None:
            return None
        if (rt is None) != (rf is None):
            raise ValueError("true_fn and false_fn must have the same type of return values, got %s and %s"
                             % (type(rt).__name__, type(rf).__name__))
        merged = [g._tensor_of(o) for o in outs]
        for m, a, b in zip(merged, results["true_flat"], results["false_flat"]):
            shape = a.shape.most_specific_compatible_shape(b.shape) if hasattr(
                a.shape, "most_specific_compatible_shape") else None
            if shape is not None and shape.ndims is not None and m.shape.is_compatible_with(shape):
                m.set_shape(shape)
        packed = _pack(rt, merged) if _is_sequence(rt) else _pack([rt], merged)[0]
        if not strict and isinstance(packed, (list, builtin_tuple)) and len(packed) == 1:
            packed = packed[0]
        return packed


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


# ---- case ----

def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first true predicate (tf.case)."""
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    if not isinstance(pred_fn_pairs, (list, builtin_tuple)):
        raise TypeError("fns must be a list, tuple, or dict")
    predicates, actions = [], []
    for pair in pred_fn_pairs:
        if not isinstance(pair, builtin_tuple) or len(pair) != 2:
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple")
        pred, fn = pair
        if isinstance(pred, bool):
            raise TypeError("pred must not be a Python bool: %s" % pred)
        pred = ops.convert_to_tensor(pred)
        if pred.dtype.base_dtype != dtypes.bool:
            raise TypeError("pred must be Tensor of type bool: %s" % pred.name)
        if not callable(fn):
            raise TypeError("fn for pred %s must be callable." % pred.name)
        predicates.append(pred)
        actions.append(fn)
    with ops.name_scope(name, "case", [predicates]):
        if default is None:
            if not predicates:
                raise ValueError("case needs at least one predicate when there is no default")
            k = len(predicates) - 1
            last_pred, last_action = predicates[k], actions[k]
            all_preds = list(predicates)

            def default_fn():
                with ops.control_dependencies([Assert(last_pred, ["Input error: None of conditions evaluated as True:",
                                                                  array_ops.stack(all_preds, name="preds_c")])]):
                    return last_action()
            default = default_fn
            predicates, actions = predicates[:k], actions[:k]
        fn = default
        for predicate, action in reversed(list(zip(predicates, actions))):
            fn = functools.partial(cond, predicate, true_fn=action, false_fn=fn, strict=strict)
        if exclusive and len(predicates) > 1:
            count = math_ops.reduce_sum(math_ops.cast(array_ops.stack(predicates), dtypes.int32))
            with ops.control_dependencies([Assert(count <= 1, ["Input error: exclusive=True: more than 1 "
                                                               "conditions evaluated as True:",
                                                               array_ops.stack(predicates)])]):
                return fn()
        return fn()


# ---- while_loop ----

def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,  # noqa: C901
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """Repeats `body` while `cond` is true (tf.while_loop), over nested structures of loop variables."""
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    single_tensor = not isinstance(loop_vars, (list, builtin_tuple, dict))
    if single_tensor:
        loop_vars = [loop_vars]
        if shape_invariants is not None:
            shape_invariants = [shape_invariants]
    if not loop_vars:
        raise ValueError("No loop variables provided")
    try_to_pack = len(loop_vars) == 1 and not return_same_structure
    g = ops.get_default_graph()
    with ops.name_scope(name, "while", []):
        # The loop's nodes are built in this name scope ("while/", "while_1/", ...), its frame.
        if maximum_iterations is not None:
            maximum_iterations = ops.convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if maximum_iterations.shape.ndims not in (None, 0):
                raise ValueError("maximum_iterations must be a scalar, saw shape: %s" % maximum_iterations.shape)
            counter = array_ops.constant(0, dtype=maximum_iterations.dtype, name="iteration_counter")
            orig_cond, orig_body = cond, body
            if try_to_pack:
                loop_vars = (counter, loop_vars[0])
                if shape_invariants is not None:
                    shape_invariants = (tensor_shape.TensorShape([]), shape_invariants[0])

                def cond(i, lv):
                    return math_ops.logical_and(i < maximum_iterations, orig_cond(lv))

                def body(i, lv):
                    return (i + 1, orig_body(lv))
            else:
                loop_vars = (counter, loop_vars)
                if shape_invariants is not None:
                    shape_invariants = (tensor_shape.TensorShape([]), shape_invariants)

                def cond(i, lv):
                    return math_ops.logical_and(i < maximum_iterations, orig_cond(*lv))

                def body(i, lv):
                    return (i + 1, orig_body(*lv))
            try_to_pack = False

        flat = [_to_tensor(v) for v in _flatten(loop_vars)]
        for v in flat:
            if not isinstance(v, ops.Tensor):
                raise TypeError("Loop variables must be tensors, got %r" % (v,))
        invariants = None
        if shape_invariants is not None:
            if not _same_structure(loop_vars, shape_invariants) and not (
                    len(_flatten(shape_invariants)) == len(flat)):
                raise ValueError("The shapes of loop_vars and shape_invariants do not match")
            invariants = [tensor_shape.as_shape(s) if s is not None else None
                          for s in _flatten_shapes(shape_invariants)]
            if len(invariants) != len(flat):
                raise ValueError("The number of shape invariants (%d) does not match the number of loop variables "
                                 "(%d)" % (len(invariants), len(flat)))
            entered = []
            for v, s in zip(flat, invariants):
                if s is None or s == v.shape:
                    entered.append(v)
                    continue
                if not s.is_compatible_with(v.shape):
                    raise ValueError("The shape invariant specified for %s is not compatible with the initial shape "
                                     "of the loop variable. It enters the loop with shape %s, but the specified "
                                     "shape invariant is %s." % (v.name, v.shape, s))
                # The variable enters with the less specific shape: the loop's nodes are built for it.
                entered.append(array_ops.placeholder_with_default(v, s.as_list() if s.ndims is not None else None))
            flat = entered
        structure = loop_vars

        def packed(outs):
            ts = [g._tensor_of(o) for o in outs]
            return _pack(structure, ts)

        body_results = {}

        def cond_fn(scope, ins):
            with g._scope_override(scope):
                args = packed(ins)
                r = cond(*args) if isinstance(args, (list, builtin_tuple)) and not _is_dict(structure) else cond(args)
                r = ops.convert_to_tensor(r)
                if r.dtype.base_dtype != dtypes.bool:
                    raise TypeError("The loop condition must be a boolean tensor, got %s" % r.dtype.name)
                return r._out

        def body_fn(scope, ins):
            with g._scope_override(scope):
                args = packed(ins)
                r = body(*args) if isinstance(args, (list, builtin_tuple)) and not _is_dict(structure) else body(args)
                if not _is_sequence(r):
                    r = [r]
                body_results["structure"] = r
                a = list(args) if isinstance(args, (list, builtin_tuple)) else args
                b = list(r) if isinstance(r, (list, builtin_tuple)) else r
                if not _same_structure(a, b):
                    raise ValueError("The two structures don't have the same nested structure.\n\nFirst structure: "
                                     "%s\n\nSecond structure: %s" % (args, r))
                outs = []
                for x, want in zip(_flatten(r), flat):
                    if getattr(x, "_is_tensor_array", False):
                        x = x.flow
                    if isinstance(x, ops.Operation):
                        raise TypeError("A loop body must return tensors, got the operation %s" % x.name)
                    t = ops.convert_to_tensor(x, dtype=want.dtype.base_dtype) if not isinstance(x, ops.Tensor) else x
                    if t.dtype.base_dtype != want.dtype.base_dtype:
                        raise ValueError("Loop variable %s enters the loop with type %s, but has type %s after one "
                                         "iteration." % (want.name, want.dtype.name, t.dtype.name))
                    outs.append(t)
                body_results["outs"] = outs
                return [t._out for t in outs]

        exits = _dflow.while_loop(g._scope, [v._out for v in flat], cond_fn, body_fn, "")
        for v, t, i in zip(flat, body_results.get("outs", []), range(len(flat))):
            inv = invariants[i] if invariants is not None else None
            want = inv if inv is not None else v.shape
            if not want.is_compatible_with(t.shape) or (inv is None and not _more_specific_or_equal(t.shape, v.shape)):
                raise ValueError("Input tensor '%s' enters the loop with shape %s, but has shape %s after one "
                                 "iteration. To allow the shape to vary across iterations, use the "
                                 "`shape_invariants` argument of tf.while_loop to specify a less-specific shape."
                                 % (v.name, v.shape, t.shape))
        exit_ts = [g._tensor_of(o) for o in exits]
        if len(exit_ts) == 1 and not return_same_structure:
            result = _pack(_flatten(body_results["structure"])[:1], exit_ts)[0]
        else:
            result = _pack(body_results["structure"], exit_ts)
        if maximum_iterations is not None:
            return result[1]
        return result


def _is_dict(x):
    return isinstance(x, dict)


def _flatten_shapes(s):
    if isinstance(s, tensor_shape.TensorShape) or s is None:
        return [s]
    if isinstance(s, dict):
        out = []
        for k in sorted(s):
            out.extend(_flatten_shapes(s[k]))
        return out
    if isinstance(s, (list, builtin_tuple)):
        if s and all(isinstance(d, int) or d is None for d in s) and not any(isinstance(d, (list, builtin_tuple))
                                                                          for d in s):
            # A shape written as a list of dimensions.
            return [tensor_shape.TensorShape(s)]
        if not s:
            return [tensor_shape.TensorShape([])]
        out = []
        for e in s:
            out.extend(_flatten_shapes(e))
        return out
    return [tensor_shape.as_shape(s)]


def _more_specific_or_equal(a, b):
    """True when shape a is compatible with b and at least as specific (TensorFlow's loop rule)."""
    if b.ndims is None:
        return True
    if a.ndims is None or a.ndims != b.ndims:
        return False
    for x, y in zip(a.as_list(), b.as_list()):
        if y is not None and x != y:
            return False
    return True


# ---- Assert ----

def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """An op that fails (InvalidArgumentError) with `data` in the message when `condition` is false."""
    with ops.name_scope(name, "Assert", [condition, data]) as name:
        xs = [ops.convert_to_tensor(x) for x in data]
        condition = ops.convert_to_tensor(condition)
        return gen_ops.OPS["Assert"](condition, xs, summarize=summarize if summarize is not None else 3, name=name)


def _constant_value(t):
    if isinstance(t, ops.Tensor) and t.op.type == "Const":
        try:
            return t.op.get_attr("value")
        except Exception:  # noqa: BLE001
            return None
    return None


def _binary_assert(opname, test, npop, x, y, data, summarize, message, name):
    import numpy as np
    with ops.name_scope(name, opname, [x, y, data]):
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if data is None:
            data = ["Condition x %s y did not hold element-wise:" % test, "x (%s) = " % x.name, x,
                    "y (%s) = " % y.name, y]
            if message is not None:
                data = [message] + data
        sx, sy = _constant_value(x), _constant_value(y)
        if sx is not None and sy is not None:
            if not np.all(npop(np.asarray(sx), np.asarray(sy))):
                msg = "\n".join(str(d) if not isinstance(d, ops.Tensor) else str(_constant_value(d)) for d in data)
                raise errors.InvalidArgumentError(None, None, msg)
        condition = math_ops.reduce_all(
            {"==": math_ops.equal, "!=": math_ops.not_equal, "<": math_ops.less, "<=": math_ops.less_equal,
             ">": math_ops.greater, ">=": math_ops.greater_equal}[test](x, y))
        return Assert(condition, data, summarize=summarize)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    import numpy as np
    return _binary_assert("assert_equal", "==", np.equal, x, y, data, summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    import numpy as np
    return _binary_assert("assert_none_equal", "!=", np.not_equal, x, y, data, summarize, message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    import numpy as np
    return _binary_assert("assert_less", "<", np.less, x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    import numpy as np
    return _binary_assert("assert_less_equal", "<=", np.less_equal, x, y, data, summarize, message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    import numpy as np
    return _binary_assert("assert_greater", ">", np.greater, x, y, data, summarize, message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    import numpy as np
    return _binary_assert("assert_greater_equal", ">=", np.greater_equal, x, y, data, summarize, message, name)


def _unary_assert(opname, test, x, data, summarize, message, name):
    with ops.name_scope(name, opname, [x, data]):
        x = ops.convert_to_tensor(x, name="x")
        zero = array_ops.zeros([], dtype=x.dtype.base_dtype)
        if data is None:
            data = ["Condition x %s 0 did not hold element-wise:" % test, "x (%s) = " % x.name, x]
            if message is not None:
                data = [message] + data
        return _binary_assert_from(test, x, zero, data, summarize)


def _binary_assert_from(test, x, zero, data, summarize):
    fn = {"<": math_ops.less, "<=": math_ops.less_equal, ">": math_ops.greater, ">=": math_ops.greater_equal}[test]
    return Assert(math_ops.reduce_all(fn(x, zero)), data, summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    return _unary_assert("assert_positive", ">", x, data, summarize, message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    return _unary_assert("assert_negative", "<", x, data, summarize, message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    return _unary_assert("assert_non_negative", ">=", x, data, summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    return _unary_assert("assert_non_positive", "<=", x, data, summarize, message, name)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    with ops.name_scope(name, "assert_rank", [x, rank]):
        x = ops.convert_to_tensor(x, name="x")
        if x.shape.ndims is not None and isinstance(rank, int):
            if x.shape.ndims != rank:
                raise ValueError("%sTensor %s must have rank %d. Received rank %d, shape %s"
                                 % ((message + " ") if message else "", x.name, rank, x.shape.ndims, x.shape))
            return gen_ops.no_op()
        return assert_equal(array_ops.rank(x), rank, data=data, summarize=summarize, message=message)


def assert_type(tensor, tf_type, message=None, name=None):
    tensor = ops.convert_to_tensor(tensor)
    if tensor.dtype.base_dtype != dtypes.as_dtype(tf_type):
        raise TypeError("%s%s must be of type %s" % ((message + " ") if message else "", tensor.name,
                                                      dtypes.as_dtype(tf_type).name))
    return gen_ops.no_op(name=name or "statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    x = ops.convert_to_tensor(x)
    if not x.dtype.is_integer:
        raise TypeError("%sExpected \"x\" to be integer type.  Found: %s of dtype %s"
                        % ((message + " ") if message else "", x.name, x.dtype.name))
    return gen_ops.no_op(name=name or "statically_determined_was_integer")

"""Learning-rate schedules (tf.train.exponential_decay, piecewise_constant, ...). The C++ API's
schedules are used where it has them (ExponentialDecay, PiecewiseConstant with numbers); the
others are built from ops as TensorFlow's Python layer builds them."""
from dflow import _dflow
from dflow.framework import ops
from dflow.ops import control_flow_ops
from dflow.ops import math_ops


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _step(global_step, what):
    if global_step is None:
        raise ValueError("global_step is required for %s." % what)
    return ops.convert_to_tensor(global_step)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """learning_rate * decay_rate ^ (global_step / decay_steps)."""
    step = _step(global_step, "exponential_decay")
    g = ops.get_default_graph()
    if name is None and _number(decay_steps) and int(decay_steps) == decay_steps and _number(decay_rate) and \
            (_number(learning_rate) or isinstance(learning_rate, ops.Tensor)):
        lr = learning_rate._out if isinstance(learning_rate, ops.Tensor) else float(learning_rate)
        return g._tensor_of(_dflow.exponential_decay(g._scope, lr, step._out, int(decay_steps), float(decay_rate),
                                                     bool(staircase)))
    with ops.name_scope(name, "ExponentialDecay", [learning_rate, global_step, decay_steps, decay_rate]) as name:
        learning_rate = ops.convert_to_tensor(learning_rate, name="learning_rate")
        dtype = learning_rate.dtype
        decay_steps = math_ops.cast(decay_steps, dtype)
        decay_rate = math_ops.cast(decay_rate, dtype)
        p = math_ops.cast(step, dtype) / decay_steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(learning_rate, math_ops.pow(decay_rate, p), name=name)


def piecewise_constant(x, boundaries, values, name=None):
    """values[i] for x in (boundaries[i-1], boundaries[i]]."""
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    x = ops.convert_to_tensor(x)
    g = ops.get_default_graph()
    if name is None and all(_number(b) for b in boundaries) and all(_number(v) for v in values):
        dtype = ops._python_dtype(list(values))
        if x.dtype.base_dtype.is_integer and not all(int(b) == b for b in boundaries):
            raise ValueError("Boundaries (%s) must have the same dtype as x (%s)." % (boundaries, x.dtype.name))
        return g._tensor_of(_dflow.piecewise_constant(g._scope, x._out, [float(b) for b in boundaries],
                                                      [float(v) for v in values], dtype._enum))
    with ops.name_scope(name, "PiecewiseConstant", [x, boundaries, values, name]):
        boundaries = [ops.convert_to_tensor(b, dtype=x.dtype.base_dtype) for b in boundaries]
        values = [ops.convert_to_tensor(v) for v in values]
        pairs = [(x <= boundaries[0], lambda: values[0]), (x > boundaries[-1], lambda: values[-1])]
        for low, high, v in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            pairs.append((math_ops.logical_and(x > low, x <= high), lambda v=v: v))
        return control_flow_ops.case(pairs, lambda: values[0], exclusive=True)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                     name=None):
    step = _step(global_step, "polynomial_decay")
    with ops.name_scope(name, "PolynomialDecay", [learning_rate, global_step, decay_steps, end_learning_rate,
                                                  power]) as name:
        learning_rate = ops.convert_to_tensor(learning_rate, name="learning_rate")
        dtype = learning_rate.dtype
        end_learning_rate = math_ops.cast(end_learning_rate, dtype)
        power = math_ops.cast(power, dtype)
        step = math_ops.cast(step, dtype)
        decay_steps = math_ops.cast(decay_steps, dtype)
        if cycle:
            multiplier = control_flow_ops.cond(math_ops.equal(step, 0), lambda: math_ops.cast(1.0, dtype),
                                               lambda: math_ops.ceil(step / decay_steps))
            decay_steps = math_ops.multiply(decay_steps, multiplier)
        else:
            step = math_ops.minimum(step, decay_steps)
        p = math_ops.divide(step, decay_steps)
        return math_ops.add(math_ops.multiply(learning_rate - end_learning_rate, math_ops.pow(1 - p, power)),
                            end_learning_rate, name=name)


def _progress(step, decay_steps, dtype, staircase):
    """step / decay_steps in `dtype`, floored when `staircase`."""
    p = math_ops.cast(step, dtype) / math_ops.cast(decay_steps, dtype)
    if staircase:
        p = math_ops.floor(p)
    return p


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    step = _step(global_step, "natural_exp_decay")
    with ops.name_scope(name, "NaturalExpDecay", [learning_rate, global_step, decay_rate]) as name:
        learning_rate = ops.convert_to_tensor(learning_rate, name="learning_rate")
        dtype = learning_rate.dtype
        p = _progress(step, decay_steps, dtype, staircase)
        exponent = math_ops.exp(math_ops.multiply(math_ops.negative(math_ops.cast(decay_rate, dtype)), p))
        return math_ops.multiply(learning_rate, exponent, name=name)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    step = _step(global_step, "inverse_time_decay")
    with ops.name_scope(name, "InverseTimeDecay", [learning_rate, global_step, decay_rate]) as name:
        learning_rate = ops.convert_to_tensor(learning_rate, name="learning_rate")
        dtype = learning_rate.dtype
        p = _progress(step, decay_steps, dtype, staircase)
        denom = math_ops.add(math_ops.cast(1.0, dtype), math_ops.multiply(math_ops.cast(decay_rate, dtype), p))
        return math_ops.divide(learning_rate, denom, name=name)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    raise NotImplementedError("tf.train.cosine_decay needs a Cos op, which dflow does not have")

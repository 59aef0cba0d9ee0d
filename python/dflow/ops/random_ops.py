"""Random ops as TensorFlow's Python layer builds them (tf.random_normal, tf.random_uniform, ...),
with TensorFlow's seed rule: a graph seed (tf.set_random_seed) and an op seed give the op's
(seed, seed2) attrs; neither gives fresh randomness on every run."""
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.ops import gen_ops
from dflow.ops import math_ops

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1


def _truncate_seed(seed):
    return seed % _MAXINT32  # Truncate to fit into 32-bit integer


def get_seed(op_seed):
    """TensorFlow's random_seed.get_seed: the (seed, seed2) pair an op uses."""
    g = ops.get_default_graph()
    graph_seed = g.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = g._h.num_node_ids
        seeds = _truncate_seed(graph_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(op_seed)
    else:
        seeds = None, None
    if seeds == (0, 0):
        return (0, _MAXINT32)
    return seeds


def _seed_attrs(seed):
    s1, s2 = get_seed(seed)
    return s1 or 0, s2 or 0


def _shape_tensor(shape):
    if isinstance(shape, ops.Tensor):
        return shape
    if isinstance(shape, tensor_shape.TensorShape):
        shape = shape.as_list()
    if hasattr(shape, "_ref") and not isinstance(shape, ops.Tensor):
        return ops.convert_to_tensor(shape)
    dtype = None
    if isinstance(shape, (tuple, list)) and not shape:
        dtype = dtypes.int32
    return ops.convert_to_tensor(shape, dtype=dtype, name="shape")


def _static_shape(shape):
    if isinstance(shape, ops.Tensor):
        return None
    try:
        return tensor_shape.as_shape(shape)
    except (TypeError, ValueError):
        return None


def _maybe_set_static_shape(t, shape):
    s = _static_shape(shape)
    if s is not None and s.ndims is not None and t.shape.is_compatible_with(s):
        t.set_shape(s)


def _scaled_normal(sample, default_name, shape, mean, stddev, dtype, seed, name):
    """sample(shape, dtype, seed=, seed2=) * stddev + mean: random_normal and truncated_normal."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, default_name, [shape, mean, stddev]) as name:
        shape_t = _shape_tensor(shape)
        mean_t = ops.convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = ops.convert_to_tensor(stddev, dtype=dtype, name="stddev")
        s1, s2 = _seed_attrs(seed)
        rnd = sample(shape_t, dtype, seed=s1, seed2=s2)
        mul = rnd * stddev_t
        value = math_ops.add(mul, mean_t, name=name)
        _maybe_set_static_shape(value, shape)
        return value


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    return _scaled_normal(gen_ops.random_standard_normal, "random_normal", shape, mean, stddev, dtype, seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    return _scaled_normal(gen_ops.truncated_normal, "truncated_normal", shape, mean, stddev, dtype, seed, name)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise ValueError("Invalid dtype %r" % dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        maxval = 1
    with ops.name_scope(name, "random_uniform", [shape, minval, maxval]) as name:
        shape_t = _shape_tensor(shape)
        minval_t = ops.convert_to_tensor(minval, dtype=dtype, name="min")
        maxval_t = ops.convert_to_tensor(maxval, dtype=dtype, name="max")
        s1, s2 = _seed_attrs(seed)
        if dtype.is_integer:
            result = gen_ops.random_uniform_int(shape_t, minval_t, maxval_t, seed=s1, seed2=s2, name=name)
        else:
            rnd = gen_ops.random_uniform(shape_t, dtype, seed=s1, seed2=s2)
            result = math_ops.add(rnd * (maxval_t - minval_t), minval_t, name=name)
        _maybe_set_static_shape(result, shape)
        return result


def random_shuffle(value, seed=None, name=None):
    s1, s2 = _seed_attrs(seed)
    return gen_ops.random_shuffle(value, seed=s1, seed2=s2, name=name)


def _multinomial(default_name, logits, num_samples, dtype, seed, name):
    """multinomial and categorical (TensorFlow's multinomial_categorical_impl)."""
    with ops.name_scope(name, default_name, [logits]):
        logits = ops.convert_to_tensor(logits, name="logits")
        s1, s2 = _seed_attrs(seed)
        return gen_ops.multinomial(logits, num_samples, seed=s1, seed2=s2,
                                   output_dtype=dtypes.as_dtype(dtype or dtypes.int64))


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    return _multinomial("multinomial", logits, num_samples, output_dtype, seed, name)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    return _multinomial("categorical", logits, num_samples, dtype, seed, name)


def random_crop(value, size, seed=None, name=None):
    from dflow.ops import array_ops
    with ops.name_scope(name, "random_crop", [value, size]) as name:
        value = ops.convert_to_tensor(value, name="value")
        size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        limit = shape - size + 1
        offset = random_uniform(array_ops.shape(shape), dtype=size.dtype, maxval=size.dtype.max, seed=seed) % limit
        return array_ops.slice(value, offset, size, name=name)

"""The ops of frozen convolutional models against real TensorFlow, on TensorFlow's own GraphDefs:
FusedBatchNorm{,V2,V3} (+ their gradient kernels), DepthwiseConv2dNative (+ backprops), LeakyRelu,
ResizeBilinear / ResizeNearestNeighbor (+ grads) and IdentityN.

Each case builds a graph with TensorFlow (placeholders fed with fixed random values), runs the
serialized GraphDef in both, and compares: the forward outputs; the gradients TensorFlow built into
the graph (tf.gradients: its gradient kernels and wiring executed by dflow); and dflow.gradients on
the imported forward graph against TensorFlow's. TensorFlow runs with grappler off, so that what
is compared is the ops themselves (grappler rewrites inference batch norm into elementary ops).
The Python wrappers (tf.nn.fused_batch_norm, depthwise_conv2d, leaky_relu, tf.image.resize_*,
tf.identity_n, tf.layers.batch_normalization) are built on each side with each library's own API."""
import numpy as np
import pytest

import dflow
from tfref import real_tf, tf_graph_def, run_dflow

RNG = np.random.RandomState(1234)
F32 = dict(rtol=1e-4, atol=1e-5)
F64 = dict(rtol=1e-10, atol=1e-12)


def _config(tf):
    cfg = tf.ConfigProto()
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    return cfg


def run_tf(graph_def, fetches, feeds=None):
    """The GraphDef in TensorFlow without grappler."""
    tf = real_tf()
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(tf.GraphDef.FromString(graph_def), name="")
        with tf.Session(config=_config(tf)) as s:
            return s.run(fetches, feeds)


def dflow_gradients(graph_def, ys, xs, grad_ys, feeds):
    """dflow.gradients(ys, xs, grad_ys) on the imported graph, run with feeds."""
    g = dflow.Graph()
    with g.as_default():
        dflow.import_graph_def(dflow.GraphDef.FromString(graph_def), name="")
        t = g.get_tensor_by_name
        grads = dflow.gradients([t(y) for y in ys], [t(x) for x in xs], [t(v) for v in grad_ys])
        assert all(v is not None for v in grads), grads
        with dflow.Session() as s:
            return s.run(grads, feeds)


def assert_close(a, b, tol, what):
    a = np.asarray(a)
    b = np.asarray(b)
    assert a.shape == b.shape, "%s: shape %s vs %s" % (what, a.shape, b.shape)
    assert a.dtype == b.dtype, "%s: dtype %s vs %s" % (what, a.dtype, b.dtype)
    if a.dtype.kind in "iub":
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, err_msg=what, equal_nan=True, **tol)


def check(build, feeds, tol=F32, grad_xs=None):
    """build(tf) -> (outputs, ys_for_gradients, placeholders): compares outputs, TensorFlow's
    gradient graph run in both, and dflow.gradients with TensorFlow's."""
    grad_info = {}

    def full(tf):
        outs, ys, xs = build(tf)
        grad_info["shapes"] = [o.shape.as_list() if o.shape.ndims is not None else None for o in outs]
        if ys:
            gys = [tf.constant(RNG.uniform(-1, 1, [d if d is not None else 1 for d in y.shape.as_list()])
                               .astype(y.dtype.as_numpy_dtype), name="grad_y%d" % i) for i, y in enumerate(ys)]
            tf_grads = tf.gradients(ys, xs, gys)
            grad_info.update(ys=ys, xs=xs, gys=gys, tf_grads=tf_grads)
        return outs, grad_info

    gd, (outs, names) = tf_graph_def(full)
    static_shapes(gd, outs, names["shapes"])
    fetch = list(outs) + list(names.get("tf_grads", []))
    want = run_tf(gd, fetch, feeds)
    got = run_dflow(gd, fetch, feeds)
    for i, (w, g) in enumerate(zip(want, got)):
        assert_close(g, w, tol, "fetch %d (%s)" % (i, fetch[i]))
    if names.get("ys"):
        mine = dflow_gradients(gd, names["ys"], names["xs"], names["gys"], feeds)
        for i, (w, g) in enumerate(zip(want[len(outs):], mine)):
            assert_close(g, w, tol, "dflow.gradients %d" % i)
    return want


def static_shapes(graph_def, outs, tf_shapes):
    """dflow's shape inference knows at least what TensorFlow's does, and agrees with it."""
    g = dflow.Graph()
    with g.as_default():
        dflow.import_graph_def(dflow.GraphDef.FromString(graph_def), name="")
        for name, want in zip(outs, tf_shapes):
            got = g.get_tensor_by_name(name).shape
            if want is None:
                continue
            assert got.ndims == len(want), (name, got, want)
            for a, b in zip(got.as_list(), want):
                assert b is None or a == b, (name, got, want)


def rand(shape, dtype=np.float32, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def run_error(build, feeds):
    """(TensorFlow's error class, dflow's error class) of running build's output."""
    gd, out = tf_graph_def(build)
    errs = []
    for runner in (run_tf, run_dflow):
        try:
            runner(gd, out, feeds)
            errs.append(None)
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            errs.append(type(e).__name__)
    return errs


# ---- FusedBatchNorm ----------------------------------------------------------------------------

BN_CASES = [(op, fmt, training, factor, eps)
            for op in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
            for fmt in ("NHWC", "NCHW")
            for training, factor in ((True, 1.0), (True, 0.4), (False, 1.0))
            for eps in (0.001,)] + [("FusedBatchNormV3", "NHWC", True, 1.0, 0.1),
                                    ("FusedBatchNormV3", "NCHW", False, 1.0, 1e-5)]


@pytest.mark.parametrize("op,fmt,training,factor,eps", BN_CASES)
def test_fused_batch_norm(op, fmt, training, factor, eps):
    shape = (2, 3, 4, 5) if fmt == "NHWC" else (2, 5, 3, 4)
    x = rand(shape, lo=-2, hi=3)
    scale, offset = rand([5], lo=0.5, hi=1.5), rand([5])
    mean, var = rand([5]), rand([5], lo=0.5, hi=1.5)
    stats = training and factor == 1.0

    def build(tf):
        xp = tf.placeholder(tf.float32, shape, name="x")
        sp = tf.placeholder(tf.float32, [5], name="scale")
        op_ = tf.placeholder(tf.float32, [5], name="offset")
        m = tf.constant(np.zeros([0], np.float32)) if stats else tf.constant(mean)
        v = tf.constant(np.zeros([0], np.float32)) if stats else tf.constant(var)
        outs = getattr(tf.raw_ops, op)(x=xp, scale=sp, offset=op_, mean=m, variance=v, epsilon=eps,
                                        exponential_avg_factor=factor, data_format=fmt, is_training=training)
        return list(outs[:5]), [outs[0]], [xp, sp, op_]

    want = check(build, {"x:0": x, "scale:0": scale, "offset:0": offset}, tol=dict(rtol=2e-4, atol=2e-5))
    if training:  # batch_variance is the Bessel-corrected variance (blended when factor != 1)
        axes = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
        unbiased = x.astype(np.float64).var(axis=axes, ddof=1)
        expect = unbiased if factor == 1.0 else (1 - factor) * var + factor * unbiased
        np.testing.assert_allclose(want[2], expect, rtol=1e-4)


@pytest.mark.parametrize("training", [True, False])
def test_fused_batch_norm_far_from_zero(training):
    """A mean far from zero with a small variance: no precision lost to cancellation. In training
    TensorFlow's float sums lose some (its batch mean is off by up to ~1e-4 here): there the
    exact float64 result is the reference, and TensorFlow's is only near it."""
    x = (1000 + rand((4, 3, 3, 2), np.float64, 0, 0.1)).astype(np.float32)
    scale, offset = np.float32([1.5, 0.7]), np.float32([0.1, -0.2])
    mean, var = np.float32([1000.03, 1000.06]), np.float32([0.001, 0.0008])

    def build(tf):
        xp = tf.placeholder(tf.float32, x.shape, name="x")
        m = tf.constant(np.zeros([0], np.float32)) if training else tf.constant(mean)
        v = tf.constant(np.zeros([0], np.float32)) if training else tf.constant(var)
        outs = tf.raw_ops.FusedBatchNormV3(x=xp, scale=tf.constant(scale), offset=tf.constant(offset), mean=m,
                                           variance=v, epsilon=1e-5, is_training=training)
        return [outs[0]], [], []

    if not training:
        check(build, {"x:0": x}, tol=dict(rtol=1e-4, atol=5e-4))
        return
    gd, (outs, _) = tf_graph_def(lambda tf: (build(tf)[0], {}))
    got = run_dflow(gd, outs, {"x:0": x})[0]
    want_tf = run_tf(gd, outs, {"x:0": x})[0]
    xd = x.astype(np.float64)
    exact = (xd - xd.mean((0, 1, 2))) / np.sqrt(xd.var((0, 1, 2)) + 1e-5) * scale + offset
    np.testing.assert_allclose(got, exact, rtol=0, atol=2e-3)
    np.testing.assert_allclose(got, want_tf, rtol=0, atol=2e-2)


def test_fused_batch_norm_5d_and_empty():
    x5 = rand((2, 3, 2, 2, 4))

    def build(tf):
        xp = tf.placeholder(tf.float32, x5.shape, name="x")
        sc = tf.constant(rand([4], lo=0.5, hi=1.5))
        outs = tf.raw_ops.FusedBatchNormV3(x=xp, scale=sc, offset=tf.constant(rand([4])),
                                           mean=tf.constant(np.zeros([0], np.float32)),
                                           variance=tf.constant(np.zeros([0], np.float32)),
                                           data_format="NDHWC", is_training=True)
        return list(outs[:5]), [outs[0]], [xp]

    check(build, {"x:0": x5}, tol=dict(rtol=2e-4, atol=2e-5))

    def build_empty(tf):
        xp = tf.placeholder(tf.float32, [None, 2, 2, 3], name="x")
        outs = tf.raw_ops.FusedBatchNormV3(x=xp, scale=tf.ones([3]), offset=tf.zeros([3]), mean=tf.zeros([3]),
                                           variance=tf.ones([3]), is_training=True)
        return list(outs), [], []

    check(build_empty, {"x:0": np.zeros((0, 2, 2, 3), np.float32)})


def test_fused_batch_norm_grad_kernels_direct():
    """FusedBatchNormGrad{,V2,V3} on their own, both modes and formats."""
    for op in ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"):
        for fmt in ("NHWC", "NCHW"):
            for training in (True, False):
                shape = (2, 3, 3, 4) if fmt == "NHWC" else (2, 4, 3, 3)
                feeds = {"dy:0": rand(shape), "x:0": rand(shape, lo=-1, hi=2)}

                def build(tf, op=op, fmt=fmt, training=training, shape=shape):
                    dy = tf.placeholder(tf.float32, shape, name="dy")
                    xp = tf.placeholder(tf.float32, shape, name="x")
                    kw = dict(y_backprop=dy, x=xp, scale=tf.constant(rand([4], lo=0.5, hi=1.5)),
                              reserve_space_1=tf.constant(rand([4])),
                              reserve_space_2=tf.constant(rand([4], lo=0.5, hi=1.5)), epsilon=0.01,
                              data_format=fmt, is_training=training)
                    if op.endswith("V3"):
                        kw["reserve_space_3"] = tf.constant(np.zeros([0], np.float32))
                    outs = getattr(tf.raw_ops, op)(**kw)
                    return list(outs[:3]), [], []

                check(build, feeds)


@pytest.mark.parametrize("op,fmt,training", [("FusedBatchNormV3", "NHWC", True), ("FusedBatchNormV3", "NCHW", True),
                                             ("FusedBatchNormV3", "NHWC", False), ("FusedBatchNorm", "NCHW", False),
                                             ("FusedBatchNormV2", "NHWC", True)])
def test_fused_batch_norm_second_order(op, fmt, training):
    """The gradients of FusedBatchNormGrad* (TensorFlow's _FusedBatchNormGradGrad)."""
    shape = (2, 3, 3, 4) if fmt == "NHWC" else (2, 4, 3, 3)
    x = rand(shape, lo=-1, hi=2)
    w = rand(shape)

    def build(tf):
        xp = tf.placeholder(tf.float32, shape, name="x")
        sp = tf.placeholder(tf.float32, [4], name="scale")
        m = tf.constant(np.zeros([0], np.float32)) if training else tf.constant(rand([4]))
        v = tf.constant(np.zeros([0], np.float32)) if training else tf.constant(rand([4], lo=0.5, hi=1.5))
        y = getattr(tf.raw_ops, op)(x=xp, scale=sp, offset=tf.constant(rand([4])), mean=m, variance=v,
                                     epsilon=0.01, data_format=fmt, is_training=training)[0]
        dx, ds = tf.gradients(tf.reduce_sum(y * tf.constant(w)), [xp, sp])
        return [dx, ds], [dx, ds], [xp, sp]

    check(build, {"x:0": x, "scale:0": rand([4], lo=0.5, hi=1.5)}, tol=dict(rtol=1e-3, atol=1e-4))


def test_fused_batch_norm_errors():
    def build(tf):
        xp = tf.placeholder(tf.float32, name="x")
        return tf.raw_ops.FusedBatchNormV3(x=xp, scale=tf.ones([3]), offset=tf.zeros([3]), mean=tf.zeros([3]),
                                           variance=tf.ones([3]), is_training=False)[0]

    assert run_error(build, {"x:0": np.ones((2, 2, 3), np.float32)}) == ["InvalidArgumentError"] * 2
    assert run_error(build, {"x:0": np.ones((2, 2, 2, 4), np.float32)}) == ["InvalidArgumentError"] * 2
    # A data_format outside the OpDef's: refused while building on both sides.
    tf = real_tf()
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.raw_ops.FusedBatchNormV3(x=tf.ones([1, 2, 2, 3]), scale=tf.ones([3]), offset=tf.zeros([3]),
                                        mean=tf.zeros([3]), variance=tf.ones([3]), data_format="HWCN")
    with dflow.Graph().as_default():
        with pytest.raises(ValueError):
            dflow.raw_ops.FusedBatchNormV3(x=dflow.ones([1, 2, 2, 3]), scale=dflow.ones([3]),
                                           offset=dflow.zeros([3]), mean=dflow.zeros([3]),
                                           variance=dflow.ones([3]), data_format="HWCN")


def _both_apis(build, feeds, tol=F32):
    """build(lib, is_tf) with each library's own API; outputs compared."""
    tf = real_tf()
    g = tf.Graph()
    with g.as_default():
        outs, init = build(tf, True)
        with tf.Session(config=_config(tf)) as s:
            if init is not None:
                s.run(init)
            want = s.run(outs, {g.get_tensor_by_name(k): v for k, v in feeds.items()})
        tf_types = sorted({op.type for op in g.get_operations()})
    dg = dflow.Graph()
    with dg.as_default():
        outs, init = build(dflow, False)
        with dflow.Session() as s:
            if init is not None:
                s.run(init)
            got = s.run(outs, {dg.get_tensor_by_name(k): v for k, v in feeds.items()})
        df_types = sorted({op.type for op in dg.get_operations()})
    for i, (w, gt) in enumerate(zip(want, got)):
        assert_close(gt, w, tol, "output %d" % i)
    return tf_types, df_types


def test_fused_batch_norm_wrapper():
    x = rand((2, 3, 3, 4))

    def build(lib, is_tf):
        xp = lib.placeholder(lib.float32, [2, 3, 3, 4], name="x")
        y, m, v = lib.nn.fused_batch_norm(xp, np.ones(4, np.float32) * 1.5, np.zeros(4, np.float32) + 0.25,
                                          epsilon=1e-6)
        y2, m2, v2 = lib.nn.fused_batch_norm(xp, np.ones(4, np.float32), np.zeros(4, np.float32),
                                             mean=np.ones(4, np.float32) * 0.1, variance=np.ones(4, np.float32) * 2,
                                             is_training=False, data_format="NHWC")
        return [y, m, v, y2, m2, v2], None

    tf_types, df_types = _both_apis(build, {"x:0": x})
    assert "FusedBatchNormV3" in tf_types and "FusedBatchNormV3" in df_types


def _tf115_batch_norm_layer(tf, x, axis, training, momentum, epsilon=1e-3):
    """What TensorFlow 1.15's tf.layers.batch_normalization(fused=None) builds for a 4-D input
    (tf.compat.v1.layers needs Keras 2, absent here): gamma, beta, moving statistics, a
    FusedBatchNormV3 and, in training, the AssignMovingAvg updates."""
    fmt = "NCHW" if axis == 1 else "NHWC"
    depth = x.shape[axis].value if hasattr(x.shape[axis], "value") else x.shape[axis]
    with tf.variable_scope("batch_normalization"):
        gamma = tf.get_variable("gamma", [depth], initializer=tf.ones_initializer())
        beta = tf.get_variable("beta", [depth], initializer=tf.zeros_initializer())
        mm = tf.get_variable("moving_mean", [depth], initializer=tf.zeros_initializer(), trainable=False)
        mv = tf.get_variable("moving_variance", [depth], initializer=tf.ones_initializer(), trainable=False)
    if not training:
        y, _, _ = tf.nn.fused_batch_norm(x, gamma, beta, mean=mm, variance=mv, epsilon=epsilon, data_format=fmt,
                                         is_training=False)
        return y, [], [gamma, beta], [mm, mv]
    y, mean, var = tf.nn.fused_batch_norm(x, gamma, beta, epsilon=epsilon, data_format=fmt)
    size = tf.size(x)
    updates = []
    for v, value in ((mm, mean), (mv, var)):
        delta = (v - value) * (1.0 - momentum)
        delta = tf.where(size > 0, delta, tf.zeros_like(delta))
        updates.append(tf.assign_sub(v, delta))
    return y, updates, [gamma, beta], [mm, mv]


@pytest.mark.parametrize("axis,training", [(-1, True), (1, True), (-1, False), (1, False)])
def test_layers_batch_normalization_fused(axis, training):
    x = rand((4, 3, 3, 2), lo=-1, hi=2)

    def build(lib, is_tf):
        xp = lib.placeholder(lib.float32, [4, 3, 3, 2], name="x")
        if is_tf:
            y, updates, params, moving = _tf115_batch_norm_layer(lib, xp, axis, training, 0.9)
        else:
            y = lib.layers.batch_normalization(xp, axis=axis, training=training, momentum=0.9)
            updates = lib.get_collection(lib.GraphKeys.UPDATE_OPS)
            params = lib.trainable_variables()
            moving = [v for v in lib.global_variables() if "moving" in v.name]
            assert [v.name for v in params] == ["batch_normalization/gamma:0", "batch_normalization/beta:0"]
            assert [v.name for v in moving] == ["batch_normalization/moving_mean:0",
                                                "batch_normalization/moving_variance:0"]
        loss = lib.reduce_sum(y * y * 0.5 + y)
        grads = lib.gradients(loss, [xp] + params)
        with lib.control_dependencies(updates):
            y = lib.identity(y)
        with lib.control_dependencies([y]):
            after = [lib.identity(v) for v in moving]
        return [y] + grads + after, lib.global_variables_initializer()

    tf_types, df_types = _both_apis(build, {"x:0": x}, tol=dict(rtol=2e-4, atol=2e-5))
    assert "FusedBatchNormV3" in tf_types
    assert "FusedBatchNormV3" in df_types


# ---- DepthwiseConv2dNative -----------------------------------------------------------------------

DW_CASES = [
    ("NHWC", "SAME", [1, 1], [1, 1], 1, None),
    ("NHWC", "VALID", [2, 2], [1, 1], 2, None),
    ("NHWC", "SAME", [1, 2], [1, 1], 3, None),
    ("NHWC", "VALID", [1, 1], [2, 2], 1, None),
    ("NHWC", "EXPLICIT", [2, 1], [1, 1], 2, [[0, 0], [1, 2], [0, 1], [0, 0]]),
    ("NCHW", "SAME", [2, 2], [1, 1], 2, None),
    ("NCHW", "VALID", [1, 1], [1, 2], 1, None),
    ("NCHW", "EXPLICIT", [1, 1], [1, 1], 1, [[0, 0], [0, 0], [2, 0], [1, 1]]),
]


def _numpy_depthwise(x, f, fmt, strides, dil, padding, pads):
    """The reference: output channel c * m_count + m sums x[..., c] * f[kh, kw, c, m] over the taps."""
    if fmt == "NCHW":
        x = x.transpose(0, 2, 3, 1)
    n, h, w, c = x.shape
    kh, kw, _, mult = f.shape
    geo = []
    hi, wi = (1, 2) if fmt == "NHWC" else (2, 3)
    for size, k, s, d, i in ((h, kh, strides[0], dil[0], hi), (w, kw, strides[1], dil[1], wi)):
        eff = (k - 1) * d + 1
        if padding == "VALID":
            out, before = (size - eff + s) // s, 0
        elif padding == "SAME":
            out = -(-size // s)
            before = max((out - 1) * s + eff - size, 0) // 2
        else:
            before, after = pads[i]
            out = (size + before + after - eff + s) // s
        geo.append((out, before))
    (oh, pt), (ow, pl) = geo
    y = np.zeros((n, oh, ow, c * mult), np.float64)
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, q = i * strides[0] - pt + a * dil[0], j * strides[1] - pl + b * dil[1]
                    if 0 <= r < h and 0 <= q < w:
                        y[:, i, j, :] += (x[:, r, q, :, None] * f[a, b][None]).reshape(n, c * mult)
    return y.transpose(0, 3, 1, 2) if fmt == "NCHW" else y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fmt,padding,strides,dil,mult,pads", DW_CASES)
def test_depthwise_conv2d_native(fmt, padding, strides, dil, mult, pads, dtype):
    n, h, w, c = 2, 7, 6, 3
    shape = (n, h, w, c) if fmt == "NHWC" else (n, c, h, w)
    x = rand(shape, dtype)
    f = rand((3, 2, c, mult), dtype)

    def full(v):
        return [1, v[0], v[1], 1] if fmt == "NHWC" else [1, 1, v[0], v[1]]

    explicit = [p for pair in pads for p in pair] if pads else []

    def build_with(grads):
        def build(tf):
            t = tf.as_dtype(dtype)
            xp = tf.placeholder(t, shape, name="x")
            fp = tf.placeholder(t, f.shape, name="f")
            y = tf.raw_ops.DepthwiseConv2dNative(input=xp, filter=fp, strides=full(strides), padding=padding,
                                                 explicit_paddings=explicit, data_format=fmt, dilations=full(dil))
            return ([y], [y], [xp, fp]) if grads else ([y], [], [])
        return build

    feeds = {"x:0": x, "f:0": f}
    tol = F32 if dtype == np.float32 else F64
    op_error = real_tf().errors.OpError
    try:
        check(build_with(True), feeds, tol=tol)
        return
    except op_error:
        pass
    # TensorFlow's CPU kernels refuse some configurations (double: NHWC only, no dilations, equal
    # strides; the backprops: equal strides, and oneDNN fails on some dilated/explicit ones).
    # dflow computes them all: the forward against TensorFlow where it runs, else the reference.
    try:
        check(build_with(False), feeds, tol=tol)
    except op_error:
        gd, (outs, _) = tf_graph_def(lambda tf: (build_with(False)(tf)[0], {}))
        got = run_dflow(gd, outs, feeds)[0]
        want = _numpy_depthwise(x.astype(np.float64), f.astype(np.float64), fmt, strides, dil, padding, pads)
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    gd, (outs, _) = tf_graph_def(lambda tf: (build_with(False)(tf)[0], {}))
    g = dflow.Graph()
    with g.as_default():
        dflow.import_graph_def(dflow.GraphDef.FromString(gd), name="")
        y = g.get_tensor_by_name(outs[0])
        grads = dflow.gradients(y, [g.get_tensor_by_name("x:0"), g.get_tensor_by_name("f:0")])
        with dflow.Session() as s:
            dx, df = s.run(grads, feeds)
    assert dx.shape == x.shape and df.shape == f.shape and np.isfinite(dx).all() and np.isfinite(df).all()


def test_depthwise_backprop_gradients():
    """Second order: the gradients of the two backprop ops (TensorFlow's wiring)."""
    x = rand((1, 5, 5, 2), np.float64)
    f = rand((3, 3, 2, 2), np.float64)

    def build(tf):
        xp = tf.placeholder(tf.float64, x.shape, name="x")
        fp = tf.placeholder(tf.float64, f.shape, name="f")
        y = tf.raw_ops.DepthwiseConv2dNative(input=xp, filter=fp, strides=[1, 2, 2, 1], padding="SAME")
        dx, df = tf.gradients(tf.reduce_sum(y * y * y), [xp, fp])
        return [dx, df], [dx, df], [xp, fp]

    check(build, {"x:0": x, "f:0": f}, tol=F64)


def test_depthwise_errors():
    def build(tf):
        xp = tf.placeholder(tf.float32, name="x")
        return tf.raw_ops.DepthwiseConv2dNative(input=xp, filter=tf.ones([3, 3, 2, 1]), strides=[1, 1, 1, 1],
                                                padding="SAME")

    # TensorFlow aborts the process on a 3-D input (a failed CHECK): dflow's error only.
    gd, out = tf_graph_def(build)
    with pytest.raises(dflow.errors.InvalidArgumentError):
        run_dflow(gd, out, {"x:0": np.ones((5, 5, 2), np.float32)})
    assert run_error(build, {"x:0": np.ones((1, 5, 5, 3), np.float32)}) == ["InvalidArgumentError"] * 2

    def build_stride(tf):
        xp = tf.placeholder(tf.float32, name="x")
        return tf.raw_ops.DepthwiseConv2dNative(input=xp, filter=tf.ones([3, 3, 2, 1]), strides=[2, 1, 1, 1],
                                                padding="SAME")

    assert run_error(build_stride, {"x:0": np.ones((1, 5, 5, 2), np.float32)}) == ["UnimplementedError"] * 2


def test_depthwise_wrappers():
    x = rand((2, 8, 8, 3))
    f = rand((3, 3, 3, 2))

    def build(lib, is_tf):
        xp = lib.placeholder(lib.float32, x.shape, name="x")
        a = lib.nn.depthwise_conv2d(xp, f, [1, 1, 1, 1], "SAME")
        b = lib.nn.depthwise_conv2d(xp, f, [1, 2, 2, 1], "VALID")
        c = lib.nn.depthwise_conv2d(xp, f, [1, 1, 1, 1], "SAME", rate=[2, 2])
        d = lib.nn.depthwise_conv2d_native(xp, f, [1, 1, 1, 1], "VALID")
        g = lib.gradients(lib.reduce_sum(a * a) + lib.reduce_sum(c), [xp])
        return [a, b, c, d] + g, None

    _both_apis(build, {"x:0": x})


# ---- LeakyRelu ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("alpha", [0.2, 0.01, 1.5, -0.3])
def test_leaky_relu(alpha, dtype):
    x = rand((3, 4, 5), dtype, -3, 3)
    x[0, 0, :3] = [0.0, -0.0, 1e-30]

    def build(tf):
        xp = tf.placeholder(tf.as_dtype(dtype), x.shape, name="x")
        y = tf.raw_ops.LeakyRelu(features=xp, alpha=alpha)
        (dx,) = tf.gradients(tf.reduce_sum(y * y), [xp])  # LeakyReluGrad, then its gradient below
        return [y, dx], [y, dx], [xp]

    check(build, {"x:0": x}, tol=F32 if dtype == np.float32 else F64)


def test_leaky_relu_wrapper():
    x = rand((4, 6), np.float32, -2, 2)

    def build(lib, is_tf):
        xp = lib.placeholder(lib.float32, x.shape, name="x")
        ys = [lib.nn.leaky_relu(xp), lib.nn.leaky_relu(xp, alpha=0.05), lib.nn.leaky_relu(xp, alpha=np.array(0.3))]
        return ys + lib.gradients(lib.add_n(ys), [xp]), None

    tf_types, df_types = _both_apis(build, {"x:0": x})
    assert "LeakyRelu" in tf_types and "LeakyRelu" in df_types


# ---- Resize --------------------------------------------------------------------------------------

RESIZE_MODES = [(False, False), (True, False), (False, True)]
RESIZE_SIZES = [(7, 9), (2, 3), (1, 1), (5, 4)]


@pytest.mark.parametrize("align,half", RESIZE_MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8, np.int32, np.int64])
def test_resize_forward(align, half, dtype):
    x = (rand((2, 5, 4, 3), np.float64, 0, 200)).astype(dtype)

    def build(tf):
        xp = tf.placeholder(tf.as_dtype(dtype), x.shape, name="x")
        outs = []
        for size in RESIZE_SIZES:
            outs.append(tf.raw_ops.ResizeBilinear(images=xp, size=size, align_corners=align, half_pixel_centers=half))
            outs.append(tf.raw_ops.ResizeNearestNeighbor(images=xp, size=size, align_corners=align,
                                                         half_pixel_centers=half))
        return outs, [], []

    check(build, {"x:0": x}, tol=dict(rtol=1e-5, atol=1e-4))


@pytest.mark.parametrize("align,half", RESIZE_MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_resize_gradients(align, half, dtype):
    x = rand((2, 5, 4, 2), dtype)
    tol = F32 if dtype == np.float32 else dict(rtol=1e-6, atol=1e-6)  # bilinear's grads are float

    def build(tf):
        xp = tf.placeholder(tf.as_dtype(dtype), x.shape, name="x")
        ys = [tf.raw_ops.ResizeBilinear(images=xp, size=s, align_corners=align, half_pixel_centers=half)
              for s in ((8, 7), (3, 2))]
        ys += [tf.raw_ops.ResizeNearestNeighbor(images=xp, size=s, align_corners=align, half_pixel_centers=half)
               for s in ((8, 7), (3, 2))]
        return ys, ys, [xp]

    check(build, {"x:0": x}, tol=tol)


def test_resize_grad_kernels_direct():
    g = rand((2, 6, 5, 3))

    def build(tf):
        gp = tf.placeholder(tf.float32, g.shape, name="g")
        outs = []
        for align, half in RESIZE_MODES:
            outs.append(tf.raw_ops.ResizeBilinearGrad(grads=gp, original_image=tf.zeros([2, 4, 3, 3], tf.float64),
                                                      align_corners=align, half_pixel_centers=half))
            outs.append(tf.raw_ops.ResizeNearestNeighborGrad(grads=gp, size=[3, 7], align_corners=align,
                                                             half_pixel_centers=half))
        return outs, [], []

    check(build, {"g:0": g})


def test_resize_errors():
    def build(align, half, size):
        def b(tf):
            xp = tf.placeholder(tf.float32, name="x")
            sp = tf.placeholder(tf.int32, name="s")
            return tf.raw_ops.ResizeBilinear(images=xp, size=sp, align_corners=align, half_pixel_centers=half)
        return b

    img = np.ones((1, 3, 3, 1), np.float32)
    inv = ["InvalidArgumentError"] * 2
    assert run_error(build(True, True, None), {"x:0": img, "s:0": [2, 2]}) == inv
    assert run_error(build(False, False, None), {"x:0": img, "s:0": [0, 2]}) == inv
    assert run_error(build(False, False, None), {"x:0": img, "s:0": [2]}) == inv
    assert run_error(build(False, False, None), {"x:0": np.ones((3, 3, 1), np.float32), "s:0": [2, 2]}) == inv
    assert run_error(build(False, False, None), {"x:0": np.ones((1, 0, 3, 1), np.float32), "s:0": [2, 2]}) == inv


def test_image_wrappers():
    x4 = rand((2, 5, 6, 3), np.float32, 0, 1)
    x3 = (rand((5, 6, 3), np.float64, 0, 255)).astype(np.uint8)

    def build(lib, is_tf):
        a = lib.placeholder(lib.float32, x4.shape, name="a")
        b = lib.placeholder(lib.uint8, x3.shape, name="b")
        im = lib.image
        outs = [im.resize_bilinear(a, [7, 3]), im.resize_bilinear(a, [7, 3], align_corners=True),
                im.resize_bilinear(a, [4, 9], half_pixel_centers=True),
                im.resize_nearest_neighbor(a, [10, 12]), im.resize_nearest_neighbor(b[None], [3, 3]),
                im.resize_images(a, [8, 8]), im.resize_images(b, [4, 4]),
                im.resize_images(a, [8, 8], method=im.ResizeMethod.NEAREST_NEIGHBOR),
                im.resize_images(a, [5, 6]), im.resize_images(a, [10, 20], preserve_aspect_ratio=True),
                im.resize(a, [3, 3])]
        if is_tf:
            from tensorflow.python.ops import image_ops_impl
            v2 = image_ops_impl.resize_images_v2
        else:
            v2 = im.resize_images_v2
        outs += [v2(a, [9, 11]), v2(a, [9, 11], method="nearest")]
        outs += lib.gradients(lib.reduce_sum(outs[0] * outs[0]) + lib.reduce_sum(outs[3]), [a])
        return outs, None

    _both_apis(build, {"a:0": x4, "b:0": x3}, tol=dict(rtol=1e-5, atol=1e-4))


# ---- a frozen MobileNet-style graph ----------------------------------------------------------------

def test_frozen_mobilenet_block():
    """Constants in place of variables, as a frozen graph has them: conv, FusedBatchNormV3
    (inference), Relu6, depthwise, batch norm, LeakyRelu, a resize back up, IdentityN."""
    x = rand((2, 16, 16, 3), lo=0, hi=1)

    def const(shape, lo=-0.5, hi=0.5):
        return rand(shape, lo=lo, hi=hi)

    def build(tf):
        xp = tf.placeholder(tf.float32, [None, 16, 16, 3], name="x")

        def bn(t, c):
            return tf.raw_ops.FusedBatchNormV3(x=t, scale=const([c], 0.5, 1.5), offset=const([c]), mean=const([c]),
                                               variance=const([c], 0.5, 1.5), epsilon=0.001, is_training=False)[0]

        h = tf.nn.relu6(bn(tf.nn.conv2d(xp, const([3, 3, 3, 8]), [1, 2, 2, 1], "SAME"), 8))
        h = tf.nn.relu6(bn(tf.nn.depthwise_conv2d_native(h, const([3, 3, 8, 1]), [1, 1, 1, 1], "SAME"), 8))
        h = tf.nn.leaky_relu(bn(tf.nn.conv2d(h, const([1, 1, 8, 16]), [1, 1, 1, 1], "SAME"), 16), alpha=0.1)
        h = tf.nn.depthwise_conv2d_native(h, const([3, 3, 16, 2]), [1, 2, 2, 1], "VALID")
        up = tf.raw_ops.ResizeBilinear(images=h, size=[16, 16], half_pixel_centers=True)
        a, b = tf.raw_ops.IdentityN(input=[up, tf.reduce_mean(h, [1, 2])])
        return [a, b], [], []

    check(build, {"x:0": x}, tol=dict(rtol=1e-4, atol=1e-4))


def test_graph_def_without_newer_attrs():
    """GraphDefs written by TensorFlow 1.x lack attrs added since (exponential_avg_factor,
    half_pixel_centers, explicit_paddings, LeakyRelu's alpha): their OpDef defaults apply."""
    x = rand((2, 3, 3, 4))

    def build(tf):
        xp = tf.placeholder(tf.float32, [2, 3, 3, 4], name="x")
        y = tf.raw_ops.FusedBatchNorm(x=xp, scale=tf.constant(rand([4], lo=0.5, hi=1.5)), offset=tf.zeros([4]),
                                      mean=tf.constant(rand([4])), variance=tf.ones([4]), is_training=False)[0]
        z = tf.raw_ops.LeakyRelu(features=y)
        r = tf.raw_ops.ResizeBilinear(images=z, size=[5, 4])
        return tf.raw_ops.DepthwiseConv2dNative(input=r, filter=tf.constant(rand([3, 3, 4, 1])),
                                                strides=[1, 1, 1, 1], padding="SAME")

    gd, out = tf_graph_def(build)
    g = real_tf().GraphDef.FromString(gd)
    for n in g.node:
        for a in ("exponential_avg_factor", "half_pixel_centers", "explicit_paddings", "alpha"):
            if a in n.attr:
                del n.attr[a]
    old = g.SerializeToString()
    np.testing.assert_allclose(run_dflow(old, out, {"x:0": x}), run_tf(old, out, {"x:0": x}), rtol=1e-5, atol=1e-5)


# ---- IdentityN -----------------------------------------------------------------------------------

def test_identity_n():
    a = rand((2, 3))
    b = np.array([1, 2, 3], np.int32)
    c = rand((4,), np.float64)

    def build(tf):
        ap = tf.placeholder(tf.float32, a.shape, name="a")
        bp = tf.placeholder(tf.int32, b.shape, name="b")
        cp = tf.placeholder(tf.float64, c.shape, name="c")
        outs = tf.raw_ops.IdentityN(input=[ap, bp, cp])
        return list(outs), [outs[0] * 2.0, outs[2]], [ap, cp]

    check(build, {"a:0": a, "b:0": b, "c:0": c})

    def build_w(lib, is_tf):
        ap = lib.placeholder(lib.float32, a.shape, name="a")
        x, y = lib.identity_n([ap, lib.constant(b)])
        return [x, y] + lib.gradients(lib.reduce_sum(x * x), [ap]), None

    _both_apis(build_w, {"a:0": a})

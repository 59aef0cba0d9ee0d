"""Differential specs: neural-network ops — activations and their *Grad ops, LeakyRelu, BiasAdd
(+Grad), Conv2D and both backprops, DepthwiseConv2dNative and its backprops, max/avg pooling and
their grads, Softmax/LogSoftmax, the softmax cross entropies, L2Loss, FusedBatchNorm{,V2,V3} and
their grads, ResizeBilinear / ResizeNearestNeighbor and their grads. (Format: see diffsuite's
docstring.)"""
import numpy as np

from diffsuite import FLOATS, SHAPES, Case, Const, Spec, gen, unary_cases

SPECS = []
R = lambda tf: tf.raw_ops  # noqa: E731

# Convolutions and pooling sum many products: float32 results differ in the last bits between
# summation orders (oneDNN on both sides, different blockings).
CONV_TOL = {"float32": (1e-4, 1e-5), "float64": (1e-10, 1e-11)}
CONV_GRAD_TOL = {"float32": (2e-4, 1e-4), "float64": (1e-9, 1e-10)}

# ---- activations -----------------------------------------------------------------------------

ACT_SHAPES = dict(SHAPES, rank4=(2, 2, 3, 2))


def _act(op, **attrs):
    def cases(dtype):
        kinds = ["normal", "special", "extreme"] if dtype in FLOATS else ["normal", "extreme"]
        out = unary_cases(lambda tf, x: getattr(tf.raw_ops, op)(features=x, **attrs), dtype, kinds=kinds,
                          shapes=ACT_SHAPES)
        # around the kinks: 0, 6, -0
        pts = np.array([-7.0, -6.0, -1e-3, -0.0, 0.0, 1e-3, 5.999, 6.0, 6.001, 30.0, -30.0, 100.0])
        if dtype in FLOATS:
            out.append(Case("kinks", lambda tf, x: getattr(tf.raw_ops, op)(features=x, **attrs), [pts.astype(dtype)]))
        return out
    return cases


for _op in ("Relu", "Relu6", "Elu", "Selu", "Softplus"):
    SPECS.append(Spec(_op, _act(_op)))


def _leaky(dtype):
    out = []
    for alpha in (0.2, 0.0, 1.0, -0.5, 2.0):
        out += unary_cases(lambda tf, x, a=alpha: tf.raw_ops.LeakyRelu(features=x, alpha=a), dtype,
                           shapes={"matrix": (3, 4), "empty": (0, 4), "scalar": ()}, label="alpha=%s " % alpha)
    out.append(Case("default alpha", lambda tf, x: tf.raw_ops.LeakyRelu(features=x), [gen(dtype, (2, 3, 4))]))
    return out


SPECS.append(Spec("LeakyRelu", _leaky))

# Grad ops: (gradients, features) or (gradients, outputs).
ACT_GRAD = {"ReluGrad": ("features", None), "Relu6Grad": ("features", None), "SoftplusGrad": ("features", None),
            "EluGrad": ("outputs", "Elu"), "SeluGrad": ("outputs", "Selu"), "LeakyReluGrad": ("features", None)}


def _act_grad(op, arg, fwd, **attrs):
    def fn(tf, g, x):
        if fwd:  # outputs of the forward op, as the gradient function passes them
            x = getattr(tf.raw_ops, fwd)(features=x)
        return getattr(tf.raw_ops, op)(gradients=g, **{arg: x}, **attrs)

    def cases(dtype):
        out = []
        for sname, shape in ACT_SHAPES.items():
            for kind in (["normal", "special"] if dtype in FLOATS else ["normal", "extreme"]):
                out.append(Case("%s %s" % (sname, kind), fn, [gen(dtype, shape, "normal", len(out)),
                                                             gen(dtype, shape, kind, len(out) + 100)]))
        if dtype in FLOATS:
            pts = np.array([-7.0, -6.0, -0.0, 0.0, 1e-3, 6.0, 6.001, 30.0, -30.0, 100.0], dtype)
            out.append(Case("kinks", fn, [np.linspace(-2, 2, pts.size).astype(dtype), pts]))
        out.append(Case("shapes differ", fn, [gen(dtype, (3,)), gen(dtype, (4,))]))
        return out
    return cases


for _op, (_arg, _fwd) in ACT_GRAD.items():
    SPECS.append(Spec(_op, _act_grad(_op, _arg, _fwd, **({"alpha": 0.3} if _op == "LeakyReluGrad" else {}))))

# ---- BiasAdd ---------------------------------------------------------------------------------


def _bias_add(dtype):
    out = []
    f = lambda tf, x, b, df="NHWC": tf.raw_ops.BiasAdd(value=x, bias=b, data_format=df)  # noqa: E731
    for shape in [(3, 4), (2, 3, 4), (2, 2, 3, 4), (0, 4), (2, 1, 2, 3, 4)]:
        for df in ("NHWC", "NCHW"):
            c = shape[-1] if df == "NHWC" else shape[1]
            if df == "NCHW" and len(shape) < 3:
                continue
            out.append(Case("%s %s" % (shape, df), lambda tf, x, b, df=df: f(tf, x, b, df),
                            [gen(dtype, shape, "normal", len(out)), gen(dtype, (c,), "normal", len(out) + 7)]))
    if dtype in FLOATS:
        out.append(Case("special", f, [gen(dtype, (3, 4), "special"), gen(dtype, (4,), "special", 3)]))
    out.append(Case("bias size wrong", f, [gen(dtype, (3, 4)), gen(dtype, (3,))]))
    out.append(Case("bias not a vector", f, [gen(dtype, (3, 4)), gen(dtype, (1, 4))]))
    out.append(Case("value a vector", f, [gen(dtype, (4,)), gen(dtype, (4,))]))
    return out


def _bias_add_grad(dtype):
    out = []
    for shape in [(3, 4), (2, 3, 4), (2, 2, 3, 4), (0, 4), (2, 0, 3)]:
        for df in ("NHWC", "NCHW"):
            if df == "NCHW" and len(shape) < 3:
                continue
            out.append(Case("%s %s" % (shape, df), lambda tf, g, df=df: tf.raw_ops.BiasAddGrad(
                out_backprop=g, data_format=df), [gen(dtype, shape, "normal", len(out))]))
    out.append(Case("vector", lambda tf, g: tf.raw_ops.BiasAddGrad(out_backprop=g), [gen(dtype, (4,))]))
    return out


SPECS.append(Spec("BiasAdd", _bias_add))
SPECS.append(Spec("BiasAddGrad", _bias_add_grad))

# ---- convolutions ----------------------------------------------------------------------------

# (input NHWC, filter HWIO, strides, padding, dilations, explicit_paddings)
CONVS = [
    ((1, 5, 5, 2), (3, 3, 2, 3), (1, 1, 1, 1), "VALID", (1, 1, 1, 1), []),
    ((2, 6, 7, 3), (3, 2, 3, 2), (1, 2, 2, 1), "SAME", (1, 1, 1, 1), []),
    ((2, 6, 6, 1), (2, 2, 1, 4), (1, 3, 2, 1), "VALID", (1, 1, 1, 1), []),
    ((1, 7, 7, 2), (3, 3, 2, 2), (1, 1, 1, 1), "SAME", (1, 2, 2, 1), []),
    ((1, 4, 5, 2), (2, 3, 2, 2), (1, 1, 1, 1), "EXPLICIT", (1, 1, 1, 1), [0, 0, 1, 2, 0, 1, 0, 0]),
    ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), "SAME", (1, 1, 1, 1), []),
    ((0, 4, 4, 2), (2, 2, 2, 3), (1, 1, 1, 1), "SAME", (1, 1, 1, 1), []),
    ((1, 4, 4, 2), (1, 1, 2, 0), (1, 1, 1, 1), "VALID", (1, 1, 1, 1), []),
]


def _conv_attrs(strides, padding, dil, ex):
    kw = {"strides": list(strides), "padding": padding, "dilations": list(dil)}
    if padding == "EXPLICIT":
        kw["explicit_paddings"] = list(ex)
    return kw


def _conv_out(xs, fs, strides, padding, dil, ex):
    dims = []
    for i in (1, 2):
        k = (fs[i - 1] - 1) * dil[i] + 1
        if padding == "VALID":
            dims.append((xs[i] - k) // strides[i] + 1)
        elif padding == "SAME":
            dims.append(-(-xs[i] // strides[i]))
        else:
            dims.append((xs[i] + ex[2 * i] + ex[2 * i + 1] - k) // strides[i] + 1)
    return (xs[0], dims[0], dims[1], fs[3])


def _conv2d(dtype):
    out = []
    for xs, fs, st, pad, dil, ex in CONVS:
        kw = _conv_attrs(st, pad, dil, ex)
        out.append(Case("%s * %s %s %s s=%s d=%s" % (xs, fs, pad, ex, st[1:3], dil[1:3]),
                        lambda tf, x, f, kw=kw: tf.raw_ops.Conv2D(input=x, filter=f, **kw),
                        [gen(dtype, xs, "normal", len(out)), gen(dtype, fs, "normal", len(out) + 50)]))
    f = lambda tf, x, w, **kw: tf.raw_ops.Conv2D(input=x, filter=w, **dict(  # noqa: E731
        {"strides": [1, 1, 1, 1], "padding": "VALID"}, **kw))
    out.append(Case("special", f, [gen(dtype, (1, 4, 4, 1), "special"), gen(dtype, (2, 2, 1, 1))]))
    out.append(Case("channels differ", f, [gen(dtype, (1, 4, 4, 2)), gen(dtype, (2, 2, 3, 1))]))
    out.append(Case("filter larger than input", f, [gen(dtype, (1, 2, 2, 1)), gen(dtype, (3, 3, 1, 1))]))
    out.append(Case("batch stride", lambda tf, x, w: f(tf, x, w, strides=[2, 1, 1, 1]),
                    [gen(dtype, (1, 4, 4, 1)), gen(dtype, (2, 2, 1, 1))]))
    out.append(Case("rank 3 input", f, [gen(dtype, (4, 4, 1)), gen(dtype, (2, 2, 1, 1))]))
    out.append(Case("grouped (input depth a multiple of the filter's)", f,
                    [gen(dtype, (1, 4, 4, 4)), gen(dtype, (2, 2, 2, 2))]))
    return out


def _conv2d_backprop_input(dtype):
    out = []
    for xs, fs, st, pad, dil, ex in CONVS:
        if 0 in xs or 0 in fs:
            continue
        kw = _conv_attrs(st, pad, dil, ex)
        ys = _conv_out(xs, fs, st, pad, dil, ex)
        out.append(Case("%s * %s %s s=%s d=%s" % (xs, fs, pad, st[1:3], dil[1:3]),
                        lambda tf, s, f, g, kw=kw: tf.raw_ops.Conv2DBackpropInput(
                            input_sizes=s, filter=f, out_backprop=g, **kw),
                        [Const(xs, np.int32), gen(dtype, fs, "normal", len(out)),
                         gen(dtype, ys, "normal", len(out) + 50)]))
    out.append(Case("out_backprop shape wrong", lambda tf, s, f, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=s, filter=f, out_backprop=g, strides=[1, 1, 1, 1], padding="VALID"),
        [Const((1, 5, 5, 2), np.int32), gen(dtype, (3, 3, 2, 3)), gen(dtype, (1, 2, 2, 3))]))
    return out


def _conv2d_backprop_filter(dtype):
    out = []
    for xs, fs, st, pad, dil, ex in CONVS:
        if 0 in xs or 0 in fs:
            continue
        kw = _conv_attrs(st, pad, dil, ex)
        ys = _conv_out(xs, fs, st, pad, dil, ex)
        out.append(Case("%s * %s %s s=%s d=%s" % (xs, fs, pad, st[1:3], dil[1:3]),
                        lambda tf, x, s, g, kw=kw: tf.raw_ops.Conv2DBackpropFilter(
                            input=x, filter_sizes=s, out_backprop=g, **kw),
                        [gen(dtype, xs, "normal", len(out)), Const(fs, np.int32),
                         gen(dtype, ys, "normal", len(out) + 50)]))
    return out


_HALF = "TensorFlow-only dtypes: dflow has no half-precision types (float16, bfloat16) nor int8/int16/uint16"
SPECS.append(Spec("Conv2D", _conv2d, tol=CONV_TOL, grad_tol=CONV_GRAD_TOL,
                  note=_HALF + "; int32 Conv2D (TensorFlow's CPU kernel has it) is not implemented in dflow"))
SPECS.append(Spec("Conv2DBackpropInput", _conv2d_backprop_input, tol=CONV_TOL, grad_tol=CONV_GRAD_TOL))
SPECS.append(Spec("Conv2DBackpropFilter", _conv2d_backprop_filter, tol=CONV_TOL, grad_tol=CONV_GRAD_TOL))

# Depthwise: filter (H, W, C, multiplier); explicit paddings too.
DEPTHWISE = [
    ((1, 5, 5, 2), (3, 3, 2, 1), (1, 1, 1, 1), "VALID", (1, 1, 1, 1), []),
    ((2, 6, 7, 3), (3, 2, 3, 2), (1, 2, 2, 1), "SAME", (1, 1, 1, 1), []),
    ((1, 7, 7, 2), (3, 3, 2, 2), (1, 1, 1, 1), "SAME", (1, 2, 2, 1), []),
    ((1, 4, 5, 2), (2, 3, 2, 1), (1, 1, 1, 1), "EXPLICIT", (1, 1, 1, 1), [0, 0, 1, 2, 0, 1, 0, 0]),
    ((0, 4, 4, 2), (2, 2, 2, 3), (1, 1, 1, 1), "SAME", (1, 1, 1, 1), []),
]


def _dw_out(xs, fs, st, pad, dil, ex):
    n, h, w, _ = _conv_out(xs, fs, st, pad, dil, ex)
    return (n, h, w, fs[2] * fs[3])


def _depthwise(dtype):
    out = []
    for xs, fs, st, pad, dil, ex in DEPTHWISE:
        kw = _conv_attrs(st, pad, dil, ex)
        out.append(Case("%s * %s %s s=%s d=%s" % (xs, fs, pad, st[1:3], dil[1:3]),
                        lambda tf, x, f, kw=kw: tf.raw_ops.DepthwiseConv2dNative(input=x, filter=f, **kw),
                        [gen(dtype, xs, "normal", len(out)), gen(dtype, fs, "normal", len(out) + 50)]))
    out.append(Case("channels differ", lambda tf, x, f: tf.raw_ops.DepthwiseConv2dNative(
        input=x, filter=f, strides=[1, 1, 1, 1], padding="VALID"),
        [gen(dtype, (1, 4, 4, 2)), gen(dtype, (2, 2, 3, 1))]))
    return out


def _depthwise_bi(dtype):
    out = []
    for xs, fs, st, pad, dil, ex in DEPTHWISE:
        if 0 in xs:
            continue
        kw = _conv_attrs(st, pad, dil, ex)
        out.append(Case("%s * %s %s s=%s d=%s" % (xs, fs, pad, st[1:3], dil[1:3]),
                        lambda tf, s, f, g, kw=kw: tf.raw_ops.DepthwiseConv2dNativeBackpropInput(
                            input_sizes=s, filter=f, out_backprop=g, **kw),
                        [Const(xs, np.int32), gen(dtype, fs, "normal", len(out)),
                         gen(dtype, _dw_out(xs, fs, st, pad, dil, ex), "normal", len(out) + 50)]))
    return out


def _depthwise_bf(dtype):
    out = []
    for xs, fs, st, pad, dil, ex in DEPTHWISE:
        if 0 in xs:
            continue
        kw = _conv_attrs(st, pad, dil, ex)
        out.append(Case("%s * %s %s s=%s d=%s" % (xs, fs, pad, st[1:3], dil[1:3]),
                        lambda tf, x, s, g, kw=kw: tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(
                            input=x, filter_sizes=s, out_backprop=g, **kw),
                        [gen(dtype, xs, "normal", len(out)), Const(fs, np.int32),
                         gen(dtype, _dw_out(xs, fs, st, pad, dil, ex), "normal", len(out) + 50)]))
    return out


SPECS.append(Spec("DepthwiseConv2dNative", _depthwise, tol=CONV_TOL, grad_tol=CONV_GRAD_TOL))
SPECS.append(Spec("DepthwiseConv2dNativeBackpropInput", _depthwise_bi, tol=CONV_TOL, grad_tol=CONV_GRAD_TOL))
SPECS.append(Spec("DepthwiseConv2dNativeBackpropFilter", _depthwise_bf, tol=CONV_TOL, grad_tol=CONV_GRAD_TOL))

# ---- pooling ---------------------------------------------------------------------------------

# (input NHWC, ksize, strides, padding)
POOLS = [
    ((1, 4, 4, 1), (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
    ((2, 5, 6, 3), (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
    ((1, 5, 5, 2), (1, 2, 3, 1), (1, 1, 2, 1), "VALID"),
    ((1, 3, 3, 1), (1, 3, 3, 1), (1, 1, 1, 1), "SAME"),
    ((1, 1, 1, 2), (1, 1, 1, 1), (1, 1, 1, 1), "VALID"),
    ((0, 4, 4, 2), (1, 2, 2, 1), (1, 2, 2, 1), "SAME"),
]


def _pool_out(xs, k, s, pad):
    if pad == "VALID":
        return (xs[0], (xs[1] - k[1]) // s[1] + 1, (xs[2] - k[2]) // s[2] + 1, xs[3])
    return (xs[0], -(-xs[1] // s[1]), -(-xs[2] // s[2]), xs[3])


def _distinct(dtype, shape, seed):
    """Values without ties (the max is unique in every window), shuffled."""
    n = int(np.prod(shape))
    p = np.random.RandomState(seed).permutation(n)
    if dtype not in FLOATS:
        return (p - (0 if dtype == "uint8" else n // 2)).astype(dtype).reshape(shape)
    return (p * 0.37 - n * 0.1).astype(dtype).reshape(shape)


def _pool(op):
    def cases(dtype):
        out = []
        for xs, k, s, pad in POOLS:
            out.append(Case("%s k=%s s=%s %s" % (xs, k[1:3], s[1:3], pad),
                            lambda tf, x, k=k, s=s, pad=pad: getattr(tf.raw_ops, op)(
                                input=x, ksize=list(k), strides=list(s), padding=pad),
                            [_distinct(dtype, xs, len(out))], grad=[] if xs[0] == 0 else None))
        f = lambda tf, x, **kw: getattr(tf.raw_ops, op)(input=x, **dict(  # noqa: E731
            {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}, **kw))
        if dtype in FLOATS:
            out.append(Case("special", f, [gen(dtype, (1, 4, 4, 2), "special")], grad=[]))
        out.append(Case("window larger than input", f, [gen(dtype, (1, 1, 1, 1))]))
        out.append(Case("batch window", lambda tf, x: f(tf, x, ksize=[2, 2, 2, 1]), [gen(dtype, (2, 3, 3, 1))]))
        out.append(Case("rank 3", f, [gen(dtype, (4, 4, 1))]))
        return out
    return cases


SPECS.append(Spec("MaxPool", _pool("MaxPool"), note=_HALF))
SPECS.append(Spec("AvgPool", _pool("AvgPool"), tol=CONV_TOL))


def _max_pool_grad(op):
    def cases(dtype):
        out = []
        for xs, k, s, pad in POOLS:
            if xs[0] == 0:
                continue  # TensorFlow's oneDNN MaxPoolGrad aborts the process on an empty batch
            x = _distinct(dtype, xs, len(out))
            if op == "MaxPoolGrad":
                g = gen(dtype, _pool_out(xs, k, s, pad), "normal", len(out) + 9)
            else:
                g = gen(dtype, xs, "normal", len(out) + 9)

            def fn(tf, x, g, k=k, s=s, pad=pad):
                kw = dict(ksize=list(k), strides=list(s), padding=pad)
                y = tf.raw_ops.MaxPool(input=x, **kw)
                return getattr(tf.raw_ops, op)(orig_input=x, orig_output=y, grad=g, **kw)
            out.append(Case("%s k=%s s=%s %s" % (xs, k[1:3], s[1:3], pad), fn, [x, g], grad=[1]))
        return out
    return cases


def _avg_pool_grad(dtype):
    out = []
    for xs, k, s, pad in POOLS:
        out.append(Case("%s k=%s s=%s %s" % (xs, k[1:3], s[1:3], pad),
                        lambda tf, sh, g, k=k, s=s, pad=pad: tf.raw_ops.AvgPoolGrad(
                            orig_input_shape=sh, grad=g, ksize=list(k), strides=list(s), padding=pad),
                        [Const(xs, np.int32), gen(dtype, _pool_out(xs, k, s, pad), "normal", len(out))]))
    return out


SPECS.append(Spec("MaxPoolGrad", _max_pool_grad("MaxPoolGrad")))
SPECS.append(Spec("MaxPoolGradGrad", _max_pool_grad("MaxPoolGradGrad")))
SPECS.append(Spec("AvgPoolGrad", _avg_pool_grad, tol=CONV_TOL))

# ---- softmax, cross entropies, L2Loss --------------------------------------------------------


def _softmax(op):
    def cases(dtype):
        f = lambda tf, x: getattr(tf.raw_ops, op)(logits=x)  # noqa: E731
        out = unary_cases(f, dtype, kinds=["normal"], shapes={"vector": (5,), "matrix": (3, 4), "rank3": (2, 3, 4),
                                                                "empty": (0, 4), "one": (3, 1)})
        out.append(Case("large", f, [(gen(dtype, (3, 4)) * 1000).astype(dtype)]))
        out.append(Case("extreme", f, [gen(dtype, (4, 4), "extreme")], grad=[]))
        rows = np.array([[1.0, np.inf, 2.0], [np.nan, 1.0, 0.0], [-np.inf, 1.0, 2.0], [-np.inf, -np.inf, -np.inf],
                         [np.inf, np.inf, 0.0]], dtype)
        out.append(Case("special rows", f, [rows], grad=[]))
        out.append(Case("scalar", f, [gen(dtype, ())]))
        return out
    return cases


SPECS.append(Spec("Softmax", _softmax("Softmax")))
SPECS.append(Spec("LogSoftmax", _softmax("LogSoftmax")))


def _labels(dtype, shape, seed):
    p = np.random.RandomState(seed).rand(*shape) + 0.05
    return (p / p.sum(-1, keepdims=True)).astype(dtype)


def _xent(dtype):
    # The loss alone (the gradient of both inputs), the backprop alone (the gradient of the logits),
    # and both (the labels' gradient through the backprop differs on purpose: KNOWN).
    f = lambda tf, x, y: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=y)[0]  # noqa: E731
    fb = lambda tf, x, y: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=y)[1]  # noqa: E731
    both = lambda tf, x, y: list(tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=y))  # noqa: E731
    out = []
    for shape in [(3, 4), (2, 1)]:
        out.append(Case("backprop %s" % (shape,), fb, [gen(dtype, shape, "normal", 20 + len(out)),
                                                      _labels(dtype, shape, len(out))], grad=[0]))
        out.append(Case("both outputs %s" % (shape,), both, [gen(dtype, shape, "normal", 30 + len(out)),
                                                            _labels(dtype, shape, len(out))]))
    for shape in [(3, 4), (1, 1), (0, 4), (5, 2)]:
        out.append(Case(str(shape), f, [gen(dtype, shape, "normal", len(out)), _labels(dtype, shape, len(out))]))
    out.append(Case("broadcast labels", both, [gen(dtype, (3, 4)), _labels(dtype, (1, 4), 3)], grad=[0]))
    # broadcast logits: TensorFlow's gradient keeps the broadcast shape (not compared)
    out.append(Case("broadcast logits", both, [gen(dtype, (1, 4)), _labels(dtype, (3, 4), 8)], grad=[]))
    out.append(Case("broadcast both", both, [gen(dtype, (3, 1)), _labels(dtype, (1, 4), 9)], grad=[]))
    out.append(Case("large logits", f, [(gen(dtype, (3, 4)) * 500).astype(dtype), _labels(dtype, (3, 4), 4)]))
    out.append(Case("one-hot", f, [gen(dtype, (3, 4)), np.eye(4, dtype=dtype)[[0, 3, 1]]]))
    special = [np.array([[1.0, np.inf, 0.0], [np.nan, 0.0, 1.0], [-np.inf, 0.0, 1.0], [-np.inf, -np.inf, -np.inf]],
                        dtype), _labels(dtype, (4, 3), 5)]
    out.append(Case("special", both, special, grad=[]))
    out.append(Case("shapes differ", f, [gen(dtype, (3, 4)), _labels(dtype, (3, 5), 6)]))
    out.append(Case("rank 1", f, [gen(dtype, (4,)), _labels(dtype, (4,), 7)]))
    return out


def _sparse_xent(dtype):
    out = []
    for lt in (np.int32, np.int64):
        f = lambda tf, x, y: tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=x, labels=y)  # noqa: E731
        out.append(Case("%s (3, 4)" % np.dtype(lt).name, f, [gen(dtype, (3, 4)), np.array([0, 3, 1], lt)]))
        out.append(Case("%s (0, 4)" % np.dtype(lt).name, f, [gen(dtype, (0, 4)), np.zeros((0,), lt)]))
        out.append(Case("%s (2, 1)" % np.dtype(lt).name, f, [gen(dtype, (2, 1)), np.array([0, 0], lt)]))
        out.append(Case("%s large" % np.dtype(lt).name, f,
                        [(gen(dtype, (3, 4)) * 500).astype(dtype), np.array([2, 0, 3], lt)]))
        out.append(Case("%s label out of range" % np.dtype(lt).name, f,
                        [gen(dtype, (3, 4)), np.array([0, 4, 1], lt)], grad=[]))
        out.append(Case("%s negative label" % np.dtype(lt).name, f,
                        [gen(dtype, (3, 4)), np.array([0, -1, 1], lt)], grad=[]))
        out.append(Case("%s labels shape wrong" % np.dtype(lt).name, f, [gen(dtype, (3, 4)), np.array([0, 1], lt)]))
    return out


SPECS.append(Spec("SoftmaxCrossEntropyWithLogits", _xent))
SPECS.append(Spec("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent))


def _l2loss(dtype):
    f = lambda tf, x: tf.raw_ops.L2Loss(t=x)  # noqa: E731
    return unary_cases(f, dtype, kinds=["normal", "special"], shapes=ACT_SHAPES) + [
        Case("large", f, [np.array([1e20, 3e19], dtype)])]


SPECS.append(Spec("L2Loss", _l2loss))

# ---- fused batch norm ------------------------------------------------------------------------

BN_TOL = {"float32": (1e-4, 1e-5)}
BN_GRAD_TOL = {"float32": (1e-3, 1e-4)}


def _bn_inputs(shape, df, seed):
    c = shape[3] if df == "NHWC" else shape[1]
    r = np.random.RandomState(seed)
    x = (r.randn(*shape) * 2 + 0.5).astype(np.float32)
    return [x, (r.rand(c) + 0.5).astype(np.float32), r.randn(c).astype(np.float32),
            r.randn(c).astype(np.float32), (r.rand(c) + 0.5).astype(np.float32)]


def _fused_bn(op):
    def cases(dtype):
        out = []
        for shape, df in [((2, 3, 4, 3), "NHWC"), ((2, 3, 3, 4), "NCHW"), ((1, 1, 1, 2), "NHWC"),
                          ((4, 2, 2, 1), "NHWC")]:
            for training in (True, False):
                for eaf in ((1.0, 0.5) if training else (1.0,)):
                    def fn(tf, x, s, o, m, v, df=df, training=training, eaf=eaf):
                        if not training or eaf != 1.0:
                            mean, var = m, v
                        else:  # TensorFlow's Python layer passes empty mean/variance when training
                            mean = var = tf.constant([], tf.float32)
                        res = getattr(tf.raw_ops, op)(x=x, scale=s, offset=o, mean=mean, variance=var,
                                                      epsilon=0.001, data_format=df, is_training=training,
                                                      exponential_avg_factor=eaf)
                        # reserve spaces are implementation-defined (TensorFlow's CPU kernel keeps
                        # the batch mean and variance there); y, batch_mean, batch_variance compared
                        return list(res[:3])
                    out.append(Case("%s %s training=%s avg=%s" % (shape, df, training, eaf), fn,
                                    _bn_inputs(shape, df, len(out)), grad=[0, 1, 2]))
        bad = _bn_inputs((2, 3, 4, 3), "NHWC", 9)
        bad[1] = bad[1][:2]
        out.append(Case("scale size wrong", lambda tf, x, s, o, m, v: list(getattr(tf.raw_ops, op)(
            x=x, scale=s, offset=o, mean=m, variance=v, is_training=False)[:3]), bad, grad=[]))
        rank3 = _bn_inputs((2, 3, 4, 3), "NHWC", 3)
        rank3[0] = rank3[0][0]
        out.append(Case("rank 3", lambda tf, x, s, o, m, v: list(getattr(tf.raw_ops, op)(
            x=x, scale=s, offset=o, mean=m, variance=v, is_training=False)[:3]), rank3, grad=[]))
        return out
    return cases


def _fused_bn_grad(op, fwd):
    def cases(dtype):
        out = []
        for shape, df in [((2, 3, 4, 3), "NHWC"), ((2, 3, 3, 4), "NCHW"), ((4, 2, 2, 1), "NHWC")]:
            for training in (True, False):
                def fn(tf, dy, x, s, o, m, v, df=df, training=training):
                    kw = dict(epsilon=0.001, data_format=df, is_training=training)
                    if training:
                        empty = tf.constant([], tf.float32)
                        res = getattr(tf.raw_ops, fwd)(x=x, scale=s, offset=o, mean=empty, variance=empty, **kw)
                        r1, r2 = res[3], res[4]
                    else:
                        r1, r2 = m, v
                    extra = {}
                    if op == "FusedBatchNormGradV3":
                        extra["reserve_space_3"] = res[5] if training else tf.constant([], tf.float32)
                    g = getattr(tf.raw_ops, op)(y_backprop=dy, x=x, scale=s, reserve_space_1=r1,
                                                reserve_space_2=r2, **extra, **kw)
                    return list(g[:3])
                ins = _bn_inputs(shape, df, len(out))
                out.append(Case("%s %s training=%s" % (shape, df, training), fn,
                                [gen("float32", shape, "normal", len(out) + 5)] + ins, grad=[]))
        return out
    return cases


SPECS.append(Spec("FusedBatchNorm", _fused_bn("FusedBatchNorm"), tol=BN_TOL, grad_tol=BN_GRAD_TOL))
SPECS.append(Spec("FusedBatchNormV2", _fused_bn("FusedBatchNormV2"), tol=BN_TOL, grad_tol=BN_GRAD_TOL))
SPECS.append(Spec("FusedBatchNormV3", _fused_bn("FusedBatchNormV3"), tol=BN_TOL, grad_tol=BN_GRAD_TOL))
SPECS.append(Spec("FusedBatchNormGrad", _fused_bn_grad("FusedBatchNormGrad", "FusedBatchNorm"), tol=BN_GRAD_TOL,
                  note="reserve spaces fed from the forward op; the gradient of the gradient is not compared"))
SPECS.append(Spec("FusedBatchNormGradV2", _fused_bn_grad("FusedBatchNormGradV2", "FusedBatchNormV2"),
                  tol=BN_GRAD_TOL))
SPECS.append(Spec("FusedBatchNormGradV3", _fused_bn_grad("FusedBatchNormGradV3", "FusedBatchNormV3"),
                  tol=BN_GRAD_TOL))

# ---- image resizing --------------------------------------------------------------------------

RESIZE_MODES = [(False, False), (True, False), (False, True)]
RESIZES = [((1, 3, 4, 2), (6, 8)), ((2, 5, 5, 1), (2, 3)), ((1, 4, 4, 3), (4, 4)), ((1, 1, 1, 1), (3, 2)),
           ((1, 6, 3, 1), (4, 5))]


def _image(dtype, shape, seed):
    if dtype in FLOATS:
        return gen(dtype, shape, "normal", seed)
    return np.random.RandomState(seed).randint(0, 100, size=shape).astype(dtype)


def _resize(op):
    def cases(dtype):
        out = []
        f = lambda tf, x, s, ac=False, hp=False: getattr(tf.raw_ops, op)(  # noqa: E731
            images=x, size=s, align_corners=ac, half_pixel_centers=hp)
        for shape, size in RESIZES:
            for ac, hp in RESIZE_MODES:
                out.append(Case("%s to %s align_corners=%s half_pixel=%s" % (shape, size, ac, hp),
                                lambda tf, x, s, ac=ac, hp=hp: f(tf, x, s, ac, hp),
                                [_image(dtype, shape, len(out)), Const(size, np.int32)]))
        out.append(Case("fed size", f, [_image(dtype, (1, 3, 3, 1), 1), np.array([5, 2], np.int32)]))
        out.append(Case("empty batch", f, [_image(dtype, (0, 3, 3, 1), 2), Const((4, 4), np.int32)]))
        out.append(Case("both modes", lambda tf, x, s: f(tf, x, s, True, True),
                        [_image(dtype, (1, 3, 3, 1), 3), Const((4, 4), np.int32)]))
        out.append(Case("zero size", f, [_image(dtype, (1, 3, 3, 1), 4), np.array([0, 2], np.int32)]))
        out.append(Case("negative size", f, [_image(dtype, (1, 3, 3, 1), 4), np.array([-1, 2], np.int32)]))
        out.append(Case("rank 3", f, [_image(dtype, (3, 3, 1), 5), Const((4, 4), np.int32)]))
        if dtype in FLOATS:
            out.append(Case("special", f, [gen(dtype, (1, 3, 3, 1), "special"), Const((5, 5), np.int32)], grad=[]))
        return out
    return cases


def _resize_bilinear_grad(dtype):
    out = []
    for shape, size in RESIZES:
        for ac, hp in RESIZE_MODES:
            out.append(Case("%s from %s align_corners=%s half_pixel=%s" % (shape, size, ac, hp),
                            lambda tf, g, x, ac=ac, hp=hp: tf.raw_ops.ResizeBilinearGrad(
                                grads=g, original_image=x, align_corners=ac, half_pixel_centers=hp),
                            [gen("float32", (shape[0],) + size + (shape[3],), "normal", len(out)),
                             gen(dtype, shape, "normal", len(out) + 9)], grad=[0]))
    return out


def _resize_nearest_grad(dtype):
    out = []
    for shape, size in RESIZES:
        for ac, hp in RESIZE_MODES:
            out.append(Case("%s from %s align_corners=%s half_pixel=%s" % (shape, size, ac, hp),
                            lambda tf, g, s, ac=ac, hp=hp: tf.raw_ops.ResizeNearestNeighborGrad(
                                grads=g, size=s, align_corners=ac, half_pixel_centers=hp),
                            [_image(dtype, (shape[0],) + size + (shape[3],), len(out)),
                             Const(shape[1:3], np.int32)]))
    return out


SPECS.append(Spec("ResizeBilinear", _resize("ResizeBilinear"), tol=CONV_TOL,
                  grad_tol={"float32": (2e-4, 1e-4), "float64": (1e-6, 1e-7)},
                  note="gradients: ResizeBilinearGrad takes float32 grads (float64 compared at float32 precision)"))
SPECS.append(Spec("ResizeNearestNeighbor", _resize("ResizeNearestNeighbor")))
SPECS.append(Spec("ResizeBilinearGrad", _resize_bilinear_grad, tol={"float32": (1e-4, 1e-5), "float64": (1e-6, 1e-7)},
                  note="float64 output from float32 grads: TensorFlow weighs in float32 (float32 tolerance)"))
SPECS.append(Spec("ResizeNearestNeighborGrad", _resize_nearest_grad))

EXCLUDED = {}
_TF_DILATED = ("TensorFlow's CPU kernels ignore or reject dilations here (float64 Conv2D backprops: "
               "'Current CPU implementations do not yet support dilation rates larger than 1'; DepthwiseConv2dNative: "
               "float64 unimplemented, and its float32 backprops ignore the dilation, giving wrong values); "
               "dflow computes dilated convolutions and their gradients (checked against finite differences)")
_TF_ONEDNN_EMPTY = ("TensorFlow's oneDNN kernel returns an empty output of the input's shape for an empty batch "
                    "(its own shape function says [0, h, w, out_depth]); dflow returns [0, h, w, out_depth]")
_EARLY = ("strides or windows in the batch/depth dimensions: dflow rejects them when the graph is built "
          "(InvalidArgument, a ValueError in Python), TensorFlow when the kernel runs (Unimplemented)")
_ONEDNN_SOFTMAX = ("a row holding +inf or NaN: TensorFlow's float32 Softmax (oneDNN) gives NaN at that element "
                   "and 0 elsewhere; its float64 kernel (Eigen), its constant folding and its LogSoftmax give NaN "
                   "across the row, as dflow does for both dtypes")
KNOWN = {
    ("Conv2D", r"^float64 .* d=\(2, 2\): "): _TF_DILATED,
    ("Conv2D", r"\(0, 4, 4, 2\)"): _TF_ONEDNN_EMPTY,
    ("Conv2D", r"batch stride"): _EARLY,
    ("Conv2D", r"grouped"): ("grouped convolution (input depth a multiple of the filter's in_depth) is not "
                             "implemented in dflow: rejected when the graph is built"),
    ("DepthwiseConv2dNative", r"d=\(2, 2\)"): _TF_DILATED,
    ("DepthwiseConv2dNativeBackpropInput", r"d=\(2, 2\)"): _TF_DILATED,
    ("DepthwiseConv2dNativeBackpropFilter", r"d=\(2, 2\)"): _TF_DILATED,
    ("Conv2DBackpropInput", r"^float64 .* d=\(2, 2\): "): _TF_DILATED,
    ("Conv2DBackpropFilter", r"^float64 .* d=\(2, 2\): "): _TF_DILATED,
    ("Conv2DBackpropInput", r"^float32 out_backprop shape wrong: .*AbortedError"): (
        "an out_backprop of the wrong shape: TensorFlow's float32 (oneDNN) kernel fails with Aborted (a oneDNN "
        "exception); dflow raises InvalidArgument, as TensorFlow's float64 kernel does"),
    ("DepthwiseConv2dNative", r"\(0, 4, 4, 2\)"): _TF_ONEDNN_EMPTY,
    ("Conv2D", r"^float32 .*\(1, 1, 2, 0\)"): (
        "a filter with no output channels: TensorFlow's float32 (oneDNN) kernel rejects it, its float64 kernel "
        "returns the empty output; dflow returns the empty output for both"),
    ("Softmax", r"^float32 special rows"): _ONEDNN_SOFTMAX,
    ("MaxPool", r"batch window"): _EARLY,
    ("SoftmaxCrossEntropyWithLogits", r"both outputs .*gradient\[1\]"): (
        "the gradient with respect to labels through the backprop output (backprop = softmax - labels): "
        "TensorFlow's gradient function leaves that term out, dflow's includes it (-incoming gradient)"),
}

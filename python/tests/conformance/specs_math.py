"""Differential specs: element-wise math, comparisons, logical ops, reductions, arg min/max, cast,
select, matmul and matrix ops, AddN, BroadcastGradientArgs, Bucketize, segment sums, Range.
(Format: see diffsuite's docstring.)"""
import numpy as np

from diffsuite import FLOATS, PAIRS, SHAPES, Case, Const, Spec, binary_cases, gen, unary_cases

SPECS = []


# ---- element-wise unary ----------------------------------------------------------------------

# op → (input argument name, input kinds for floats or None for the default set)
UNARY = {
    "Abs": None, "Neg": None, "Sign": None, "Square": None, "Floor": None, "Ceil": None, "Round": None,
    "Exp": None, "Sigmoid": None, "Tanh": None, "Reciprocal": None,
    "Sqrt": ["positive", "special"], "Rsqrt": ["positive", "special"], "Log": ["positive", "special"],
    "Log1p": ["unit", "positive", "special"],
}


def _unary(op, kinds):
    def cases(dtype):
        k = kinds if dtype in FLOATS else None
        if op in ("Sqrt", "Rsqrt", "Log", "Log1p") and dtype in FLOATS:
            k = kinds
        return unary_cases(lambda tf, x: getattr(tf.raw_ops, op)(x=x), dtype, kinds=k)
    return cases


for _op, _kinds in UNARY.items():
    SPECS.append(Spec(_op, _unary(_op, _kinds)))

SPECS.append(Spec("LogicalNot", lambda dt: unary_cases(lambda tf, x: tf.raw_ops.LogicalNot(x=x), "bool",
                                                       kinds=["normal"]), dtypes=["bool"]))

# ---- element-wise binary with broadcasting ---------------------------------------------------

BINARY = ["Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "FloorDiv", "FloorMod", "Pow", "Maximum", "Minimum",
          "SquaredDifference", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"]


def _binary(op):
    def cases(dtype):
        fn = lambda tf, x, y: getattr(tf.raw_ops, op)(x=x, y=y)  # noqa: E731
        if dtype == "string":
            return binary_cases(fn, dtype, kinds=["normal"])
        if dtype in FLOATS:
            out = binary_cases(fn, dtype)
            if op == "Pow":
                out += binary_cases(fn, dtype, kinds=["positive"], label="positive base ")
            return out
        if op in ("Div", "FloorDiv", "FloorMod"):
            out = binary_cases(fn, dtype, kinds=["normal", "extreme"], second="positive")
            # Division by zero: TensorFlow's integer kernels fail the run.
            out.append(Case("by zero", fn, [np.array([1, 2], dtype), np.array([1, 0], dtype)]))
            return out
        if op == "Pow":
            out = []
            for sa, sb in PAIRS:
                x = gen(dtype, sa, "small", len(out))
                y = gen(dtype, sb, "small", len(out) + 7)
                out.append(Case("%s, %s small" % (sa, sb), fn, [x, y]))
            if dtype != "uint8":
                out.append(Case("negative exponent", fn, [np.array([2, 3], dtype), np.array([1, -1], dtype)]))
            return out
        return binary_cases(fn, dtype)
    return cases


for _op in BINARY:
    SPECS.append(Spec(_op, _binary(_op)))

for _op in ("LogicalAnd", "LogicalOr"):
    SPECS.append(Spec(_op, (lambda op: lambda dt: binary_cases(
        lambda tf, x, y: getattr(tf.raw_ops, op)(x=x, y=y), "bool", kinds=["normal"]))(_op), dtypes=["bool"]))

EXCLUDED = {}

# Intended differences: (op, regex over "<dtype> <case label>") → why dflow differs on purpose.
KNOWN = {
    ("Round", r"^int"): "TensorFlow 2.21's Round kernel returns zeros for integer tensors (its tf.round returns "
                        "an integer input unchanged without running the kernel); dflow's kernel returns the input",
}

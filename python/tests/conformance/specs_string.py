"""Differential specs: string ops (AsString, StringJoin, StringToHashBucketFast, ShardedFilename),
DecodeCSV and Assert. (Format: see diffsuite's docstring.)"""
import numpy as np

from diffsuite import SHAPES, Case, Const, Spec, gen

SPECS = []


def _as_string(dtype):
    out = []
    f = lambda tf, x, **kw: tf.raw_ops.AsString(input=x, **kw)  # noqa: E731
    for sname, shape in SHAPES.items():
        out.append(Case(sname, f, [gen(dtype, shape, "normal", len(out))]))
    out.append(Case("extreme", f, [gen(dtype, (6,), "extreme")]))
    if dtype != "bool":
        for kw in ({"width": 5}, {"width": 5, "fill": "0"}, {"width": 1}, {"width": 4, "fill": " "}):
            out.append(Case("attrs %s" % kw, lambda tf, x, kw=kw: f(tf, x, **kw), [gen(dtype, (5,), "normal", 3)]))
        out.append(Case("fill too long", lambda tf, x: f(tf, x, fill="ab"), [gen(dtype, (2,))]))
        out.append(Case("precision on integers", lambda tf, x: f(tf, x, precision=2), [gen(dtype, (2,))]))
    return out


SPECS.append(Spec("AsString", _as_string))


def _string_join(dtype):
    out = []
    f = lambda tf, *xs, sep="": tf.raw_ops.StringJoin(inputs=list(xs), separator=sep)  # noqa: E731
    for shapes in ([(3,), (3,)], [(), (3,)], [(2, 2), ()], [(), ()], [(0,), ()], [(3,)], [(3,), (2,)],
                   [(2, 3), (2, 3), (2, 3)]):
        xs = [gen("string", s, "normal", len(out) + i) for i, s in enumerate(shapes)]
        for sep in ("", ", ", "\x00"):
            out.append(Case("%s sep=%r" % (shapes, sep), lambda tf, *xs, sep=sep: f(tf, *xs, sep=sep), xs))
    return out


SPECS.append(Spec("StringJoin", _string_join, dtypes=[None]))


def _hash_bucket(dtype):
    out = []
    for n in (1, 7, 1 << 20):
        for sname, shape in SHAPES.items():
            out.append(Case("%s buckets=%d" % (sname, n), lambda tf, x, n=n: tf.raw_ops.StringToHashBucketFast(
                input=x, num_buckets=n), [gen("string", shape, "normal", len(out))]))
    return out


SPECS.append(Spec("StringToHashBucketFast", _hash_bucket, dtypes=[None]))


def _sharded_filename(dtype):
    f = lambda tf, b, s, n: tf.raw_ops.ShardedFilename(basename=b, shard=s, num_shards=n)  # noqa: E731
    out = []
    for base, shard, num in [(b"/tmp/model.ckpt", 0, 1), (b"x", 3, 10), (b"", 99999, 100000), (b"a", 123456, 7),
                             (b"a", -1, 2)]:
        out.append(Case("%r %d of %d" % (base, shard, num), f, [np.array(base, dtype=object), np.array(shard, np.int32),
                                                                np.array(num, np.int32)]))
    return out


SPECS.append(Spec("ShardedFilename", _sharded_filename, dtypes=[None]))


def _decode_csv(dtype):
    out = []
    f = lambda tf, r, *d, **kw: tf.raw_ops.DecodeCSV(records=r, record_defaults=list(d), **kw)  # noqa: E731
    defaults = [np.array([0], np.int32), np.array([1.5], np.float32), np.array([b"z"], dtype=object),
                np.array([7], np.int64), np.array([0.25], np.float64)]
    for recs in ([b"1,2.5,a,4,5.5", b"-3,,\"b,c\",,1e3"], [b",,,,"], [b"1,2,3,4,5"], []):
        recs = np.array(recs, dtype=object)
        out.append(Case("%s" % list(recs), f, [recs] + [Const(d) for d in defaults]))
    out.append(Case("delim ;", lambda tf, r, *d: f(tf, r, *d, field_delim=";"),
                    [np.array([b"1;2;x;4;5"], dtype=object)] + [Const(d) for d in defaults]))
    out.append(Case("na_value", lambda tf, r, *d: f(tf, r, *d, na_value="NA"),
                    [np.array([b"NA,2,NA,4,NA"], dtype=object)] + [Const(d) for d in defaults]))
    out.append(Case("select_cols", lambda tf, r, a, b: f(tf, r, a, b, select_cols=[0, 2]),
                    [np.array([b"1,skip,3"], dtype=object), Const(np.array([0], np.int32)),
                     Const(np.array([0.5], np.float32))]))
    out.append(Case("no quote delim", lambda tf, r, a: f(tf, r, a, use_quote_delim=False),
                    [np.array([b'"x"'], dtype=object), Const(np.array([b""], dtype=object))]))
    for bad in (b"1,2", b"x,2.5,a,4,5.5", b"1,2,3,4,5,6", b"99999999999,1,a,1,1", b"\"unterminated,1,a,1,1"):
        out.append(Case("bad %r" % bad, f, [np.array([bad], dtype=object)] + [Const(d) for d in defaults]))
    out.append(Case("required field missing", f, [np.array([b",1"], dtype=object), Const(np.zeros([0], np.int32)),
                                                  Const(np.array([1], np.int32))]))
    return out


SPECS.append(Spec("DecodeCSV", _decode_csv, dtypes=[None]))


def _assert(dtype):
    f = lambda tf, c, *d: tf.raw_ops.Assert(condition=c, data=list(d), summarize=3)  # noqa: E731
    return [Case("true", f, [np.array(True), np.array([1, 2, 3], np.int32)]),
            Case("false", f, [np.array(False), np.array([1.5], np.float32), np.array(b"msg", dtype=object)]),
            Case("condition not scalar", f, [np.array([True, True]), np.array([1], np.int32)])]


SPECS.append(Spec("Assert", _assert, dtypes=[None]))


PATTERNS = ["a", "a.*", "[a-z]+", "", "hello world", "(x|y)?", ".*\\x00.*", "\\w+ \\w+", "bad(", "d.ow"]


def _regex(op):
    def cases(dtype):
        out = []
        for pat in PATTERNS:
            x = np.array([b"", b"a", b"bc", b"dflow", b"hello world", b"aaa", b"\x00x"], dtype=object)
            if op == "RegexFullMatch":
                out.append(Case("pattern %r" % pat, lambda tf, x, p: tf.raw_ops.RegexFullMatch(input=x, pattern=p),
                                [x, np.array(pat.encode(), dtype=object)]))
            else:
                out.append(Case("pattern %r" % pat, lambda tf, x, p=pat: tf.raw_ops.StaticRegexFullMatch(
                    input=x, pattern=p), [x]))
        out.append(Case("scalar", lambda tf, x: getattr(tf.raw_ops, op)(input=x, pattern="a+") if op != "RegexFullMatch"
                        else tf.raw_ops.RegexFullMatch(input=x, pattern="a+"), [np.array(b"aa", dtype=object)]))
        return out
    return cases


SPECS.append(Spec("RegexFullMatch", _regex("RegexFullMatch"), dtypes=[None]))
SPECS.append(Spec("StaticRegexFullMatch", _regex("StaticRegexFullMatch"), dtypes=[None]))

"""tf.compat: dflow is TensorFlow 1.x, so `dflow.compat.v1` is `dflow` itself."""
import sys

import dflow as v1  # noqa: F401

sys.modules[__name__ + ".v1"] = v1


def as_bytes(bytes_or_text, encoding="utf-8"):
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


def as_text(bytes_or_text, encoding="utf-8"):
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


as_str = as_text
as_str_any = lambda v: as_text(v) if isinstance(v, (bytes, str)) else str(v)  # noqa: E731

"""TensorFlow's DType objects (tf.float32, ...) over dflow's dtype enum."""
import numpy as np

from dflow import _dflow


class DType:
    """A tensor element type: `tf.float32`, `tf.int32`, ... (and `_ref` variants for variables)."""

    __slots__ = ("_enum",)

    def __init__(self, enum):
        self._enum = int(enum)

    @property
    def as_datatype_enum(self):
        return self._enum

    @property
    def name(self):
        return _NAMES[self._enum]

    @property
    def is_ref_dtype(self):
        return self._enum > 100

    @property
    def base_dtype(self):
        return _BY_ENUM[self._enum - 100] if self._enum > 100 else self

    @property
    def _as_ref(self):
        return self if self._enum > 100 else _BY_ENUM[self._enum + 100]

    @property
    def real_dtype(self):
        return self.base_dtype

    @property
    def as_numpy_dtype(self):
        return _NUMPY[self.base_dtype._enum]

    @property
    def is_floating(self):
        return self.base_dtype._enum in (1, 2)

    @property
    def is_integer(self):
        return self.base_dtype._enum in (3, 4, 9)

    @property
    def is_bool(self):
        return self.base_dtype._enum == 10

    @property
    def is_unsigned(self):
        return self.base_dtype._enum == 4

    @property
    def is_numeric(self):
        return self.base_dtype._enum in (1, 2, 3, 4, 9)

    @property
    def is_complex(self):
        return False

    @property
    def is_quantized(self):
        return False

    @property
    def size(self):
        return _SIZES.get(self.base_dtype._enum, 1)

    @property
    def min(self):
        b = self.base_dtype
        if b.is_floating:
            return float(np.finfo(b.as_numpy_dtype).min)
        if b.is_integer:
            return int(np.iinfo(b.as_numpy_dtype).min)
        if b.is_bool:
            return False
        raise TypeError("Cannot find minimum value of %s." % self)

    @property
    def max(self):
        b = self.base_dtype
        if b.is_floating:
            return float(np.finfo(b.as_numpy_dtype).max)
        if b.is_integer:
            return int(np.iinfo(b.as_numpy_dtype).max)
        if b.is_bool:
            return True
        raise TypeError("Cannot find maximum value of %s." % self)

    def is_compatible_with(self, other):
        other = as_dtype(other)
        return self._enum in (other._enum, other.base_dtype._enum) or \
            self.base_dtype._enum == other._enum

    def __eq__(self, other):
        if other is None:
            return False
        if isinstance(other, DType):
            return self._enum == other._enum
        try:
            return self._enum == as_dtype(other)._enum
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._enum

    def __reduce__(self):
        return as_dtype, (self.name,)

    def __repr__(self):
        return "tf." + self.name

    def __str__(self):
        return "<dtype: %r>" % self.name


_NAMES = {}
_BY_ENUM = {}
_NUMPY = {
    1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 7: object, 9: np.int64, 10: np.bool_,
    20: object, 21: object,
}
_SIZES = {1: 4, 2: 8, 3: 4, 4: 1, 9: 8, 10: 1}
for _e in (1, 2, 3, 4, 7, 9, 10, 20, 21):
    _NAMES[_e] = _dflow.dtype_name(_e)
    _NAMES[_e + 100] = _NAMES[_e] + "_ref"
    _BY_ENUM[_e] = DType(_e)
    _BY_ENUM[_e + 100] = DType(_e + 100)

float32 = _BY_ENUM[1]
float64 = _BY_ENUM[2]
double = float64
int32 = _BY_ENUM[3]
uint8 = _BY_ENUM[4]
string = _BY_ENUM[7]
int64 = _BY_ENUM[9]
bool = _BY_ENUM[10]  # noqa: A001 - TensorFlow's name
resource = _BY_ENUM[20]
variant = _BY_ENUM[21]
float32_ref = _BY_ENUM[101]
float64_ref = _BY_ENUM[102]
int32_ref = _BY_ENUM[103]
int64_ref = _BY_ENUM[109]

_BY_NAME = {d.name: d for d in _BY_ENUM.values()}
_BY_NAME.update({"float": float32, "double": float64, "str": string})
_FROM_NUMPY = {
    np.dtype(np.float32): float32, np.dtype(np.float64): float64, np.dtype(np.int32): int32,
    np.dtype(np.uint8): uint8, np.dtype(np.int64): int64, np.dtype(np.bool_): bool,
    np.dtype(object): string,
}

_UNSUPPORTED = ("float16", "half", "bfloat16", "int8", "int16", "uint16", "uint32", "uint64",
                "complex64", "complex128", "qint8", "quint8", "qint32")


def as_dtype(type_value):
    """Converts a DType, a name ('float32'), a numpy dtype or a Python type to a DType."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, int) and not isinstance(type_value, type(True)) and type_value in _BY_ENUM:
        return _BY_ENUM[type_value]
    if isinstance(type_value, str):
        d = _BY_NAME.get(type_value)
        if d is not None:
            return d
        if type_value in _UNSUPPORTED:
            raise TypeError("dflow does not support dtype %s (it has float32, float64, int32, "
                            "int64, uint8, bool and string)" % type_value)
    if type_value is float:
        return float32
    if type_value is int:
        return int32
    if type_value is type(True):
        return bool
    if type_value in (str, bytes):
        return string
    try:
        nd = np.dtype(type_value)
    except TypeError:
        nd = None
    if nd is not None:
        if nd.kind in "SU":
            return string
        d = _FROM_NUMPY.get(nd)
        if d is not None:
            return d
        raise TypeError("dflow does not support dtype %s (it has float32, float64, int32, int64, "
                        "uint8, bool and string)" % nd)
    raise TypeError("Cannot convert value %r to a TensorFlow DType." % (type_value,))

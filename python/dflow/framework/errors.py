"""TensorFlow's exception classes (tf.errors.*), raised for dflow's Status codes."""
from dflow import _dflow

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure while running or building ops: TensorFlow's tf.errors.OpError."""

    def __init__(self, node_def, op, message, error_code, *args):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    @property
    def experimental_payloads(self):
        return {}

    def __reduce__(self):
        return type(self), (self._node_def, self._op, self._message)

    def __str__(self):
        return self._message


def _make(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code)
    cls = type(name, (OpError,), {"__init__": __init__, "__doc__": doc})
    return cls


CancelledError = _make("CancelledError", CANCELLED, "The operation or step was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "Unknown error.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT, "An op received an invalid argument.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED, "Permission denied.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED, "Not authenticated.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED, "Resources exhausted.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION, "The system is not in a state to run the op.")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE, "Iterated past the valid range (end of input).")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED, "The operation is not implemented.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "The runtime is unavailable (a task is down).")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")

_CODE_TO_CLASS = {
    CANCELLED: CancelledError, UNKNOWN: UnknownError, INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError, NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError, PERMISSION_DENIED: PermissionDeniedError,
    UNAUTHENTICATED: UnauthenticatedError, RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError, ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError, UNIMPLEMENTED: UnimplementedError, INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError, DATA_LOSS: DataLossError,
}


def exception_type_from_error_code(error_code):
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls):
    for code, c in _CODE_TO_CLASS.items():
        if c is cls:
            return code
    return UNKNOWN


def _from_status(code, message):
    cls = _CODE_TO_CLASS.get(code, UnknownError)
    return cls(None, None, message)


_dflow._set_error_factory(_from_status)


class raise_exception_on_not_ok_status:  # noqa: N801 - TensorFlow's name
    """Kept for scripts that use it as a context manager; dflow raises by itself."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

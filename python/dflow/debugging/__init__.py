"""tf.debugging: assertions (ops that fail the step when a condition does not hold)."""
from dflow.ops.control_flow_ops import (Assert, assert_equal, assert_greater, assert_greater_equal,  # noqa: F401
                                        assert_integer, assert_less, assert_less_equal, assert_negative,
                                        assert_non_negative, assert_non_positive, assert_none_equal,
                                        assert_positive, assert_rank, assert_type)

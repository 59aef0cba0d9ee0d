"""Top-level names of state and training: variables and variable scopes, initializers, random
ops, gradients, control flow, assertions, and the tf.summary, tf.initializers, tf.random and
tf.debugging namespaces."""
from dflow import debugging, initializers, random  # noqa: F401
from dflow.ops.control_flow_ops import (Assert, assert_equal, assert_greater, assert_greater_equal,  # noqa: F401
                                        assert_integer, assert_less, assert_less_equal, assert_negative,
                                        assert_non_negative, assert_non_positive, assert_none_equal,
                                        assert_positive, assert_rank, assert_type, case, cond, group, tuple,
                                        while_loop, with_dependencies)
from dflow.ops.gradients_impl import AggregationMethod, UnconnectedGradients, gradients, hessians  # noqa: F401
from dflow.ops.init_ops import (constant_initializer, glorot_normal_initializer,  # noqa: F401
                                glorot_uniform_initializer, identity_initializer, ones_initializer,
                                orthogonal_initializer, random_normal_initializer, random_uniform_initializer,
                                truncated_normal_initializer, uniform_unit_scaling_initializer,
                                variance_scaling_initializer, zeros_initializer)
from dflow.ops.partitioned_variables import (fixed_size_partitioner, min_max_variable_partitioner,  # noqa: F401
                                              variable_axis_size_partitioner)
from dflow.ops.random_ops import (multinomial, random_crop, random_normal, random_shuffle,  # noqa: F401
                                  random_uniform, truncated_normal)
from dflow.ops.variable_scope import (AUTO_REUSE, VariableScope, get_local_variable, get_variable,  # noqa: F401
                                      get_variable_scope, no_regularizer, variable_op_scope, variable_scope)
from dflow.ops.variables import (Variable, VariableAggregation, VariableSynchronization,  # noqa: F401
                                 all_variables, assert_variables_initialized, assign, assign_add, assign_sub,
                                 count_up_to, global_variables, global_variables_initializer,
                                 initialize_all_variables, initialize_local_variables, initialize_variables,
                                 is_variable_initialized, local_variables, local_variables_initializer,
                                 model_variables, moving_average_variables, report_uninitialized_variables,
                                 scatter_add, scatter_sub, scatter_update, trainable_variables,
                                 variables_initializer)
from dflow import summary  # noqa: F401,E402

"""tf.variable_scope and tf.get_variable: TensorFlow 1.x's variable sharing.

Each graph has a variable store (full name → variable) and a variable-scope store (the current
scope and how often each scope name was opened, for default names). The rules, error messages
and names are TensorFlow's: `get_variable("w")` in `variable_scope("layer")` is "layer/w"; a
second one raises ValueError unless the scope reuses; `reuse=True` on a missing variable raises
ValueError; the default initializer is glorot_uniform for floats and zeros for integers.
"""
import copy
import enum
import functools
import inspect
import threading

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.framework.ops import GraphKeys
from dflow.ops import init_ops
from dflow.ops import variables
from dflow.ops.variables import VariableAggregation, VariableSynchronization


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_):
    """Use this function to prevent regularization of variables."""
    return None


class _VariableStore:
    """Variables by full name, per graph."""

    def __init__(self):
        self._vars = {}
        self._partitioned_vars = {}

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None,
                     validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                     synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError("Passed a custom_getter which is not callable: %s" % custom_getter)
        try:
            dtype = dtype.base_dtype
        except AttributeError:
            pass

        def _true_getter(name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                         trainable=None, collections=None, caching_device=None, partitioner=None,
                         validate_shape=True, use_resource=None, constraint=None,
                         synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
            is_scalar = shape is not None and isinstance(shape, (list, tuple)) and not shape
            if partitioner is not None and not is_scalar:
                if not callable(partitioner):
                    raise ValueError("Partitioner must be callable, but received: %s" % partitioner)
                with ops.name_scope(None):
                    return self._get_partitioned_variable(
                        name=name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                        reuse=reuse, trainable=trainable, collections=collections, caching_device=caching_device,
                        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                        constraint=constraint, synchronization=synchronization, aggregation=aggregation)
            if reuse is True and partitioner is None and name in self._partitioned_vars:
                return self._get_partitioned_variable(
                    name=name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                    reuse=reuse, trainable=trainable, collections=collections, caching_device=caching_device,
                    partitioner=None, validate_shape=validate_shape, use_resource=use_resource,
                    constraint=constraint, synchronization=synchronization, aggregation=aggregation)
            if "%s/part_0" % name in self._vars:
                raise ValueError("No partitioner was provided, but a partitioned version of the variable was "
                                 "found: %s/part_0. Perhaps a variable of the same name was already created "
                                 "with partitioning?" % name)
            return self._get_single_variable(
                name=name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                reuse=reuse, trainable=trainable, collections=collections, caching_device=caching_device,
                validate_shape=validate_shape, use_resource=use_resource, constraint=constraint,
                synchronization=synchronization, aggregation=aggregation)

        trainable = variables.trainable_for_synchronization(synchronization, trainable)
        if custom_getter is not None:
            kwargs = {"getter": _true_getter, "name": name, "shape": shape, "dtype": dtype,
                      "initializer": initializer, "regularizer": regularizer, "reuse": reuse,
                      "trainable": trainable, "collections": collections, "caching_device": caching_device,
                      "partitioner": partitioner, "validate_shape": validate_shape, "use_resource": use_resource,
                      "synchronization": synchronization, "aggregation": aggregation}
            try:
                params = inspect.signature(custom_getter).parameters
                takes_constraint = "constraint" in params or any(
                    p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())
            except (TypeError, ValueError):
                takes_constraint = True
            if takes_constraint:
                kwargs["constraint"] = constraint
            return custom_getter(**kwargs)
        return _true_getter(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                            reuse=reuse, trainable=trainable, collections=collections,
                            caching_device=caching_device, partitioner=partitioner,
                            validate_shape=validate_shape, use_resource=use_resource, constraint=constraint,
                            synchronization=synchronization, aggregation=aggregation)

    def _get_partitioned_variable(self, name, partitioner, shape=None, dtype=dtypes.float32, initializer=None,
                                  regularizer=None, reuse=None, trainable=None, collections=None,
                                  caching_device=None, validate_shape=True, use_resource=None, constraint=None,
                                  synchronization=VariableSynchronization.AUTO,
                                  aggregation=VariableAggregation.NONE):
        from dflow.ops import array_ops
        from dflow.ops import partitioned_variables as pv
        initializing_from_value = initializer is not None and isinstance(initializer, ops.Tensor)
        if name in self._vars:
            raise ValueError("A partitioner was provided, but an unpartitioned version of the variable was found: "
                             "%s. Perhaps a variable of the same name was already created without partitioning?"
                             % name)
        shape = tensor_shape.as_shape(shape)
        if initializing_from_value:
            shape = shape.merge_with(initializer.get_shape())
        dtype = dtypes.as_dtype(dtype)
        partitions = None
        if not reuse or partitioner:
            partitions = pv.call_partitioner(partitioner, shape, dtype)
        if name in self._partitioned_vars:
            if reuse is False:
                raise ValueError("Partitioned variable with name %s already exists. Did you mean to set reuse=True "
                                 "or reuse=tf.AUTO_REUSE in VarScope?" % name)
            existing = self._partitioned_vars[name]
            if not shape.is_compatible_with(existing.get_shape()):
                raise ValueError("Trying to reuse partitioned variable %s, but specified shape %s and found shape %s."
                                 % (name, shape, existing.get_shape()))
            if not dtype.is_compatible_with(existing.dtype):
                raise ValueError("Trying to reuse partitioned variable %s, but specified dtype %s and found dtype "
                                 "%s." % (name, dtype.name, existing.dtype.name))
            if partitions is not None and existing._get_partitions() != partitions:
                raise ValueError("Trying to reuse partitioned variable %s, but specified partitions %s and found "
                                 "partitions %s." % (name, partitions, existing._get_partitions()))
            return existing
        if reuse is True:
            raise ValueError("PartitionedVariable %s does not exist, or was not created with tf.get_variable(). Did "
                             "you mean to set reuse=False or reuse=tf.AUTO_REUSE in VarScope?" % name)
        slice_dim, num_slices = pv.slice_dim_and_num_slices(partitions)
        if "%s/part_0" % name in self._vars:
            if "%s/part_%d" % (name, num_slices - 1) not in self._vars:
                raise ValueError("Partitioner returned a different partitioning than what was already found.  "
                                 "Partitioner returned %d shards, and shard %s/part_0 was found, but %s/part_%d was "
                                 "not." % (num_slices, name, name, num_slices - 1))
            if "%s/part_%d" % (name, num_slices) in self._vars:
                raise ValueError("Partitioner returned a different partitioning than what was already found.  "
                                 "Partitioner returned %d shards, and shard %s/part_0 was found, but so was the "
                                 "extra shard %s/part_%d." % (num_slices, name, name, num_slices))
        vs = []
        for i, (var_offset, var_shape) in enumerate(pv.iter_slices(shape.as_list(), num_slices, slice_dim)):
            partition_info = pv._PartitionInfo(full_shape=shape.as_list(), var_offset=var_offset)
            var_full_name = "%s/part_%d" % (name, i)
            with ops.name_scope(var_full_name + "/PartitionedInitializer"):
                if initializer is None:
                    init, from_value = self._get_default_initializer(name=name, shape=shape, dtype=dtype)
                    init_shape = None if from_value else var_shape
                elif callable(initializer):
                    init = initializer
                    init_shape = var_shape
                elif isinstance(initializer, ops.Tensor):
                    init = array_ops.slice(initializer, var_offset, var_shape)
                    dtype = init.dtype.base_dtype
                    init_shape = None
                else:
                    init = ops.convert_to_tensor(initializer, dtype=dtype)
                    init = array_ops.slice(init, var_offset, var_shape)
                    init_shape = None
            with ops.name_scope(None):
                var = self._get_single_variable(
                    name=var_full_name, shape=init_shape, dtype=dtype, initializer=init,
                    partition_info=partition_info, regularizer=regularizer, reuse=reuse, trainable=trainable,
                    collections=collections, caching_device=caching_device, validate_shape=validate_shape,
                    use_resource=use_resource, constraint=constraint, synchronization=synchronization,
                    aggregation=aggregation)
            pv.register_part(var, name, shape.as_list(), var_offset)
            vs.append(var)
        result = pv.PartitionedVariable(name=name, shape=shape, dtype=dtype, variable_list=vs, partitions=partitions)
        self._partitioned_vars[name] = result
        return result

    def _get_single_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None,
                             partition_info=None, reuse=None, trainable=None, collections=None,
                             caching_device=None, validate_shape=True, use_resource=None, constraint=None,
                             synchronization=VariableSynchronization.AUTO,
                             aggregation=VariableAggregation.NONE):
        initializing_from_value = initializer is not None and not callable(initializer)
        if shape is not None and initializing_from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype)
        if shape is not None:
            shape = tensor_shape.as_shape(shape)

        if name in self._vars:
            if reuse is False:
                raise ValueError("Variable %s already exists, disallowed. Did you mean to set reuse=True or "
                                 "reuse=tf.AUTO_REUSE in VarScope?" % name)
            found = self._vars[name]
            if shape is not None and not shape.is_compatible_with(found.get_shape()):
                raise ValueError("Trying to share variable %s, but specified shape %s and found shape %s."
                                 % (name, shape, found.get_shape()))
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError("Trying to share variable %s, but specified dtype %s and found dtype %s."
                                 % (name, dtype.name, found.dtype.name))
            return found

        if reuse is True:
            raise ValueError("Variable %s does not exist, or was not created with tf.get_variable(). Did you "
                             "mean to set reuse=tf.AUTO_REUSE in VarScope?" % name)

        if initializer is None:
            if shape is None:
                raise ValueError("Variable %s did not get an initializer, so its `shape` argument must be "
                                 "specified." % name)
            initializer, initializing_from_value = self._get_default_initializer(name, shape, dtype)
        if initializing_from_value:
            init_val = initializer
            variable_dtype = None
        else:
            if inspect.isclass(initializer):
                initializer = initializer()
            if shape is not None and shape.is_fully_defined():
                try:
                    takes_partition_info = "partition_info" in inspect.signature(initializer).parameters
                except (TypeError, ValueError):
                    takes_partition_info = False
                if takes_partition_info:
                    init_val = functools.partial(initializer, shape.as_list(), dtype=dtype,
                                                 partition_info=partition_info)
                else:
                    init_val = functools.partial(initializer, shape.as_list(), dtype=dtype)
                variable_dtype = dtype.base_dtype
            elif _needs_no_arguments(initializer):
                init_val = initializer
                variable_dtype = None
            else:
                raise ValueError("The initializer passed is not valid. It should be a callable with no "
                                 "arguments and the shape should not be provided or an instance of "
                                 "`tf.keras.initializers.*' and `shape` should be fully defined.")
        v = variables.Variable(initial_value=init_val, name=name, trainable=trainable, collections=collections,
                               caching_device=caching_device, dtype=variable_dtype,
                               validate_shape=validate_shape, constraint=constraint,
                               synchronization=synchronization, aggregation=aggregation)
        self._vars[name] = v
        if regularizer:
            g = ops.get_default_graph()
            with g.colocate_with(v.op), ops.name_scope(name + "/Regularizer/"), g.control_dependencies(None):
                loss = regularizer(v)
            if loss is not None:
                ops.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v

    def _get_default_initializer(self, name, shape=None, dtype=dtypes.float32):
        if dtype.is_floating:
            return init_ops.glorot_uniform_initializer(), False
        if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype == dtypes.string:
            return init_ops.zeros_initializer(), False
        raise ValueError("An initializer for variable %s of %s is required" % (name, dtype.base_dtype))


def _needs_no_arguments(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params.values())


class VariableScope:
    """The defaults get_variable takes from the enclosing variable_scope (tf.VariableScope)."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None, partitioner=None,
                 custom_getter=None, name_scope="", dtype=dtypes.float32, use_resource=None, constraint=None):
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self):
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_dtype(self, dtype):
        self._dtype = dtype

    def set_use_resource(self, use_resource):
        self._use_resource = use_resource

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_caching_device(self, caching_device):
        self._caching_device = caching_device

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter):
        self._custom_getter = custom_getter

    def get_collection(self, name):
        scope = self._name + "/" if self._name else ""
        return ops.get_collection(name, scope)

    def trainable_variables(self):
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self):
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self):
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None,
                     validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                     synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
        if regularizer is None:
            regularizer = self._regularizer
        if caching_device is None:
            caching_device = self._caching_device
        if partitioner is None:
            partitioner = self._partitioner
        if custom_getter is None:
            custom_getter = self._custom_getter
        if reuse is None:
            reuse = self._reuse
        if use_resource is None:
            use_resource = self._use_resource
        full_name = self.name + "/" + name if self.name else name
        with ops.name_scope(None):
            if dtype is not None and initializer is not None and not callable(initializer):
                init_dtype = ops.convert_to_tensor(initializer).dtype.base_dtype
                if init_dtype != dtypes.as_dtype(dtype):
                    raise ValueError("Initializer type '%s' and explicit dtype '%s' don't match."
                                     % (init_dtype, dtype))
            if initializer is None:
                initializer = self._initializer
            if constraint is None:
                constraint = self._constraint
            if dtype is None:
                dtype = self._dtype
            return var_store.get_variable(
                full_name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, reuse=reuse,
                trainable=trainable, collections=collections, caching_device=caching_device,
                partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
                aggregation=aggregation)


class _VariableScopeStore(threading.local):
    def __init__(self):
        super().__init__()
        self.current_scope = VariableScope(False)
        self.variable_scopes_count = {}

    def open_variable_scope(self, scope_name):
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name):
        if scope_name is None:
            for k in self.variable_scopes_count:
                self.variable_scopes_count[k] = 0
        else:
            prefix = scope_name + "/"
            for k in self.variable_scopes_count:
                if k.startswith(prefix):
                    self.variable_scopes_count[k] = 0

    def variable_scope_count(self, scope_name):
        return self.variable_scopes_count.get(scope_name, 0)


def get_variable_scope_store():
    g = ops.get_default_graph()
    store = getattr(g, "_variable_scope_store", None)
    if store is None:
        store = _VariableScopeStore()
        g._variable_scope_store = store
    return store


def get_variable_scope():
    """The current variable scope."""
    return get_variable_scope_store().current_scope


def _get_default_variable_store():
    g = ops.get_default_graph()
    if g._variable_store is None:
        g._variable_store = _VariableStore()
    return g._variable_store


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                 collections=None, caching_device=None, partitioner=None, validate_shape=True, use_resource=None,
                 custom_getter=None, constraint=None, synchronization=VariableSynchronization.AUTO,
                 aggregation=VariableAggregation.NONE):
    """Gets an existing variable with these parameters or creates a new one."""
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections, caching_device=caching_device,
        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
        aggregation=aggregation)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=False,
                       collections=None, caching_device=None, partitioner=None, validate_shape=True,
                       use_resource=None, custom_getter=None, constraint=None,
                       synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
    if collections:
        collections = list(collections) + [GraphKeys.LOCAL_VARIABLES]
    else:
        collections = [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                        trainable=False, collections=collections, caching_device=caching_device,
                        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                        custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
                        aggregation=aggregation)


class _pure_variable_scope:  # noqa: N801 - TensorFlow's name
    def __init__(self, name_or_scope, reuse=None, initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, old_name_scope=None, dtype=dtypes.float32,
                 use_resource=None, constraint=None):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._old_name_scope = old_name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint
        self._var_scope_store = get_variable_scope_store()
        self._last_variable_scope_object = None
        if isinstance(self._name_or_scope, VariableScope):
            self._new_name = self._name_or_scope.name
            s = self._name_or_scope
            obj = VariableScope(s.reuse if not self._reuse else self._reuse, name=self._new_name,
                                initializer=s.initializer, regularizer=s.regularizer,
                                caching_device=s.caching_device, partitioner=s.partitioner, dtype=s.dtype,
                                custom_getter=s.custom_getter, name_scope=s._name_scope,
                                use_resource=s.use_resource, constraint=self._constraint)
            self._apply_overrides(obj, s.custom_getter)
            self._cached_variable_scope_object = obj

    def _apply_overrides(self, obj, old_getter):
        if self._initializer is not None:
            obj.set_initializer(self._initializer)
        if self._regularizer is not None:
            obj.set_regularizer(self._regularizer)
        if self._caching_device is not None:
            obj.set_caching_device(self._caching_device)
        if self._partitioner is not None:
            obj.set_partitioner(self._partitioner)
        if self._custom_getter is not None:
            obj.set_custom_getter(_maybe_wrap_custom_getter(self._custom_getter, old_getter))
        if self._dtype is not None:
            obj.set_dtype(self._dtype)
        if self._use_resource is not None:
            obj.set_use_resource(self._use_resource)

    def __enter__(self):
        self._old = self._var_scope_store.current_scope
        if isinstance(self._name_or_scope, VariableScope):
            self._var_scope_store.open_variable_scope(self._new_name)
            self._old_subscopes = copy.copy(self._var_scope_store.variable_scopes_count)
            obj = self._cached_variable_scope_object
        else:
            old = self._old
            self._new_name = old.name + "/" + self._name_or_scope if old.name else self._name_or_scope
            self._reuse = self._reuse or old.reuse
            name_scope = self._name_or_scope if self._old_name_scope is None else self._old_name_scope
            obj = VariableScope(self._reuse, name=self._new_name, initializer=old.initializer,
                                regularizer=old.regularizer, caching_device=old.caching_device,
                                partitioner=old.partitioner, dtype=old.dtype, use_resource=old.use_resource,
                                custom_getter=old.custom_getter, name_scope=name_scope, constraint=self._constraint)
            self._apply_overrides(obj, old.custom_getter)
            self._var_scope_store.open_variable_scope(self._new_name)
        self._var_scope_store.current_scope = obj
        self._last_variable_scope_object = obj
        return obj

    def __exit__(self, type_arg, value_arg, traceback_arg):
        if self._var_scope_store.current_scope is not self._last_variable_scope_object:
            raise RuntimeError("Improper nesting of variable_scope.")
        if isinstance(self._name_or_scope, VariableScope):
            self._var_scope_store.variable_scopes_count = self._old_subscopes
        else:
            self._var_scope_store.close_variable_subscopes(self._new_name)
        self._var_scope_store.current_scope = self._old


def _maybe_wrap_custom_getter(custom_getter, old_getter):
    if old_getter is None:
        return custom_getter

    def wrapped_custom_getter(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)
    return wrapped_custom_getter


def _get_unique_variable_scope(prefix):
    store = get_variable_scope_store()
    current = get_variable_scope()
    name = current.name + "/" + prefix if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(name + ("_%d" % idx)) > 0:
        idx += 1
    return prefix + ("_%d" % idx)


class variable_scope:  # noqa: N801 - TensorFlow's name
    """A context manager for defining ops that create variables (layers).

        with tf.variable_scope("layer1"):
            w = tf.get_variable("w", [784, 10])     # "layer1/w"
        with tf.variable_scope("layer1", reuse=True):
            w2 = tf.get_variable("w")               # the same variable
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                 use_resource=None, constraint=None, auxiliary_name_scope=True):
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = values
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._reuse = reuse
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint
        if self._default_name is None and self._name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if self._reuse is False:
            self._reuse = None
        if not (self._reuse is True or self._reuse is None or self._reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if self._values is None:
            self._values = []
        self._graph = ops._graph_of_values(self._values) if self._values else ops.get_default_graph()
        self._cached_pure_variable_scope = None
        self._current_name_scope = None
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError("The auxiliary_name_scope must be `True` or `False`, while get {}".format(
                auxiliary_name_scope))
        self._auxiliary_name_scope = auxiliary_name_scope

    def __enter__(self):
        self._graph_context_manager = self._graph.as_default()
        self._graph_context_manager.__enter__()
        if self._cached_pure_variable_scope is not None:
            if self._current_name_scope is not None:
                # Entered again: a name scope of the same name (made unique, as TensorFlow does).
                self._current_name_scope = ops.name_scope(self._name_scope_arg)
                self._current_name_scope.__enter__()
            return self._cached_pure_variable_scope.__enter__()
        try:
            return self._enter_scope_uncached()
        except BaseException as e:
            self._graph_context_manager.__exit__(type(e), e, e.__traceback__)
            raise

    def _pure(self, name_or_scope, old_name_scope, reuse=None):
        return _pure_variable_scope(name_or_scope, reuse=reuse, initializer=self._initializer,
                                    regularizer=self._regularizer, caching_device=self._caching_device,
                                    partitioner=self._partitioner, custom_getter=self._custom_getter,
                                    old_name_scope=old_name_scope, dtype=self._dtype,
                                    use_resource=self._use_resource, constraint=self._constraint)

    def _enter_scope_uncached(self):
        if self._auxiliary_name_scope:
            current_name_scope = None
        else:
            name_scope = ops.get_name_scope()
            if name_scope:
                name_scope += "/"
            current_name_scope = ops.name_scope(name_scope)
            self._name_scope_arg = name_scope
        if self._name_or_scope is not None:
            if not isinstance(self._name_or_scope, (VariableScope, str)):
                raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
            if isinstance(self._name_or_scope, str):
                name_scope = self._name_or_scope
            else:
                name_scope = self._name_or_scope.name.split("/")[-1]
            if name_scope or current_name_scope:
                if current_name_scope is None:
                    current_name_scope = ops.name_scope(name_scope)
                    self._name_scope_arg = name_scope
                current_name_scope_name = current_name_scope.__enter__()
                self._current_name_scope = current_name_scope
                if isinstance(self._name_or_scope, str):
                    old_name_scope = current_name_scope_name
                else:
                    old_name_scope = self._name_or_scope.original_name_scope
                pure = self._pure(self._name_or_scope, old_name_scope, reuse=self._reuse)
            else:
                self._current_name_scope = None
                pure = _pure_variable_scope(self._name_or_scope, reuse=self._reuse, initializer=self._initializer,
                                            regularizer=self._regularizer, caching_device=self._caching_device,
                                            partitioner=self._partitioner, custom_getter=self._custom_getter,
                                            dtype=self._dtype, use_resource=self._use_resource,
                                            constraint=self._constraint)
        else:
            if self._reuse:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            if current_name_scope is None:
                current_name_scope = ops.name_scope(self._default_name)
                self._name_scope_arg = self._default_name
            current_name_scope_name = current_name_scope.__enter__()
            self._current_name_scope = current_name_scope
            unique_default_name = _get_unique_variable_scope(self._default_name)
            pure = self._pure(unique_default_name, current_name_scope_name)
        try:
            entered = pure.__enter__()
        except BaseException as e:
            if self._current_name_scope is not None:
                self._current_name_scope.__exit__(type(e), e, e.__traceback__)
            raise
        self._cached_pure_variable_scope = pure
        return entered

    def __exit__(self, type_arg, value_arg, traceback_arg):
        try:
            self._cached_pure_variable_scope.__exit__(type_arg, value_arg, traceback_arg)
        finally:
            try:
                if self._current_name_scope:
                    self._current_name_scope.__exit__(type_arg, value_arg, traceback_arg)
            finally:
                self._graph_context_manager.__exit__(type_arg, value_arg, traceback_arg)


def variable_op_scope(values, name_or_scope, default_name=None, initializer=None, regularizer=None,
                      caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                      use_resource=None, constraint=None):
    return variable_scope(name_or_scope, default_name=default_name, values=values, initializer=initializer,
                          regularizer=regularizer, caching_device=caching_device, partitioner=partitioner,
                          custom_getter=custom_getter, reuse=reuse, dtype=dtype, use_resource=use_resource,
                          constraint=constraint)

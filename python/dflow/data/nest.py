"""Nested structures of dataset elements, with tf.data's rules.

Tuples (namedtuples included) and dicts are structures; a dict's values are taken in sorted key
order. Lists are *not* structures: as in tf.data, a list is one value that becomes a tensor
(`from_tensor_slices([1, 2, 3])` has one component).
"""
import collections.abc


def is_sequence(x):
    return isinstance(x, (tuple, collections.abc.Mapping))


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys, got %r" % (list(d),)) from None


def _children(x):
    if isinstance(x, collections.abc.Mapping):
        return [x[k] for k in _sorted_keys(x)]
    return list(x)


def flatten(structure):
    """The leaves of `structure`, depth first (dict values by sorted key)."""
    out = []

    def rec(x):
        if is_sequence(x):
            for c in _children(x):
                rec(c)
        else:
            out.append(x)
    rec(structure)
    return out


def _rebuild(template, values):
    if isinstance(template, collections.abc.Mapping):
        by_key = dict(zip(_sorted_keys(template), values))
        cls = type(template)
        items = [(k, by_key[k]) for k in template]
        try:
            return cls(items)
        except TypeError:
            return dict(items)
    if _is_namedtuple(template):
        return type(template)(*values)
    return tuple(values)


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence` given the shape of `structure`."""
    flat = list(flat_sequence)
    pos = [0]

    def rec(t):
        if is_sequence(t):
            return _rebuild(t, [rec(c) for c in _children(t)])
        i = pos[0]
        if i >= len(flat):
            raise ValueError("Structure had %d elements, but flat_sequence had %d" % (len(flatten(structure)), len(flat)))
        pos[0] += 1
        return flat[i]
    out = rec(structure)
    if pos[0] != len(flat):
        raise ValueError("Structure had %d elements, but flat_sequence had %d" % (pos[0], len(flat)))
    return out


def map_structure(fn, *structures):
    if not structures:
        raise ValueError("map_structure needs at least one structure")
    for s in structures[1:]:
        assert_same_structure(structures[0], s)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])


def assert_same_structure(a, b):
    def rec(x, y):
        if is_sequence(x) != is_sequence(y):
            raise ValueError("The two structures don't have the same nested structure: %r and %r" % (a, b))
        if not is_sequence(x):
            return
        if isinstance(x, collections.abc.Mapping) != isinstance(y, collections.abc.Mapping):
            raise TypeError("The two structures don't have the same sequence type: %r and %r" % (a, b))
        if isinstance(x, collections.abc.Mapping) and _sorted_keys(x) != _sorted_keys(y):
            raise ValueError("The two dictionaries don't have the same set of keys: %r and %r" % (list(x), list(y)))
        cx, cy = _children(x), _children(y)
        if len(cx) != len(cy):
            raise ValueError("The two structures don't have the same number of elements: %r and %r" % (a, b))
        for p, q in zip(cx, cy):
            rec(p, q)
    rec(a, b)


def flatten_up_to(shallow, structure):
    """The parts of `structure` at the leaves of `shallow`."""
    out = []

    def rec(s, x):
        if not is_sequence(s):
            out.append(x)
            return
        if not is_sequence(x):
            raise TypeError("If shallow structure is a sequence, input must also be a sequence. Input has type: %s."
                            % type(x).__name__)
        for p, q in zip(_children(s), _children(x)):
            rec(p, q)
    rec(shallow, structure)
    return out

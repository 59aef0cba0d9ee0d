"""The differential op suite: every op that dflow registers and TensorFlow has, built by TensorFlow
on generated inputs and run from the same GraphDef bytes in both (values, error classes and
gradients compared; see diffsuite.py). The per-op table goes to $DFLOW_BUILD_DIR/conformance_ops.md."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diffsuite  # noqa: E402

_ALL_SPECS, _EXCLUDED, _KNOWN = diffsuite.load()
_COMMON = set(diffsuite.common_ops())
# A spec may come before its op (an op being added): it runs once both sides register the op.
_SPECS = [s for s in _ALL_SPECS if s.op in _COMMON]
_MODULES = sorted(set(s.module for s in _SPECS))
_RESULTS = {}


@pytest.fixture(scope="module")
def results():
    if not _RESULTS:
        for s in _SPECS:
            _RESULTS[s.op] = diffsuite.run_spec(s, _KNOWN, _RESULTS.get(s.op))
        diffsuite.write_table(_RESULTS, _EXCLUDED, _KNOWN)
    return _RESULTS


@pytest.mark.parametrize("module", _MODULES)
def test_specs_match_tensorflow(results, module):
    problems = []
    for op, r in sorted(results.items()):
        if module in r.modules:
            problems += r.mismatches[:20] + (["%s: %d more" % (op, len(r.mismatches) - 20)]
                                             if len(r.mismatches) > 20 else [])
    assert not problems, "\n".join(problems)


def test_every_common_op_is_covered():
    """An op both sides have is compared by a spec or listed in an EXCLUDED table with its reason."""
    covered = set(s.op for s in _SPECS) | set(_EXCLUDED)
    missing = [op for op in sorted(_COMMON) if op not in covered]
    assert not missing, "ops both sides have, neither compared nor excluded: %s" % ", ".join(missing)


def test_excluded_ops_are_listed_once():
    """An excluded op has a reason and no spec compares it. (An entry for an op one side lacks is
    let be: an op being added is listed before it lands.)"""
    specced = set(s.op for s in _SPECS)
    bad = ["%s (%s): %s" % (op, mod, "compared by a spec too" if op in specced else "no reason")
           for op, (reason, mod) in sorted(_EXCLUDED.items())
           if op in _COMMON and (op in specced or not reason.strip())]
    assert not bad, "\n".join(bad)


def test_known_differences_still_occur(results):
    """Each intended difference in a KNOWN table still matches a case (stale entries go)."""
    hit = set()
    for r in results.values():
        hit |= r.known_keys
    stale = [key for key in _KNOWN if key not in hit]
    assert not stale, "KNOWN entries that no case matches: %s" % stale


def test_summary(results, capsys):
    # Every op a spec names was compared on at least one case (a spec whose cases all vanish, for
    # lack of a dtype both sides allow, would otherwise count as covered).
    empty = sorted(op for op in set(s.op for s in _SPECS) if op in _COMMON and (op not in results or not results[op].cases))
    assert not empty, "specs that compared no case: %s" % ", ".join(empty)
    line = diffsuite.summary(results)
    with capsys.disabled():
        print("\n" + line)
        print("table: %s" % os.path.join(diffsuite.BUILD, "conformance_ops.md"))
    assert sum(1 for r in results.values() if r.cases) == len(set(s.op for s in _SPECS))

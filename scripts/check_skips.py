#!/usr/bin/env python3
"""Fails when more tests did not run than tests/skip_budget.txt allows.

ctest's JUnit report (`ctest --output-junit FILE`) marks a test that skipped itself (GTEST_SKIP,
which gtest_discover_tests maps to "Skipped" through SKIP_REGULAR_EXPRESSION, or any test whose
SKIP_RETURN_CODE or SKIP_REGULAR_EXPRESSION matched) with status="notrun" and a <skipped>
element, and a disabled one (gtest's DISABLED_ prefix, the DISABLED property) with
status="disabled". Each kind is counted against its budget:

    skipped 0
    disabled 1

(one "KIND N" a line; text after '#' is a comment). More than the budget fails, naming the tests;
fewer passes with a note that the budget can come down.

Usage: check_skips.py JUNIT_XML BUDGET_FILE
"""
import sys
import xml.etree.ElementTree as ET

KINDS = ("skipped", "disabled")


def read_budget(path):
    budget = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2 or parts[0] not in KINDS or not parts[1].isdigit():
                raise ValueError("%s:%d: expected 'skipped N' or 'disabled N', got %r" % (path, number, line))
            budget[parts[0]] = int(parts[1])
    for kind in KINDS:
        if kind not in budget:
            raise ValueError("%s: no budget for %r" % (path, kind))
    return budget


def not_run(junit_path):
    """The names of the tests that skipped themselves and of the disabled ones."""
    found = {kind: [] for kind in KINDS}
    cases = ET.parse(junit_path).getroot().iter("testcase")
    count = 0
    for case in cases:
        count += 1
        status = case.get("status", "")
        name = case.get("name", "?")
        if status == "disabled":
            found["disabled"].append(name)
        elif status == "notrun" or case.find("skipped") is not None:
            found["skipped"].append(name)
    if count == 0:
        raise ValueError("%s lists no test cases" % junit_path)
    return found


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    try:
        budget = read_budget(argv[2])
        found = not_run(argv[1])
    except (OSError, ValueError, ET.ParseError) as e:
        sys.stderr.write("check_skips: %s\n" % e)
        return 2
    failed = False
    for kind in KINDS:
        names, allowed = sorted(found[kind]), budget[kind]
        if len(names) > allowed:
            failed = True
            sys.stderr.write("check_skips: %d tests %s, the budget (%s) allows %d:\n" % (len(names), kind, argv[2], allowed))
            for name in names:
                sys.stderr.write("  %s\n" % name)
        else:
            print("check_skips: %d tests %s (budget %d)%s" % (
                len(names), kind, allowed, "; lower the budget" if len(names) < allowed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

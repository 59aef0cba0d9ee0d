"""The `dflow` command a pip installation puts on PATH: it runs the dflow program installed inside
the package (dflow/bin/dflow), or the one of a build tree (build/bin/dflow beside build/python)."""
import os
import sys


def program():
    here = os.path.dirname(os.path.abspath(__file__))
    for exe in (os.path.join(here, "bin", "dflow"),
                os.path.join(os.path.dirname(os.path.dirname(here)), "bin", "dflow")):
        if os.access(exe, os.X_OK):
            return exe
    return None


def main():
    exe = program()
    if exe is None:
        sys.exit("dflow: the dflow program is not part of this installation of the package "
                 "(looked in %s)" % os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin"))
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    main()

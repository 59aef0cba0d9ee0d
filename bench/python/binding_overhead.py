"""Call overhead of the two binding libraries the extension could use, pybind11 and nanobind:
the same three functions (a float in and out; an object handle in and a handle out, as op building
passes Output handles; a list of handles in) compiled with each, timed in one run, interleaved.

    python3 bench/python/binding_overhead.py        # needs g++, pybind11 and nanobind (pip)

Builds both modules in a temporary directory (nanobind's runtime is compiled from its sources).
"""
import importlib.util
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import timeit

SRC = r"""
#include <vector>
struct Handle { void* node = nullptr; int index = 0; };
#if defined(USE_NANOBIND)
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>
namespace b = nanobind;
NB_MODULE(MOD, m) {
  b::class_<Handle>(m, "Handle").def(b::init<>());
#else
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
namespace b = pybind11;
PYBIND11_MODULE(MOD, m) {
  b::class_<Handle>(m, "Handle").def(b::init<>());
#endif
  m.def("scalar", [](double x) { return x + 1.0; });
  m.def("handle", [](const Handle& h) { Handle r = h; r.index += 1; return r; });
  m.def("handles", [](const std::vector<Handle>& hs) { return static_cast<int>(hs.size()); });
}
"""


def build(tmp, name, nanobind):
    inc = ["-I" + sysconfig.get_paths()["include"]]
    flags = ["-O2", "-shared", "-fPIC", "-std=c++17", "-fvisibility=hidden", "-DMOD=" + name]
    srcs = [os.path.join(tmp, "m.cc")]
    if nanobind:
        import nanobind as nb
        inc += ["-I" + nb.include_dir(), "-I" + os.path.join(nb.source_dir(), "..", "ext", "robin_map", "include")]
        flags.append("-DUSE_NANOBIND")
        srcs.append(os.path.join(nb.source_dir(), "nb_combined.cpp"))
    else:
        import pybind11
        inc.append("-I" + pybind11.get_include())
    out = os.path.join(tmp, name + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["g++"] + flags + inc + srcs + ["-o", out], check=True)
    spec = importlib.util.spec_from_file_location(name, out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "m.cc"), "w") as f:
            f.write(SRC)
        mods = {"pybind11": build(tmp, "bench_pybind11", False), "nanobind": build(tmp, "bench_nanobind", True)}
        rows = {}
        for name, m in mods.items():
            h = m.Handle()
            hs = [m.Handle() for _ in range(4)]
            rows[name] = {"scalar": lambda m=m: m.scalar(1.5), "handle": lambda m=m, h=h: m.handle(h),
                          "list of 4 handles": lambda m=m, hs=hs: m.handles(hs)}
        n = 200000
        for case in ("scalar", "handle", "list of 4 handles"):
            res = {k: [] for k in mods}
            for _ in range(7):
                for k in mods:
                    res[k].append(timeit.timeit(rows[k][case], number=n) / n * 1e9)
            a, b = statistics.median(res["pybind11"]), statistics.median(res["nanobind"])
            print("%-18s pybind11 %6.1f ns   nanobind %6.1f ns   pybind11/nanobind %.2f" % (case, a, b, a / b))


if __name__ == "__main__":
    sys.exit(main())

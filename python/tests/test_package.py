"""The package: what `pip install .` is built from (pyproject.toml, python/CMakeLists.txt), the
package in build/python, its version, and `dflow.compat.v1` as TensorFlow's compat API.

(The full `pip install .` from a clean checkout compiles the whole C++ project; it is checked by
hand, as the header of pyproject.toml says.)"""
import os
import re
import subprocess
import sys
import tomllib

from packaging.version import Version

from conftest import BUILD, ROOT, run_python

import dflow

PKG_SRC = os.path.join(ROOT, "python", "dflow")


def pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def test_pyproject_metadata():
    p = pyproject()
    assert p["build-system"]["build-backend"] == "scikit_build_core.build"
    assert any(r.startswith("scikit-build-core") for r in p["build-system"]["requires"])
    assert any(r.startswith("pybind11") for r in p["build-system"]["requires"])
    proj = p["project"]
    assert proj["name"] == "dflow"
    assert proj["dynamic"] == ["version"]
    deps = {re.split("[<>=!~ ]", d)[0] for d in proj["dependencies"]}
    assert {"numpy", "protobuf"} <= deps
    sk = p["tool"]["scikit-build"]
    # The wheel builds the extension and the launcher, without tests or benchmarks.
    assert sk["cmake"]["define"]["DFLOW_BUILD_TESTS"] == "OFF"
    assert sk["cmake"]["define"]["DFLOW_BUILD_BENCH"] == "OFF"
    assert set(sk["build"]["targets"]) == {"_dflow", "dflow"}
    # The version comes from the package, and is one pip accepts.
    v = sk["metadata"]["version"]
    with open(os.path.join(ROOT, v["input"])) as f:
        m = re.search(v["regex"], f.read())
    assert m is not None
    assert m.group("value") == dflow.__version__
    assert Version(dflow.__version__).release[:2] == (1, 15)


def test_build_backend_metadata():
    # What pip asks the backend first: the metadata, made without configuring or building.
    code = ("import os, sys, tempfile\n"
            "from scikit_build_core import build\n"
            "d = tempfile.mkdtemp()\n"
            "name = build.prepare_metadata_for_build_wheel(d)\n"
            "sys.stdout.write(open(os.path.join(d, name, 'METADATA')).read())\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    meta = r.stdout
    assert "\nName: dflow\n" in meta
    assert "\nVersion: %s\n" % dflow.__version__ in meta
    assert "\nRequires-Dist: numpy" in meta and "\nRequires-Dist: protobuf" in meta


def test_cmake_installs_the_package():
    with open(os.path.join(ROOT, "python", "CMakeLists.txt")) as f:
        cm = f.read()
    sk = cm[cm.index("if(SKBUILD)"):]
    sk = sk[:sk.index("endif()")]
    assert "install(TARGETS _dflow LIBRARY DESTINATION dflow)" in sk
    assert "DESTINATION dflow FILES_MATCHING PATTERN \"*.py\"" in sk
    assert "install(TARGETS dflow RUNTIME DESTINATION dflow/bin)" in sk


def test_every_subpackage_is_a_package():
    # The wheel installs the .py files as they are: every directory needs its __init__.py.
    for d, dirs, files in os.walk(PKG_SRC):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        if any(f.endswith(".py") for f in files):
            assert "__init__.py" in files, d


def test_build_python_is_the_package():
    built = os.path.join(BUILD, "python", "dflow")
    # Every source .py file is in build/python, and the extension is there.
    for d, dirs, files in os.walk(PKG_SRC):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), PKG_SRC)
                assert os.path.exists(os.path.join(built, rel)), rel
    assert any(f.startswith("_dflow") and f.endswith(".so") for f in os.listdir(built))
    # A fresh interpreter, from another directory, imports it from there.
    r = run_python("import dflow, sys; print(dflow.__file__); print(dflow.__version__); "
                   "print(dflow.Session().run(dflow.add(3, 5)))", cwd="/")
    assert r.returncode == 0, r.stderr
    path, version, value = r.stdout.split()
    assert os.path.realpath(path) == os.path.realpath(os.path.join(built, "__init__.py"))
    assert version == dflow.__version__ and value == "8"


def test_compat_v1_is_the_same_api():
    import dflow.compat.v1 as tf1
    assert tf1 is dflow
    assert dflow.compat.v1 is dflow
    from dflow.compat import v1
    assert v1 is dflow
    assert sys.modules["dflow.compat.v1"] is dflow
    r = run_python("import dflow.compat.v1 as tf\n"
                   "tf.disable_v2_behavior()\n"
                   "x = tf.placeholder(tf.float32)\n"
                   "with tf.Session() as s:\n"
                   "    print(s.run(x * 2, {x: 4}))\n"
                   "print(tf.compat.v1 is tf, tf.executing_eagerly())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["8.0", "True", "False"]


def test_top_level_names():
    for name in ("GraphDef", "NodeDef", "AttrValue", "import_graph_def", "Session", "InteractiveSession",
                 "Graph", "Tensor", "Operation", "placeholder", "constant", "errors", "train", "io",
                 "compat", "VERSION", "GRAPH_DEF_VERSION", "COMPILER_VERSION"):
        assert hasattr(dflow, name), name
    assert dflow.VERSION == dflow.__version__
    assert callable(dflow.train.write_graph) and dflow.io.write_graph is dflow.train.write_graph


def test_dflow_command_entry_point_runs_the_program():
    # pip installs `dflow` as an entry point to dflow._cli:main; in the build tree it finds
    # build/bin/dflow. `dflow ops` lists the registered ops.
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        meta = tomllib.load(f)
    assert meta["project"]["scripts"]["dflow"] == "dflow._cli:main"
    r = run_python("import sys; from dflow import _cli; sys.argv = ['dflow', 'ops']; _cli.main()")
    assert r.returncode == 0, r.stderr
    assert "MatMul" in r.stdout and "AddV2" in r.stdout

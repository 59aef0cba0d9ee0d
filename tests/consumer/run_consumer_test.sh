#!/usr/bin/env bash
# run_consumer_test.sh BUILD_DIR CXX CMAKE [CMAKE...]: installs the build into
# BUILD_DIR/consumer/prefix with the first CMAKE (`cmake --install`, which copies and never
# builds), then builds tests/consumer/main.cc outside the tree against that copy with
# find_package(dflow) (once per CMAKE given: the CMake that built dflow and an older one) and with
# pkg-config (`pkg-config --cflags --libs --static dflow`), runs each program and checks the
# installed `dflow` command. Prints "PASS: install_consumer" when all of it worked.
set -euo pipefail
build=$(cd "$1" && pwd)
cxx=$2
shift 2
cmakes=("$@")
cmake=${cmakes[0]}
here=$(cd "$(dirname "$0")" && pwd)
work=$build/consumer
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"

echo "== cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log"
for f in include/dflow/dflow.h include/dflow/gen/proto/graph.pb.h lib/cmake/dflow/dflowConfig.cmake \
         lib/cmake/dflow/dflowConfigVersion.cmake lib/cmake/dflow/dflowTargets.cmake lib/pkgconfig/dflow.pc bin/dflow; do
  [[ -e $prefix/$f ]] || { echo "FAIL: $prefix/$f was not installed"; exit 1; }
done
ls "$prefix"/lib/libdflow.* >/dev/null || { echo "FAIL: no libdflow in $prefix/lib"; exit 1; }
# The installed headers are the public API only: none of them names a header of src/.
if grep -rlE '#include "(base|tensor|framework|graph|ops|runtime|train|distributed|rpc|api|estimator)/' \
     "$prefix/include/dflow"; then
  echo "FAIL: installed headers include internal headers (above)"; exit 1
fi

check_output() {  # the program's output line
  local out=$1
  echo "$out"
  [[ $out == "consumer: y = [4, 7], w = 4.6875, meta graph of "*" nodes" ]] || { echo "FAIL: unexpected output"; exit 1; }
}

gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
i=0
for c in "${cmakes[@]}"; do
  i=$((i + 1))
  echo "== find_package(dflow) with $("$c" --version | head -n1) ($c)"
  dir=$work/cmake-build-$i
  "$c" -S "$here" -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" >"$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log"; echo "FAIL: configuring the consumer"; exit 1; }
  "$c" --build "$dir" >"$dir.build.log" 2>&1 \
    || { tail -n 60 "$dir.build.log"; echo "FAIL: building the consumer"; exit 1; }
  check_output "$("$dir/consumer")"
done

echo "== pkg-config --cflags --libs --static dflow"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
flags=$(pkg-config --cflags --libs --static dflow)
echo "$flags"
rpath=()  # a shared libdflow.so (-DDFLOW_SHARED=ON) is found at run time through the rpath
[[ -e $prefix/lib/libdflow.so ]] && rpath=("-Wl,-rpath,$prefix/lib")
"$cxx" -O1 -o "$work/consumer_pc" "$here/main.cc" $flags "${rpath[@]}" >"$work/pc-build.log" 2>&1 \
  || { tail -n 60 "$work/pc-build.log"; echo "FAIL: building the consumer with pkg-config"; exit 1; }
check_output "$("$work/consumer_pc")"

echo "== the installed dflow command"
ops=$("$prefix/bin/dflow" ops)
grep -q '^MatMul(a: T, b: T) -> (product: T);' <<<"$ops" \
  || { echo "FAIL: $prefix/bin/dflow ops does not list MatMul"; exit 1; }

echo "PASS: install_consumer"

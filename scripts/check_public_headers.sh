#!/usr/bin/env bash
# The public headers (include/dflow) include only each other, the generated "proto/*.pb.h" and
# third-party headers, never dflow's internal headers (src/), and define none of the internal
# macros. Usage: check_public_headers.sh [INCLUDE_DIR]   (default: include/ of this checkout)
set -u
dir=${1:-$(dirname "$0")/../include}
fail=0
bad=$(grep -rnE '#[[:space:]]*include[[:space:]]*"(base|tensor|framework|graph|runtime|distributed|train|rpc|ops|api|estimator|tools|examples)/' "$dir")
if [ -n "$bad" ]; then
  echo "FAIL: public headers include internal headers:"
  echo "$bad"
  fail=1
fi
macros=$(grep -rnE '#[[:space:]]*define[[:space:]]+(LOG|CHECK|CHECK_OK|DCHECK|RETURN_IF_ERROR|ASSIGN_OR_RETURN|ASSIGN_OR_RETURN_IMPL)\b' "$dir")
if [ -n "$macros" ]; then
  echo "FAIL: public headers define internal macros (use the DFLOW_ names):"
  echo "$macros"
  fail=1
fi
n=$(find "$dir" -name '*.h' | wc -l)
if [ "$n" -eq 0 ]; then
  echo "FAIL: no headers under $dir"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "PASS: $n public headers include no internal header"
exit "$fail"

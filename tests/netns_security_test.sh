#!/usr/bin/env bash
# A server on a real interface, reached from another network namespace: a client without the
# cluster's credentials (or with another cluster's) is refused, one with them is served, and an
# --insecure server on the same link serves anybody (so the link itself works). The test makes
# two namespaces joined by a veth pair on 10.213.x.0/24 and removes them on exit. It runs itself in
# a network and mount namespace of its own (and, when not root, a user namespace that maps the
# user to root in it), so nothing it makes is visible outside, not even to the host's `ip netns`.
#   tests/netns_security_test.sh BUILD_DIR
set -euo pipefail
if [ -z "${DFLOW_NETNS_INNER:-}" ]; then
  export DFLOW_NETNS_INNER=1
  if [ "$(id -u)" = 0 ]; then
    exec unshare --net --mount "$0" "$@"
  fi
  exec unshare --user --map-root-user --net --mount "$0" "$@"
fi
# `ip netns` keeps its namespaces under /run/netns: a private /run in this mount namespace.
mount -t tmpfs tmpfs /run
mkdir -p /run/netns
BUILD=$(cd "$1" && pwd)
DFLOW="$BUILD/bin/dflow"
export PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
export TF_CPP_MIN_LOG_LEVEL=3
unset DFLOW_CREDENTIALS

tag=$(( $$ % 100000 ))
A="dflow-srv-$tag"
B="dflow-cli-$tag"
VA="dfa$tag"
VB="dfb$tag"
NET="10.213.$(( $$ % 250 + 1 ))"
TMP=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$A" 2>/dev/null || true
  ip netns del "$B" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }

ip netns add "$A"
ip netns add "$B"
ip link add "$VA" type veth peer name "$VB"
ip link set "$VA" netns "$A"
ip link set "$VB" netns "$B"
ip -n "$A" addr add "$NET.1/24" dev "$VA"
ip -n "$B" addr add "$NET.2/24" dev "$VB"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "$VA" up
ip -n "$B" link set "$VB" up

"$DFLOW" credentials create "$TMP/c" --hosts="$NET.1" > /dev/null
"$DFLOW" credentials create "$TMP/other" > /dev/null

# Starts `dflow server` in namespace A on port $1 with the remaining flags; waits (bounded) until
# it serves.
start_server() {
  local port=$1; shift
  ip netns exec "$A" "$DFLOW" server --worker_hosts="$NET.1:$port" --job_name=worker --task_index=0 "$@" \
    > "$TMP/server_$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 300); do
    grep -q "serving on port" "$TMP/server_$port.log" && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || fail "server on $port exited: $(cat "$TMP/server_$port.log")"
    sleep 0.1
  done
  fail "server on $port did not start: $(cat "$TMP/server_$port.log")"
}

# Runs 3 + 4 on grpc://$1 from namespace B, with credentials directory $2 (or none); prints the
# result or the error's class.
client() {
  ip netns exec "$B" env DFLOW_CONFIG_DIR="$TMP/empty-store" python3 -c '
import sys
import dflow as tf
config = tf.ConfigProto(credentials=sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
with tf.Graph().as_default():
    s = tf.add(3, 4)
    try:
        with tf.Session("grpc://" + sys.argv[1], config=config) as sess:
            print("result", sess.run(s, options=tf.RunOptions(timeout_in_ms=20000)))
    except tf.errors.OpError as e:
        print("error", type(e).__name__)
' "$1" "${2:-}"
}

# A server on a real interface needs credentials or --insecure.
if ip netns exec "$A" "$DFLOW" server --worker_hosts="$NET.1:2220" --job_name=worker --task_index=0 \
    > "$TMP/refused.log" 2>&1; then
  fail "a server on $NET.1 started without credentials"
fi
grep -q -- "--insecure" "$TMP/refused.log" || fail "no hint in: $(cat "$TMP/refused.log")"

start_server 2222 --credentials="$TMP/c/member"
start_server 2223 --insecure

out=$(client "$NET.1:2223")
[ "$out" = "result 7" ] || fail "the insecure server was not reachable from $B: $out"
out=$(client "$NET.1:2222")
[ "$out" = "error UnavailableError" ] || fail "a client without credentials got: $out"
out=$(client "$NET.1:2222" "$TMP/other/member")
[ "$out" = "error UnavailableError" ] || fail "a client with another cluster's credentials got: $out"
out=$(client "$NET.1:2222" "$TMP/c/member")
[ "$out" = "result 7" ] || fail "a client with the cluster's credentials got: $out"
# The cluster's CA but not its secret: TLS works, the call is refused, and the server says so.
cp -r "$TMP/c/member" "$TMP/nosecret"
rm "$TMP/nosecret/secret"
out=$(client "$NET.1:2222" "$TMP/nosecret")
[ "$out" = "error UnauthenticatedError" ] || fail "a client without the secret got: $out"
grep -q "refused CreateSession from ipv4:$NET.2" "$TMP/server_2222.log" || fail "not logged: $(cat "$TMP/server_2222.log")"
echo "PASS: refused without credentials from another namespace; served with them"

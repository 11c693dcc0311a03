#!/usr/bin/env bash
# Runs one cmc command as N processes of a distributed search on this
# machine, over loopback: what several hosts do, for trying it and for
# measuring it (docs/DISTRIBUTED.md, docs/PERFORMANCE.md).
#
#   scripts/distributed_local.sh N CMC [ARGS...]
#
# CMC is the cmc binary; ARGS its arguments, to which each process adds
# --distributed --processes N --process P --hostfile FILE (give --workers
# in ARGS). Process 0's output is this script's; the others' stderr lines
# follow it. Exits with process 0's code, or with the first non-zero code of
# another process when process 0's is zero.
set -euo pipefail
n=$1
cmc=$2
shift 2
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
# Free ports, as the kernel hands them out.
python3 - "$n" > "$dir/hosts" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
for s in socks:
    print("127.0.0.1:%d" % s.getsockname()[1])
PY
pids=()
for ((p = n - 1; p >= 1; p--)); do
    "$cmc" "$@" --distributed --processes "$n" --process "$p" --hostfile "$dir/hosts" 2> "$dir/err.$p" > /dev/null &
    pids[p]=$!
done
set +e
"$cmc" "$@" --distributed --processes "$n" --process 0 --hostfile "$dir/hosts"
code=$?
for ((p = 1; p < n; p++)); do
    wait "${pids[p]}"
    c=$?
    cat "$dir/err.$p" >&2
    if [[ $code == 0 && $c != 0 ]]; then code=$c; fi
done
exit "$code"

#!/bin/sh
# SPDX-License-Identifier: ISC
# Requests that arrive a byte per packet cost what they carry, no more.
# A body sent so (Content-Length, well under max_body) is kept as its
# bytes, not as one buffer chunk of the read size per packet (bound: the
# supervisor's RSS grows less than 16 MiB for four such bodies of 5,000
# bytes each, where a chunk a packet held 80 MiB); and a head of 14,000
# bytes that never ends is looked through once, not again from its start
# at every packet (bound: less than 2 s of the supervisor's CPU for four
# of them, where the search from the start took several).
. "$(dirname "$0")/lib.sh"

TCK=$(getconf CLK_TCK)
N=4
BYTES=5000

quarantine 0
start_gateway "$(demo demo)"
session
base=$(rss_kb "$GW_PID")

# 1. Bodies: the head, then the body a byte per packet.
body=$(printf 'x%.0s' $(seq "$BYTES"))
pids=
for i in $(seq "$N"); do
	"$PY" "$ATTACK/client.py" send "$ADDR" \
	    "s:$(head_mcp)Content-Length: 4000000\r\n\r\n" "b:$body" \
	    --timeout 0 > /dev/null &
	pids="$pids $!"
done
rm -f "$T/rss" "$T/sampled"
bg rss_sampler "$T/rss" "$T/sampled"
sampler=$!
for p in $pids; do
	wait "$p"
done
touch "$T/sampled"
wait "$sampler"
max=$(rss_max "$T/rss")
echo "# $N bodies of $BYTES bytes, a byte a packet: RSS $base KiB before, at most $max KiB while they came"
ok "their bytes are kept, not a chunk a packet (+$((max - base)) KiB, bound 16384)" \
    test $((max - base)) -lt 16384
ok "the daemon serves as before" call_ok

# 2. Heads that never end (14,000 bytes, under the 16 KiB a head may
# have), a byte a packet.
head=$(printf '\\r%.0s' $(seq 14000))
c0=$(cpu_ticks "$GW_PID")
pids=
for i in $(seq "$N"); do
	"$PY" "$ATTACK/client.py" send "$ADDR" "s:POST /mcp HTTP/1.1" \
	    "b:$head" --timeout 0 > /dev/null &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
done
c1=$(cpu_ticks "$GW_PID")
echo "# $N heads of 14,000 bytes, a byte a packet: $((c1 - c0)) ticks of 1/$TCK s of the supervisor's CPU"
ok "each is looked through once (less than 2 s of CPU: $((c1 - c0)) ticks)" \
    test $((c1 - c0)) -lt $((2 * TCK))
ok "the daemon serves as before" call_ok
finish

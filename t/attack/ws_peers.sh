#!/bin/sh
# SPDX-License-Identifier: ISC
# WebSocket peers that misbehave (t/attack/ws_peer.py), on the two clients
# of WebSocket the project has: the worker of a ws:// upstream, and
# mcpctl connect facing a hostile gateway.  A message sent as one-byte
# fragments costs its size and no more (bound: RSS before + twice the
# message limit or size + 8 MiB), past max_message it is refused, and a
# message that trickles in is cut at its deadline (30 s), not before.  A
# peer that never completes the TCP handshake costs connect_timeout.
. "$(dirname "$0")/lib.sh"

INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ws-peers","version":"1"}}}'

# peer NAME ARGS...: start ws_peer.py in the background (stopped with
# the daemon); sets PORT.
peer() {
	_pn=$1
	shift
	bg "$PY" "$ATTACK/ws_peer.py" "$@" > "$T/$_pn.out"
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's/^listening //p' "$T/$_pn.out")
		[ -z "$PORT" ] || break
		sleep 0.05
	done
}

# bridge NAME FD URL: start mcpctl connect in the background, its standard
# input a pipe whose writing end is FD here; sets BRIDGE.  A FIFO opened
# for reading and writing here first, so that neither open waits.
bridge() {
	mkfifo "$T/$1.in"
	eval "exec $2<> \"\$T/\$1.in\""
	# Not with bg: an asynchronous command's input is /dev/null unless
	# it is redirected itself.
	eval "\"\$MCPCTL\" connect \"\$3\" < \"\$T/\$1.in\" > \"\$T/\$1.out\" 2> \"\$T/\$1.err\" $2>&- &"
	BRIDGE=$!
	BG_PIDS="$BG_PIDS $BRIDGE"
}

# sample PID FILE STOP: the RSS of PID every 0.1 s into FILE until STOP
# exists or the process is gone (at most 3 minutes).
sample() {
	_sn=0
	while [ ! -e "$3" ] && [ "$_sn" -lt 1800 ]; do
		rss_kb "$1" >> "$2" 2>/dev/null || break
		sleep 0.1
		_sn=$((_sn + 1))
	done
}

# bridge_attacked NAME FD: mcpctl connect to the peer at $PORT, its RSS
# sampled from the initialize it sends until it exits; sets rss0 (before),
# max (during) and st (its exit status).
bridge_attacked() {
	bridge "$1" "$2" "ws://127.0.0.1:$PORT/ws"
	_bpid=$BRIDGE
	sleep 0.5
	rss0=$(rss_kb "$_bpid")
	rm -f "$T/rss" "$T/sampled"
	bg sample "$_bpid" "$T/rss" "$T/sampled"
	_sampler=$!
	eval "echo \"\$INIT\" >&$2"
	wait "$_bpid"
	st=$?
	touch "$T/sampled"
	wait "$_sampler"
	eval "exec $2>&-"
	max=$(rss_max "$T/rss")
}

# call NAME TOOL ARGS [CURL-ARGS]: call a tool; prints its JSON messages.
call() {
	_up=$1
	_tool=$2
	_args=$3
	shift 3
	mcp "{\"jsonrpc\":\"2.0\",\"id\":\"$_up\",\"method\":\"tools/call\",\"params\":{\"name\":\"${_up}__$_tool\",\"arguments\":$_args}}" "$@" |
	    data_lines
}

# Freed memory held in ASan's quarantine would count in the RSS.
quarantine 0

# The worker's upstream: two entries on one peer, one to flood and one to
# drip, as each attack ends its connection.  max_message = 1M, so that the
# old reassembly (90 bytes a fragment) would have held some 90 MiB.
peer hole blackhole
HOLE=$PORT
peer upstream upstream
WAIT_STATE=none start_gateway \
    "{ name = \"flood\"; transport = \"ws\"; url = \"ws://127.0.0.1:$PORT/mcp\"; max_message = \"1M\"; }" \
    "{ name = \"drip\"; transport = \"ws\"; url = \"ws://127.0.0.1:$PORT/mcp\"; request_timeout = 120; }" \
    "{ name = \"hole\"; transport = \"ws\"; url = \"ws://127.0.0.1:$HOLE/mcp\"; connect_timeout = 1; }" \
    "{ name = \"deaf\"; transport = \"ws\"; url = \"ws://127.0.0.1:$PORT/mcp\"; }"
wait_state ready flood
wait_state ready drip
# A peer whose SYN-ACK never comes: connect_timeout, not init_timeout.
ok "a connection that never completes ends at connect_timeout" \
    until_true 10 grep -q 'upstream hole: .*no connection within 1 s (connect_timeout)' "$T/log"
session
like "the peer answers through the gateway" "$(call flood echo '{"text":"peer alive"}')" '"text":"peer alive"'

# A gateway whose messages trickle in, for mcpctl connect; and the
# worker's upstream dripping an answer.  Both run while the floods go on.
peer gwdrip gateway drip 90
bridge bridge-drip 4 "ws://127.0.0.1:$PORT/ws"
bridge_dripper=$BRIDGE
echo "$INIT" >&4
drip_start=$(date +%s)
bg call drip drip '{"most":90}' -m 150 > "$T/worker-drip"
worker_dripper=$!

# The worker: an answer of 1 000 000 one-byte fragments (under
# max_message) held for 2 s, then the connection closed.  The worker
# holds its size, not 90 times it.
wpid=$(field flood 4)
rss0=$(rss_kb "$wpid")
rm -f "$T/rss" "$T/sampled"
bg sample "$wpid" "$T/rss" "$T/sampled"
sampler=$!
out=$(call flood flood '{"count":1000000}' -m 60)
touch "$T/sampled"
wait "$sampler"
max=$(rss_max "$T/rss")
echo "# worker, one-byte fragments: worker RSS $rss0 KiB before, at most $max KiB during"
like "the worker, an answer of 1 000 000 one-byte fragments, then the peer goes: the call fails" "$out" \
    '"id":"flood","error":\{"code":-32000,"message":"upstream flood: the WebSocket'
ok "... its RSS under $rss0 + $((2 * 1024 + 8192)) KiB while they came (at most $max KiB, +$((max - rss0)) KiB)" \
    test "$max" -lt $((rss0 + 2 * 1024 + 8192))
ok "... and it comes back" wait_state ready flood

# Past max_message, the message is refused with 1009.
out=$(call flood flood '{"count":2000000}' -m 60)
like "the worker refuses one-byte fragments past max_message" "$out" \
    '"id":"flood","error":\{"code":-32000,"message":"upstream flood: a WebSocket message over max_message \(1048576 bytes\)'
ok "... and it comes back" wait_state ready flood
like "... and answers" "$(call flood echo '{"text":"back"}')" '"text":"back"'

# mcpctl connect: a gateway that sends a message of 2 000 000 one-byte
# fragments and closes 2 s later.  The bridge holds its size, not 90
# times it (180 MiB).
peer gwflood gateway flood 2000000
bridge_attacked bridge-flood 3
echo "# mcpctl connect, one-byte fragments: RSS $rss0 KiB before, at most $max KiB during; $(cat "$T/bridge-flood.err")"
is "mcpctl connect: the gateway went away: exit 1" "$st" 1
ok "... its RSS under $rss0 + $((2 * 2048 + 8192)) KiB while 2 000 000 fragments came (at most $max KiB, +$((max - rss0)) KiB)" \
    test "$max" -lt $((rss0 + 2 * 2048 + 8192))
is "... and nothing on its standard output" "$(wc -c < "$T/bridge-flood.out")" 0

# mcpctl connect: a gateway that sends 1 000 000 pings of 125 bytes and
# never reads the pongs.  The bridge stops reading it once 16 MiB wait to
# be written, so it holds that much, not a pong for every ping (127 MiB);
# the peer gives up when its pings are no longer read.
peer gwpings gateway pings 1000000
bridge_attacked bridge-pings 5
echo "# mcpctl connect, pings unanswered: RSS $rss0 KiB before, at most $max KiB during; $(sed -n 's/^pings sent/sent/p' "$T/gwpings.out"); $(cat "$T/bridge-pings.err")"
is "mcpctl connect: the gateway that pinged went away: exit 1" "$st" 1
ok "... its RSS under $rss0 + $((16 * 1024 + 16384)) KiB while pings flooded in (at most $max KiB, +$((max - rss0)) KiB)" \
    test "$max" -lt $((rss0 + 16 * 1024 + 16384))

# The worker's upstream that drips its answer: the call fails at the
# message's deadline, not before.
wait "$worker_dripper"
out=$(cat "$T/worker-drip")
like "the worker cuts a message that trickles in (1008)" "$out" \
    '"id":"drip","error":\{"code":-32000,"message":"upstream drip: a WebSocket message was not whole after 3[0-9] s'
# The bridge facing a gateway that drips: exits 1 at the deadline.
wait "$bridge_dripper"
st=$?
elapsed=$(($(date +%s) - drip_start))
exec 4>&-
echo "# mcpctl connect, a trickle: exit $st after $elapsed s: $(cat "$T/bridge-drip.err")"
is "mcpctl connect cuts a message that trickles in: exit 1" "$st" 1
like "... and says why" "$(cat "$T/bridge-drip.err")" 'a message from the gateway was not whole after 3[0-9] s'
ok "... not before its 30 s deadline ($elapsed s)" test "$elapsed" -ge 29
like "the gateway still answers" "$(call flood echo '{"text":"still here"}')" '"text":"still here"'

# A peer that stops reading: 20 calls of 7 MB for it.  Past 64 MiB queued
# for it (libevent's buffer and wslay's queue), the worker gives it up,
# and holds no more than that.
wait_state ready deaf
bg call deaf deaf '{}' -m 60 > "$T/deaf"
# Each call an id of its own (one in flight in the session is refused).
head -c 7000000 /dev/zero | tr '\0' x > "$T/bigtext"
for i in $(seq 20); do
	{
		printf '{"jsonrpc":"2.0","id":"big%d","method":"tools/call","params":{"name":"deaf__echo","arguments":{"text":"' "$i"
		cat "$T/bigtext"
		printf '"}}}'
	} > "$T/bigcall.$i"
done
wpid=$(field deaf 4)
rss0=$(rss_kb "$wpid")
rm -f "$T/rss" "$T/sampled"
bg sample "$wpid" "$T/rss" "$T/sampled"
sampler=$!
pids=
for i in $(seq 20); do
	mcp "@$T/bigcall.$i" -m 60 > "$T/big.$i" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
done
touch "$T/sampled"
wait "$sampler"
max=$(rss_max "$T/rss")
echo "# worker, a peer that does not read: RSS $rss0 KiB before, at most $max KiB during"
ok "a peer that stops reading is given up at 64 MiB queued for it" \
    grep -q 'upstream deaf: the WebSocket peer is not reading: 64 MiB are queued for it' "$T/log"
is "... every call for it fails" "$(cat "$T"/big.* | grep -c '"id":"big[0-9]*","error":{"code":-32000')" 20
ok "... the worker's RSS stays under $rss0 + $((64 * 1024 + 32768)) KiB (at most $max KiB, +$((max - rss0)) KiB)" \
    test "$max" -lt $((rss0 + 64 * 1024 + 32768))
ok "... and it comes back" wait_state ready deaf
finish

#!/bin/sh
# SPDX-License-Identifier: ISC
# Memory amplification by readers that stop reading.  Eight clients each
# open their session's standalone stream (GET) and a tools/call, with a
# tiny receive buffer, and never read them; while their calls are in
# flight no log line from the shared demo upstream has one origin, so
# every one goes to every session (mcp-supervisord(8), NOTIFICATIONS).
# Another client then makes the demo log about 50 000 lines.  Bound: the
# supervisor's RSS stays under its RSS before the storm + 64 MiB, and a
# normal client gets answers during and after.
. "$(dirname "$0")/lib.sh"

BOUND_KB=65536
NSTALLED=${ATTACK_STALLED:-8}
FLOOD_CALLS=42		# of 1000 lines each, and one of 1000 per stalled client
MESSAGE=${ATTACK_LOG_MESSAGE:-flood}	# short: overhead per event counts
# (ATTACK_STALLED and ATTACK_LOG_MESSAGE change the attack for experiments.)

quarantine 0
start_gateway "$(demo demo)"

# Eight sessions that want every log line.
SIDS=
i=0
while [ "$i" -lt "$NSTALLED" ]; do
	session
	mcp '{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"debug"}}' > /dev/null
	SIDS="$SIDS $SID"
	i=$((i + 1))
done
session
FLOODER=$SID
session
PROBER=$SID

rss0=$(rss_kb "$GW_PID")
echo "# supervisor RSS before the storm: $rss0 KiB"

# The stalled readers: per session a GET stream, a 120 s call in flight,
# and a call of demo__log, none of them read.
set --
for sid in $SIDS; do
	post="POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: $sid\r\n"
	sleep_call='{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"demo__sleep","arguments":{"ms":120000}}}'
	log_call="{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"tools/call\",\"params\":{\"name\":\"demo__log\",\"arguments\":{\"level\":\"debug\",\"count\":1000,\"message\":\"$MESSAGE\"}}}"
	set -- "$@" \
	    "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: $sid\r\n\r\n" \
	    "${post}Content-Length: ${#sleep_call}\r\n\r\n$sleep_call"
done
for sid in $SIDS; do
	post="POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: $sid\r\n"
	set -- "$@" "${post}Content-Length: ${#log_call}\r\n\r\n$log_call"
done
bg "$PY" "$ATTACK/client.py" stall "$ADDR" "$T/stalled" "$T/unstall" "$@" --timeout 170 > "$T/stall.out"
stall_pid=$!
wait_file "$T/stalled" 30
echo "# $(cat "$T/stalled" 2>/dev/null) connections not read"

bg rss_sampler "$T/rss" "$T/sampled"
sampler_pid=$!

# The flood, from a client that reads its answers.
flood() {
	SID=$FLOODER
	n=0
	while [ "$n" -lt "$FLOOD_CALLS" ]; do
		mcp "{\"jsonrpc\":\"2.0\",\"id\":$n,\"method\":\"tools/call\",\"params\":{\"name\":\"demo__log\",\"arguments\":{\"level\":\"debug\",\"count\":1000,\"message\":\"$MESSAGE\"}}}" |
		    data_lines | grep -c '"text":"logged"'
		n=$((n + 1))
	done
}
bg flood > "$T/flood"
flood_pid=$!

# A normal client meanwhile: a ping and a tool call at a time, until the
# flood is over (at most 600 rounds).
SID=$PROBER
asked=0
answered=0
n=0
while kill -0 "$flood_pid" 2>/dev/null && [ "$n" -lt 600 ]; do
	asked=$((asked + 1))
	if ping_ok && mcp '{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"during"}}}' |
	    data_lines | grep -q '"text":"during"'; then
		answered=$((answered + 1))
	fi
	n=$((n + 1))
done
wait "$flood_pid"
calls=$(grep -c '^1$' "$T/flood")
is "the flood's $FLOOD_CALLS calls of 1000 log lines were answered" "$calls" "$FLOOD_CALLS"
ok "a normal client was answered during the flood ($answered of $asked)" \
    test "$asked" -ge 1 -a "$answered" -eq "$asked"
sleep 2
rss1=$(rss_kb "$GW_PID")
touch "$T/sampled"
wait "$sampler_pid"
max=$(rss_max "$T/rss")
echo "# supervisor RSS: $rss0 KiB before, at most ${max:-?} KiB during ($(wc -l < "$T/rss") samples), $rss1 KiB after"
ok "the supervisor's RSS stayed under $rss0 + $BOUND_KB KiB (at most ${max:-?} KiB, +$((${max:-0} - rss0)) KiB)" \
    test "${max:-999999999}" -lt $((rss0 + BOUND_KB))
echo "# readers cut: $(grep -c 'bytes behind' "$T/log") for falling 4 MiB behind or past max_buffered; events dropped past max_buffered: $(grep -c 'drops its oldest events' "$T/log")"
touch "$T/unstall"
wait "$stall_pid"
echo "# the stalled connections: $(cat "$T/stall.out")"
ok "after: a normal client initializes and calls a tool" call_ok
ok "and the prober's session still answers" ping_ok
echo "# supervisor RSS at the end: $(rss_kb "$GW_PID") KiB"
finish

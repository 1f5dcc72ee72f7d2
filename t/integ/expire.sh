#!/bin/sh
# SPDX-License-Identifier: ISC
# Idle sessions expire after session_timeout, and the sweep that finds
# them goes a slice of sessions per turn of the event loop (1024), so 3000
# sessions take several slices.  A session whose standalone stream is
# connected, and one whose client keeps pinging, stay; the others go.
. "$(dirname "$0")/lib.sh"

NSESSIONS=3000
CLIENT=$top_srcdir/t/attack/client.py

GLOBALS='session_timeout = 10;'
start_gateway "$(demo demo)"

ping_ok() {
	[ "$(status_of '{"jsonrpc":"2.0","id":"p","method":"ping"}')" = 200 ]
}

sessions() {
	"$MCPCTL" -j -s "$CTL" status | sed -n 's/^  "sessions": \([0-9]*\),/\1/p'
}

python3 "$CLIENT" sessions "$ADDR" "$NSESSIONS" "$T/ids" > "$T/made"
is "$NSESSIONS sessions made" "$(cat "$T/made")" "sessions=$NSESSIONS"
# The first keeps its standalone stream open, read.
python3 "$CLIENT" streams "$ADDR" "$T/ids" 1 "$T/open" "$T/stop" \
    --timeout 120 > "$T/stream.out" &
stream_pid=$!
session
PINGER=$SID
is "all sessions held" "$(sessions)" $((NSESSIONS + 1))

# Until the sweeps have ended the idle ones (at most 60 s), the pinger
# pings every second.
n=0
left=$(sessions)
while [ "${left:-0}" -gt 2 ] && [ "$n" -lt 60 ]; do
	SID=$PINGER
	ping_ok || echo "# a ping failed" >&2
	sleep 1
	n=$((n + 1))
	left=$(sessions)
done
is "the idle sessions expired; the streaming and the pinging one stay" \
    "$left" 2
SID=$PINGER
ok "the pinging session still answers" ping_ok
like "the idle timeout was logged" "$(grep -c 'closed (idle timeout)' "$T/log")" \
    "^$((NSESSIONS - 1))\$"
touch "$T/stop"
wait "$stream_pid"
like "the stream stayed open throughout" "$(cat "$T/stream.out")" \
    "^open=1 closed=0 "
finish

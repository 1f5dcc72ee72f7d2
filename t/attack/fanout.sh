#!/bin/sh
# SPDX-License-Identifier: ISC
# Many sessions, a small max_buffered and a run of list_changed
# notifications: every notification goes to every session, the events kept
# for resumption soon hold all of max_buffered, and from then on each
# notification must shed as much as it adds.  Shedding once took, for each
# stream it trimmed, a walk over every connection and every session to
# find the largest (a trim per stream, thousands per notification: cubic
# in the number of sessions, a gateway of 100,000 sessions stalled for
# minutes).  Now spare events go first, in bulk, from one list: the
# standalone stream's delivered events and those of standalone streams no
# client opened.  Bounds: every stream that reads gets every notification,
# no stream's own events are trimmed (only spare ones are shed), the RSS
# stays under its value before + 32 MiB, and an unrelated session is
# answered throughout and after.
. "$(dirname "$0")/lib.sh"

NSESSIONS=${ATTACK_SESSIONS:-6000}
NSTREAMS=40
NOTIFY=${ATTACK_NOTIFY:-60}
BOUND_KB=32768

quarantine 0
GLOBALS='max_buffered = "1M";'
start_gateway "$(demo demo)"

client sessions "$NSESSIONS" "$T/ids" > "$T/sessions.out"
is "$NSESSIONS sessions made" "$(cat "$T/sessions.out")" "sessions=$NSESSIONS"
session
TRIGGER=$SID
session
PROBER=$SID

# Some of them read their standalone stream; the others never open it.
bg client streams "$T/ids" "$NSTREAMS" "$T/open" "$T/stop" --timeout 600 \
    > "$T/streams.out"
streams_pid=$!
wait_file "$T/open" 60
is "$NSTREAMS standalone streams open" "$(cat "$T/open" 2>/dev/null)" \
    "open=$NSTREAMS"
rss0=$(rss_kb "$GW_PID")
echo "# supervisor RSS before the notifications: $rss0 KiB"
bg rss_sampler "$T/rss" "$T/sampled"
sampler_pid=$!

toggled=0
probed=0
n=0
while [ "$n" -lt "$NOTIFY" ]; do
	SID=$TRIGGER
	if mcp "{\"jsonrpc\":\"2.0\",\"id\":$n,\"method\":\"tools/call\",\"params\":{\"name\":\"demo__toggle_tool\",\"arguments\":{}}}" |
	    data_lines | grep -q 'extra tool'; then
		toggled=$((toggled + 1))
	fi
	SID=$PROBER
	ping_ok && probed=$((probed + 1))
	n=$((n + 1))
done
is "each of $NOTIFY toggles of the demo's tools answered" "$toggled" "$NOTIFY"
is "an unrelated session answered after each" "$probed" "$NOTIFY"
# Let the last fan-outs reach every stream.
sleep 3
touch "$T/stop" "$T/sampled"
wait "$streams_pid"
wait "$sampler_pid"
echo "# the streams: $(cat "$T/streams.out")"
got=$(sed -n 's/.* min=\([0-9]*\) max=\([0-9]*\)$/\1 \2/p' "$T/streams.out")
ok "every reading stream got the same list_changed notifications, at least one ($got)" \
    test -n "$got" -a "${got% *}" -ge 1 -a "${got% *}" = "${got#* }"
like "no reading stream was cut" "$(cat "$T/streams.out")" "closed=0 "
max=$(rss_max "$T/rss")
echo "# supervisor RSS: $rss0 KiB before, at most ${max:-?} KiB during ($(wc -l < "$T/rss") samples)"
ok "the supervisor's RSS stayed under $rss0 + $BOUND_KB KiB (at most ${max:-?} KiB)" \
    test "${max:-999999999}" -lt $((rss0 + BOUND_KB))
shed=$(grep -c 'dropped [0-9]* delivered or unopened' "$T/log")
trims=$(grep -c 'drops its' "$T/log")
echo "# spare sheddings logged: $shed; streams whose own events were trimmed: $trims"
ok "max_buffered was reached and spare events were shed" test "$shed" -ge 1
is "no stream had its own events trimmed (no walk per stream)" "$trims" 0
ok "after: a normal client initializes and calls a tool" call_ok
SID=$PROBER
ok "and the unrelated session still answers" ping_ok
finish

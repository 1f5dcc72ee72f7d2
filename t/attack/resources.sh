#!/bin/sh
# SPDX-License-Identifier: ISC
# Attacks on the daemon's descriptors: thousands of idle connections, and
# connections until it has no descriptor left.  Bounds asserted: a normal
# client is served throughout; the daemon's descriptors come back; out of
# descriptors it uses less than 2 s of CPU in a 5 s window and writes
# fewer than 200 log lines, answers what it refuses with 503 (or closes),
# sheds idle connections to make room, and serves again afterwards.
. "$(dirname "$0")/lib.sh"

TCK=$(getconf CLK_TCK)

# field_of NAME TEXT: the number after NAME= in TEXT (the first one), or 0.
field_of() {
	v=$(printf '%s' "$2" | tr ' ;' '\n\n' | sed -n "s/^$1=\([0-9]*\)\$/\1/p" | head -1)
	echo "${v:-0}"
}

# fds_at_most N: the daemon has at most N descriptors open.
fds_at_most() {
	[ "$(fds "$GW_PID")" -le "$1" ]
}
fds_at_least() {
	[ "$(fds "$GW_PID")" -ge "$1" ]
}

# 5. 5000 idle connections.  Raise our descriptor limit, which the daemon
# inherits, as far as the hard limit lets us; use as many as fit.
hard=$(ulimit -Hn)
want=8192
if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then want=$hard; fi
ulimit -n "$want" 2>/dev/null || true
soft=$(ulimit -n)
N=5000
if [ "$soft" != unlimited ] && [ $((soft - 200)) -lt "$N" ]; then
	N=$((soft - 200))
fi
echo "# descriptor limit $soft (hard $hard): $N idle connections"
start_gateway "$(demo demo)"
session
b0=$(fds "$GW_PID")
bg "$PY" "$ATTACK/client.py" hold "$ADDR" "$N" "$T/r5" "$T/s5" --timeout 90 > "$T/hold5"
hold_pid=$!
wait_file "$T/r5" 60
r=$(cat "$T/r5" 2>/dev/null)
echo "# $r"
opened=$(field_of opened "$r")
ok "$N idle connections opened (${opened:-none})" test "${opened:-0}" -ge "$N"
ok "the daemon holds every one" until_true 20 fds_at_least $((b0 + ${opened:-0}))
f1=$(fds "$GW_PID")
echo "# the daemon's descriptors: $b0 before, $f1 with the connections"
ok "a new client initializes and calls a tool meanwhile" call_ok
ok "an existing session still answers" ping_ok
touch "$T/s5"
wait "$hold_pid"
echo "# $(cat "$T/hold5")"
ok "closing them gives the descriptors back (at most $b0 + 4)" \
    until_true 20 fds_at_most $((b0 + 4))
echo "# the daemon's descriptors after: $(fds "$GW_PID")"
ok "and the daemon serves as before" call_ok

# 6. Out of descriptors: the daemon started with a limit of 128 open files
# (connection cap 128 / 2 = 64, mcp-supervisord(8) LIMITS), quiet (-v
# debug lines are not rate-limited, and are not asked for in production).
stop_gateway
GW_NOFILE=128 GW_VERBOSE= start_gateway "$(demo demo)"
session
base=$(fds "$GW_PID")
echo "# the daemon with 128 files: $base descriptors at rest"

# (a) Connections until refused, at the connection cap.
l0=$(log_lines)
c0=$(cpu_ticks "$GW_PID")
bg "$PY" "$ATTACK/client.py" hold "$ADDR" 200 "$T/r6a" "$T/s6a" --timeout 60 > "$T/hold6a"
pid6a=$!
wait_file "$T/r6a" 30
sleep 5
c1=$(cpu_ticks "$GW_PID")
l1=$(log_lines)
r=$(cat "$T/r6a" 2>/dev/null)
echo "# 200 connections at the cap: $r; CPU $((c1 - c0)) ticks of 1/$TCK s; $((l1 - l0)) log lines"
ok "less than 2 s of CPU meanwhile ($((c1 - c0)) ticks)" test $((c1 - c0)) -lt $((2 * TCK))
ok "fewer than 200 log lines meanwhile ($((l1 - l0)))" test $((l1 - l0)) -lt 200
like "the limit is logged" "$(cat "$T/log")" 'connections \(the limit\), refusing more'
touch "$T/s6a"
wait "$pid6a"
# A tally reads what came: a 503 seen when ready shows as closed at the end.
r0=$(cat "$T/r6a" 2>/dev/null)
r=$(cat "$T/hold6a")
echo "# $r"
r=${r#*at the end: }
held=$(field_of held "$r")
refused=$(($(field_of 503 "$r") + $(field_of closed "$r")))
ok "at most 64 connections are held ($held)" test "$held" -le 64
ok "the others got 503 or a closed connection ($refused of 200)" \
    test $((held + refused)) -eq 200
ok "some got 503" test $(($(field_of 503 "$r0") + $(field_of 503 "$r"))) -ge 1
ok "closing them gives the descriptors back" until_true 20 fds_at_most $((base + 2))
ok "then a client is served again" call_ok

# (b) The connection cap leaves 64 descriptors for the rest, the control
# socket's clients included: 64 of them, as many as there used to be
# room for, get 16 held and the others closed at once, and the daemon
# does not run out.
bg "$PY" "$ATTACK/client.py" unix "$CTL" 64 "$T/r6u" "$T/s6u" --timeout 60 > "$T/hold6u"
pid6u=$!
wait_file "$T/r6u" 20
echo "# control socket: $(cat "$T/r6u" 2>/dev/null)"
ok "64 control clients: the connections at the cap are still refused with 503, not out of descriptors" \
    sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://$ADDR/mcp)\" != 000 ] && ! grep -q 'out of file descriptors' '$T/log'"
touch "$T/s6u"
wait "$pid6u"
r=$(cat "$T/hold6u")
echo "# $r"
is "16 control clients held, the others closed" "$(field_of held "${r#*at the end: }")" 16
ok "mcpctl answers once they are gone" until_true 10 "$MCPCTL" -s "$CTL" status

# Out of descriptors all the same: a daemon with 40 files has a cap of 20
# connections, and 12 descriptors of its own plus 16 control clients
# leave fewer than that.  8 connections idle after a request, then fresh
# connections until there is no descriptor left.
stop_gateway
GW_NOFILE=40 GW_VERBOSE= start_gateway "$(demo demo)"
session
base=$(fds "$GW_PID")
bg "$PY" "$ATTACK/client.py" unix "$CTL" 16 "$T/r6u2" "$T/s6u2" --timeout 60 > "$T/hold6u"
pid6u=$!
wait_file "$T/r6u2" 20
echo "# control socket: $(cat "$T/r6u2" 2>/dev/null)"
bg "$PY" "$ATTACK/client.py" hold "$ADDR" 8 "$T/r6i" "$T/s6i" --timeout 60 \
    --request 'GET /idle HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' > "$T/hold6i"
pid6i=$!
wait_file "$T/r6i" 20
echo "# idle connections: $(cat "$T/r6i" 2>/dev/null)"
l0=$(log_lines)
c0=$(cpu_ticks "$GW_PID")
bg "$PY" "$ATTACK/client.py" hold "$ADDR" 100 "$T/r6b" "$T/s6b" --timeout 60 > "$T/hold6b"
pid6b=$!
wait_file "$T/r6b" 30
sleep 5
c1=$(cpu_ticks "$GW_PID")
l1=$(log_lines)
r=$(cat "$T/r6b" 2>/dev/null)
echo "# 100 more connections, out of descriptors ($(fds "$GW_PID") open): $r; CPU $((c1 - c0)) ticks; $((l1 - l0)) log lines"
ok "the daemon ran out of descriptors" grep -q 'out of file descriptors' "$T/log"
ok "idle connections were shed to make room" grep -q 'closing an idle connection to make room' "$T/log"
ok "less than 2 s of CPU meanwhile ($((c1 - c0)) ticks)" test $((c1 - c0)) -lt $((2 * TCK))
ok "fewer than 200 log lines meanwhile ($((l1 - l0)))" test $((l1 - l0)) -lt 200

# A client of the control socket (mcpctl) while out of descriptors: its
# listener must not spin on accept either (3 s window, 40% as above).
bg "$PY" "$ATTACK/client.py" unix "$CTL" 1 "$T/r6x" "$T/s6x" --timeout 60 > "$T/hold6x"
pid6x=$!
wait_file "$T/r6x" 10
l0=$(log_lines)
c0=$(cpu_ticks "$GW_PID")
sleep 3
c1=$(cpu_ticks "$GW_PID")
l1=$(log_lines)
echo "# a control client waiting: CPU $((c1 - c0)) ticks in 3 s; $((l1 - l0)) log lines"
ok "a waiting control client: less than 1.2 s of CPU in 3 s ($((c1 - c0)) ticks)" \
    test $((c1 - c0)) -lt $((12 * TCK / 10))
ok "a waiting control client: fewer than 200 log lines ($((l1 - l0)))" test $((l1 - l0)) -lt 200

touch "$T/s6b" "$T/s6i" "$T/s6x" "$T/s6u2"
wait "$pid6b" "$pid6i" "$pid6x" "$pid6u"
echo "# fresh: $(cat "$T/hold6b")"
echo "# idle: $(cat "$T/hold6i")"
# What the fresh connections got by the end: 503 for some (one a pause
# of 1 s), nothing yet for those still in the listen queue.
r0=$(cat "$T/r6b" 2>/dev/null)
r=$(cat "$T/hold6b")
r=${r#*at the end: }
ok "a refused client got 503 ($r)" test $(($(field_of 503 "$r0") + $(field_of 503 "$r"))) -ge 1
others=$(printf '%s' "$r" | tr ' ' '\n' | grep -Ev '^(held|closed|503)=' | tr '\n' ' ')
is "no other answer than 503 or a close" "$others" ""
r=$(cat "$T/hold6i")
is "the 8 idle connections were the ones shed" "$(printf '%s' "${r#*at the end: }" | tr ' ' '\n' | grep '^closed=')" closed=8
ok "closing everything gives the descriptors back" until_true 20 fds_at_most $((base + 2))
echo "# descriptors after: $(fds "$GW_PID") (at rest: $base)"
# Connections the clients left in the listen queue are taken (and end)
# first, so a client may be refused once more meanwhile.
ok "then a client is served again" until_true 10 call_ok
ok "and mcpctl answers" "$MCPCTL" -s "$CTL" status
finish

#!/bin/sh
# SPDX-License-Identifier: ISC
# Attacks on the control socket (mode 0660, group mcp-supervisor: local
# and semi-trusted clients, the service's own user among them, which its
# upstreams run as).  Bounds asserted: a client that sends requests and
# never reads their replies gets no more read from it once 64 KiB wait
# (the supervisor's RSS stays within 16 MiB of its RSS before); a request
# trickled a byte a second is cut 30 s after the connection, not before and
# never answered; and neither idle connections nor stalled readers, however
# many, keep mcpctl out: once they have done nothing for a second, one of
# them is closed to make room for a new connection.
. "$(dirname "$0")/lib.sh"

# field_of NAME TEXT: the number after NAME= in TEXT (the first one), or 0.
field_of() {
	v=$(printf '%s' "$2" | tr ' ;' '\n\n' | sed -n "s/^$1=\([0-9.]*\)\$/\1/p" | head -1)
	echo "${v:-0}"
}

# ctl_ok: mcpctl status answers (0, or 3: answered, something unhealthy).
ctl_ok() {
	"$MCPCTL" -s "$CTL" status > /dev/null 2>&1 && return 0
	[ $? -eq 3 ]
}

# Freed memory in ASan's quarantine would count in the RSS (lib.sh).
quarantine 0
start_gateway "$(demo demo)"
base=$(fds "$GW_PID")

# A request trickled a byte a second (61 bytes of body: a minute), in the
# background while the rest runs on fewer connections than the limit.
bg "$PY" "$ATTACK/client.py" ctltrickle "$CTL" 40 70 > "$T/trickle"
trickle_pid=$!

# 1. Two connections send up to 20 000 "tools" requests each (about
# 2 KiB of reply per 36 bytes of request) and read nothing, for 6 s.
sleep 0.5
r0=$(rss_kb "$GW_PID")
bg rss_sampler "$T/rss1" "$T/rss1.stop"
bg "$PY" "$ATTACK/client.py" ctlflood "$CTL" 2 20000 6 "$T/r1" "$T/s1" > "$T/flood1"
pid1=$!
wait_file "$T/r1" 30
r=$(cat "$T/r1" 2>/dev/null)
touch "$T/rss1.stop"
max=$(rss_max "$T/rss1")
echo "# flood: $r; RSS before $r0 KiB, at most $max KiB"
ok "the flood ran (${r:-nothing})" test "$(field_of connections "$r")" -eq 2
ok "the supervisor stopped reading them: neither sent all 20 000" \
    test "$(field_of blocked "$r")" -eq 2
ok "its RSS stays under its RSS before + 16 MiB ($max KiB, $r0 before)" \
    test "${max:-999999999}" -lt $((r0 + 16384))
ok "mcpctl answers meanwhile" ctl_ok
touch "$T/s1"
wait "$pid1"
ok "and after" ctl_ok

# 2. The trickled request: cut at its deadline (30 s), never answered.
wait "$trickle_pid"
r=$(cat "$T/trickle")
echo "# trickle: $r"
el=$(field_of elapsed "$r")
ok "a trickled request is cut ($r)" test "$(field_of closed "$r")" -eq 1
is "and not answered" "$(field_of answered "$r")" 0
ok "not before 30 s from the connection ($el s)" test "${el%.*}" -ge 29

# 3. 32 idle connections (twice the limit of 16): the first 16 are held,
# and after a second of nothing each new one closes the oldest.
bg "$PY" "$ATTACK/client.py" unix "$CTL" 32 "$T/r3" "$T/s3" --timeout 60 > "$T/hold3"
pid3=$!
wait_file "$T/r3" 30
echo "# idle: $(cat "$T/r3" 2>/dev/null)"
sleep 1.5
ok "16 and more idle connections: mcpctl answers (within 5 s; they last 30)" until_true 5 ctl_ok
ok "and again" ctl_ok
ok "and again" ctl_ok
touch "$T/s3"
wait "$pid3"
r=$(cat "$T/hold3")
echo "# $r"
held=$(field_of held "${r#*at the end: }")
ok "at most 16 were held ($held)" test "$held" -le 16
like "the daemon says why it closed one" "$(cat "$T/log")" \
    'control: 16 connections: closing one that did nothing for [0-9]+ ms'

# 4. 16 connections that send requests and read nothing (the limit, all
# of it stalled readers): mcpctl still gets in, and memory stays bounded.
r0=$(rss_kb "$GW_PID")
bg "$PY" "$ATTACK/client.py" ctlflood "$CTL" 16 2000 3 "$T/r4" "$T/s4" \
    --command status > "$T/flood4"
pid4=$!
wait_file "$T/r4" 30
r=$(cat "$T/r4" 2>/dev/null)
echo "# 16 stalled readers: $r"
ok "16 stalled readers, all blocked (${r:-nothing})" test "$(field_of blocked "$r")" -eq 16
sleep 1.5
ok "16 stalled readers: mcpctl answers (within 5 s; they last 30)" until_true 5 ctl_ok
ok "and again" ctl_ok
r1=$(rss_kb "$GW_PID")
echo "# RSS $r0 KiB before, $r1 KiB with them"
ok "RSS with them under RSS before + 32 MiB ($r1 KiB)" test "$r1" -lt $((r0 + 32768))
touch "$T/s4"
wait "$pid4"

ok "closing them gives the descriptors back" until_true 20 sh -c "[ \$(ls /proc/$GW_PID/fd | wc -l) -le $((base + 1)) ]"
ok "and mcpctl answers" ctl_ok
ok "and a client is served" call_ok
finish

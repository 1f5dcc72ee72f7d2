#!/bin/sh
# SPDX-License-Identifier: ISC
# Supervision that survives anything an upstream does: crash loops, hangs,
# wrappers that leave processes behind; mcpctl stop, start and restart;
# lazy upstreams; workers confined before their upstream starts.
. "$(dirname "$0")/lib.sh"

TAG=sup$$
SLEEPER=31$$
LEFT=32$$
[ "$(id -u)" -eq 0 ] && USER_LINE='user = "nobody";' || USER_LINE=
# The upstream run as nobody needs a demo server nobody can reach, which
# the build tree's is not when it lies in a home directory of mode 0700
# (Debian 12's default, and where dpkg-buildpackage often runs).
DEMO_USER=$DEMO
if [ -n "$USER_LINE" ] &&
    ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$DEMO"; then
	mkdir -m 0755 "$T/bin"
	chmod 0711 "$T"
	cp "$DEMO" "$T/bin/"
	DEMO_USER=$T/bin/mcp-demo-server
fi
GLOBALS='auth_tokens = [ "${env:MCPS_TEST_TOKEN}" ];'
export MCPS_TEST_TOKEN=token-for-the-tests-$TAG
WAIT_STATE=none
GW_IGNORE=QUIT
start_gateway \
    "{ name = \"d$TAG\"; transport = \"stdio\"; command = [ \"$DEMO_USER\", \"--test-tools\", \"--name\", \"d$TAG\" ]; rlimit_nofile = 64; $USER_LINE }" \
    "{ name = \"loop\"; transport = \"stdio\"; command = [ \"/bin/false\" ]; restart_delay = 1; restart_max_delay = 1; max_failures = 3; }" \
    "$(demo "lazy$TAG" 'lazy = true;')" \
    "$(demo "hang$TAG" 'ping_interval = 1; ping_timeout = 1; restart_delay = 1;')" \
    "{ name = \"wrap\"; transport = \"stdio\"; command = [ \"/bin/sh\", \"-c\", \"setsid sleep $SLEEPER & $DEMO --test-tools --name wrap$TAG\" ]; }" \
    "{ name = \"deaf$TAG\"; transport = \"stdio\"; command = [ \"/bin/sh\", \"-c\", \"trap '' TERM; $DEMO --test-tools --name deaf$TAG; sleep 30\" ]; }" \
    "$(demo "gone$TAG" 'isolation = "per-session";')" \
    "{ name = \"tell\"; transport = \"stdio\"; env = { API_TOKEN = \"tell-secret-$TAG\"; SHOWN = \"tell-shown-$TAG\"; }; command = [ \"/bin/sh\", \"-c\", \"echo \\\"my API_TOKEN is \$API_TOKEN, SHOWN is \$SHOWN\\\" >&2; exec $DEMO --name tell$TAG\" ]; }" \
    "{ name = \"grp\"; transport = \"stdio\"; isolation = \"per-session\"; command = [ \"/bin/sh\", \"-c\", \"(trap '' TERM; exec sleep $LEFT) & trap 'echo term >> $T/order' TERM; $DEMO --test-tools --name grp$TAG; echo eof >> $T/order\" ]; }"
AUTH="Authorization: Bearer $MCPS_TEST_TOKEN"

wait_state ready "d$TAG"
wait_state ready "hang$TAG"
wait_state ready wrap
# An upstream that prints its settings: a value whose name looks secret
# is masked in the log, another is not.
wait_state ready tell
like "an upstream's stderr is logged, its secret env values masked" \
    "$(grep 'stderr: my API_TOKEN' "$T/log")" "my API_TOKEN is \\*\\*\\*, SHOWN is tell-shown-$TAG\$"
ok "and the value is nowhere in the log" sh -c "! grep -q 'tell-secret' '$T/log'"
wait_state ready "deaf$TAG"
is "a lazy upstream is idle before first use" "$(state "lazy$TAG")" idle

# Bearer tokens.
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":0,"method":"ping"}' "$URL")
is "no bearer token: 401" "$code" 401
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer wrong-token-of-some-length' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":0,"method":"ping"}' "$URL")
is "a wrong bearer token: 401" "$code" 401
SID=
curl -s -D "$T/headers" -o "$T/init" -H "$AUTH" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' \
    "$URL"
SID=$(tr -d '\r' < "$T/headers" | awk 'tolower($1) == "mcp-session-id:" { print $2 }')
like "the right bearer token: a session" "$SID" '^[A-Za-z0-9_-]+[.][0-9a-f]{32}$'
call() { mcp "$1" -H "$AUTH" | data_lines; }
call '{"jsonrpc":"2.0","method":"notifications/initialized"}' > /dev/null

# Lazy: the first session starts it.
wait_state ready "lazy$TAG"
out=$(call '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lazy'"$TAG"'__echo","arguments":{"text":"awake"}}}')
like "a lazy upstream starts on first use" "$out" '"text":"awake"'

# A crash loop ends in failed; mcpctl restart tries again.
wait_state failed loop
like "a crash loop is marked failed" "$("$MCPCTL" -s "$CTL" status)" 'loop +stdio +failed'
like "and says why" "$(cat "$T/log")" 'upstream loop: failed 3 times in a row, giving up'
"$MCPCTL" -s "$CTL" restart loop
like "mcpctl restart retries a failed upstream" "$(cat "$T/log")" 'upstream loop: starting \(mcpctl\)'

# mcpctl stop, start and restart.
"$MCPCTL" -s "$CTL" stop "d$TAG"
wait_state stopped "d$TAG"
out=$(call '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"d'"$TAG"'__echo","arguments":{"text":"x"}}}')
mcp '{"jsonrpc":"2.0","id":3,"method":"tools/list"}' -H "$AUTH" > "$T/list"
is "a stopped upstream's tools are gone from tools/list" "$(grep -c "d${TAG}__echo" "$T/list")" 0
like "mcpctl stop: its tools are no longer routed" "$out" '"code":-32602'
ok "mcpctl stop twice is refused" sh -c "! '$MCPCTL' -s '$CTL' stop 'd$TAG' 2>/dev/null"
"$MCPCTL" -s "$CTL" start "d$TAG"
wait_state ready "d$TAG"
old=$(field "d$TAG" 5)
"$MCPCTL" -s "$CTL" restart "d$TAG"
out=$(call '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"d'"$TAG"'__echo","arguments":{"text":"waited"}}}')
like "a call during mcpctl restart waits for the new worker" "$out" '"text":"waited"'
for _ in $(seq 100); do
	new=$(field "d$TAG" 5)
	[ "$(state "d$TAG")" = ready ] && [ "$new" != "$old" ] && [ "$new" != - ] && break
	sleep 0.1
done
ok "mcpctl restart gives a new upstream process" [ "$new" != "$old" ]
# mcpctl start while the worker is still exiting (its upstream ignores
# SIGTERM and outlives its stdin, so the worker waits 3 s before SIGKILL):
# the new one follows.
old=$(field "deaf$TAG" 5)
"$MCPCTL" -s "$CTL" stop "deaf$TAG"
ok "mcpctl start while the worker is still exiting is accepted" "$MCPCTL" -s "$CTL" start "deaf$TAG"
is "and the upstream is starting" "$(state "deaf$TAG")" starting
wait_state ready "deaf$TAG"
like "it started once the old worker had exited" "$(cat "$T/log")" "upstream deaf$TAG: starting once its worker has exited"
ok "with a new upstream process" [ "$(field "deaf$TAG" 5)" != "$old" ]
ok "mcpctl with an unknown name fails" sh -c "! '$MCPCTL' -s '$CTL' restart nosuch 2>/dev/null"

# The worker is confined before its upstream starts.
pid=$(field "d$TAG" 5)
like "no_new_privs" "$(grep NoNewPrivs /proc/"$pid"/status)" 'NoNewPrivs:[[:space:]]+1'
like "rlimit_nofile" "$(grep 'Max open files' /proc/"$pid"/limits)" 'Max open files +64 +64'
# The daemon was started ignoring SIGQUIT: an upstream starts with every
# signal's default disposition all the same.
sigign() { awk '/^SigIgn:/ { print $2 }' "/proc/$1/status"; }
is "the daemon ignores SIGQUIT (GW_IGNORE)" "$(( 0x$(sigign "$GW_PID") & 4 ))" 4
is "its upstream does not" "$(( 0x$(sigign "$pid") & 4 ))" 0
if [ -n "$USER_LINE" ]; then
	like "user: the upstream runs as nobody" "$(grep '^Uid:' /proc/"$pid"/status)" "Uid:[[:space:]]+$(id -u nobody)[[:space:]]"
	is "user: with nobody's HOME, USER and LOGNAME" \
	    "$(tr '\0' '\n' < /proc/"$pid"/environ | grep -E '^(HOME|USER|LOGNAME)=' | sort | tr '\n' ' ')" \
	    "HOME=$(getent passwd nobody | cut -d: -f6) LOGNAME=nobody USER=nobody "
fi

# A hung upstream is found by the liveness ping and restarted.
out=$(call '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"hang'"$TAG"'__hang","arguments":{}}}')
like "a hung upstream: the call fails" "$out" '"id":4,"error":\{"code":-32000,"message":"upstream hang'"$TAG"': stopped answering'
wait_state ready "hang$TAG"
is "and it is restarted" "$(field "hang$TAG" 6)" 1

ok "the token is never logged" sh -c "! grep -q 'token-for-the-tests' '$T/log'"

# A session's instance is stopped as the stdio transport has it, stdin
# closed before any SIGTERM; what it started in its group goes too, even
# ignoring SIGTERM once the program itself has exited.
# (The upstream's shared instance, which lists its tools, has its own.)
left() { pgrep -f "^sleep $LEFT" | wc -l | tr -d ' '; }
out=$(call '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"grp__echo","arguments":{"text":"mine"}}}')
like "a session's instance answers" "$out" '"text":"mine"'
n=$(left)
is "what the shared and the session's instances started runs" "$n" 2
curl -s -o /dev/null -X DELETE -H "$AUTH" -H "Mcp-Session-Id: $SID" "$URL"
for _ in $(seq 100); do [ "$(left)" -ge "$n" ] || break; sleep 0.1; done
is "the session's end kills the instance's whole group" "$(left)" 1
is "its stdin was closed before any SIGTERM" "$(head -n 1 "$T/order")" eof
SID=

# A wrapper that leaves a process behind: nothing survives a stop.
is "the wrapper's stray process runs" "$(pgrep -f "^sleep $SLEEPER" | wc -l | tr -d ' ')" 1
"$MCPCTL" -s "$CTL" stop wrap
wait_state stopped wrap
for _ in $(seq 50); do pgrep -f "^sleep $SLEEPER" > /dev/null || break; sleep 0.1; done
is "stop kills the whole tree, stray process included" "$(pgrep -f "^sleep $SLEEPER" | wc -l | tr -d ' ')" 0
is "no wrapped upstream left" "$(pgrep -f -- "--name wrap$TAG" | wc -l | tr -d ' ')" 0

# A stopped instance whose whole group is gone (it exits at stdin's end):
# its group's number is free, and the SIGTERM and SIGKILL due 1 s and 4 s
# after the stop must not reach a new group that took it.  As root the
# number is taken on purpose (ns_last_pid) by a process of our own.
SID=
curl -s -D "$T/headers" -o /dev/null -H "$AUTH" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' \
    "$URL"
SID=$(tr -d '\r' < "$T/headers" | awk 'tolower($1) == "mcp-session-id:" { print $2 }')
call '{"jsonrpc":"2.0","method":"notifications/initialized"}' > /dev/null
out=$(call '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"gone'"$TAG"'__echo","arguments":{"text":"brief"}}}')
like "a brief instance answers" "$out" '"text":"brief"'
gpid=$(grep "mcp-worker gone$TAG info: started .* (pid " "$T/log" | tail -n 1 | sed 's/.*(pid \([0-9]*\)).*/\1/')
curl -s -o /dev/null -X DELETE -H "$AUTH" -H "Mcp-Session-Id: $SID" "$URL"
SID=
for _ in $(seq 50); do kill -0 "$gpid" 2> /dev/null || break; sleep 0.02; done
if [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/kernel/ns_last_pid ] &&
    ! kill -0 "$gpid" 2> /dev/null; then
	for _ in 1 2 3 4 5; do
		echo $((gpid - 1)) > /proc/sys/kernel/ns_last_pid
		setsid sleep 33$$ &
		taker=$!
		[ "$taker" -eq "$gpid" ] && break
		kill "$taker"
		taker=
	done
	if [ -n "$taker" ]; then
		sleep 5
		ok "a stopped instance's group number, taken by another group, is not signalled" kill -0 "$taker"
		kill "$taker" 2> /dev/null
	else
		echo "# ns_last_pid: pid $gpid not taken (a busy machine); not checked"
	fi
else
	echo "# not root, or the instance did not end: the reuse of its group is not checked"
fi
finish

#!/bin/sh
# Configuration reload (mcpctl reload and SIGHUP): upstreams added, changed
# and removed by name while sessions carry on; an unchanged upstream is not
# touched; a removed one fails its calls and leaves no process behind; a
# file with an error, or a token that cannot be read, changes nothing.
. "$(dirname "$0")/lib.sh"

TAG=rl$$
start_gateway "$(demo "a$TAG")" "$(demo "b$TAG")" "$(demo "k$TAG")"
session

upstream_pid() { field "$1" 5; }
worker_pid() { field "$1" 4; }
tools() { mcp '{"jsonrpc":"2.0","id":"l","method":"tools/list"}' | data_lines; }
lacks() { ! printf '%s' "$1" | grep -q -- "$2"; }
call() {
	mcp '{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"'"$1"'","arguments":{"text":"hi"}}}' | data_lines
}

# The session's standalone stream, to see list_changed.
curl -s -N --max-time 20 -H 'Accept: text/event-stream' \
    -H "Mcp-Session-Id: $SID" "$URL" > "$T/get" &
GET_PID=$!

a_worker=$(worker_pid "a$TAG")
a_upstream=$(upstream_pid "a$TAG")
b_upstream=$(upstream_pid "b$TAG")
k_upstream=$(upstream_pid "k$TAG")
k_worker=$(worker_pid "k$TAG")
like "the upstreams have processes" "$a_upstream $b_upstream $k_upstream $k_worker" '^[0-9]+ [0-9]+ [0-9]+ [0-9]+$'

# A call in flight to the upstream about to be removed.
mcp '{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"a'"$TAG"'__sleep","arguments":{"ms":15000}}}' --max-time 20 > "$T/c1" &
BG=$!
sleep 0.5

# Remove a, change b's prefix, keep k, add c.
write_conf "$(demo "c$TAG")" "$(demo "b$TAG" 'prefix = "bee_";')" "$(demo "k$TAG")"
out=$("$MCPCTL" -s "$CTL" reload)
is "mcpctl reload says what changed" "$out" "reloaded: added c$TAG; changed b$TAG; removed a$TAG"
wait "$BG"
like "a call in flight to a removed upstream fails" "$(data_lines < "$T/c1")" '"id":"s1","error":\{"code":-32000,"message":"upstream a'"$TAG"' was removed from the configuration"'
wait_state ready
ok "the removed upstream is gone from mcpctl status" sh -c "! '$MCPCTL' -s '$CTL' status | grep -q '^a$TAG '"
for _ in $(seq 100); do
	kill -0 "$a_worker" 2>/dev/null || kill -0 "$a_upstream" 2>/dev/null || break
	sleep 0.05
done
ok "its worker has exited" sh -c "! kill -0 $a_worker 2>/dev/null"
ok "its upstream process has exited" sh -c "! kill -0 $a_upstream 2>/dev/null"
like "the removal is logged" "$(cat "$T/log")" "upstream a$TAG: removed from the configuration, stopping it"

list=$(tools)
like "the added upstream's tools are listed" "$list" "\"c${TAG}__echo\""
like "the changed upstream's tools have the new prefix" "$list" '"bee_echo"'
ok "the removed upstream's tools are not listed" lacks "$list" "a${TAG}__"
ok "nor the old prefix" lacks "$list" "b${TAG}__"
like "a call to the added upstream" "$(call "c${TAG}__echo")" '"text":"hi"'
like "a call to the changed upstream under its new name" "$(call bee_echo)" '"text":"hi"'
like "a call by a removed name is an unknown tool" "$(call "a${TAG}__echo")" '"code":-32602'
ok "the changed upstream was restarted" [ "$(upstream_pid "b$TAG")" != "$b_upstream" ]
is "the unchanged upstream kept its process" "$(upstream_pid "k$TAG")" "$k_upstream"
is "and its worker" "$(worker_pid "k$TAG")" "$k_worker"
like "the unchanged upstream still answers" "$(call "k${TAG}__echo")" '"text":"hi"'
for _ in $(seq 100); do
	grep -q 'notifications/tools/list_changed' "$T/get" && break
	sleep 0.05
done
like "the session is told the tool list changed" "$(cat "$T/get")" 'notifications/tools/list_changed'

# A file with an error changes nothing and says where.
printf 'servers = ( { name = "x"; transport = "carrier pigeon"; } );\n' > "$T/conf"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
is "a bad file: mcpctl reload fails" "$rc" 1
like "with the file and line" "$out" "$T/conf:1: "
like "nothing changed" "$(call "c${TAG}__echo")" '"text":"hi"'

# A token that cannot be read changes nothing either.
unset MCPS_NO_SUCH_TOKEN || true
GLOBALS='auth_tokens = [ "${env:MCPS_NO_SUCH_TOKEN}" ];'
write_conf "$(demo "k$TAG")"
GLOBALS=
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
is "an unreadable token: mcpctl reload fails" "$rc" 1
like "and says which" "$out" 'auth_tokens: entry 1'
like "no token is asked for" "$(call "c${TAG}__echo")" '"text":"hi"'

# SIGHUP does the same; a new listen address waits for a restart.
LISTEN=127.0.0.1:1
write_conf "$(demo "c$TAG")" "$(demo "b$TAG" 'prefix = "bee_";')" "$(demo "k$TAG")" "$(demo "e$TAG")" "$(demo "z$TAG" 'lazy = true;')"
LISTEN=
kill -HUP "$GW_PID"
for _ in $(seq 100); do
	[ "$(state "e$TAG")" = ready ] && break
	sleep 0.05
done
is "SIGHUP reloads: the added upstream is ready" "$(state "e$TAG")" ready
for _ in $(seq 100); do
	[ "$(state "z$TAG")" = ready ] && break
	sleep 0.05
done
is "an added lazy upstream starts: a session exists" "$(state "z$TAG")" ready
like "the listen change is logged as waiting for a restart" "$(cat "$T/log")" 'reload: listen changed to 127.0.0.1:1: it takes effect when the daemon restarts'
like "and the old address still serves" "$(call "e${TAG}__echo")" '"text":"hi"'
is "the unchanged upstream was never restarted" "$(upstream_pid "k$TAG")" "$k_upstream"

kill "$GET_PID" 2>/dev/null || true
wait "$GET_PID" 2>/dev/null || true
stop_gateway
is "no demo process of this test is left" "$(pgrep -f -- "--name [abckez]$TAG" | wc -l | tr -d ' ')" 0
finish

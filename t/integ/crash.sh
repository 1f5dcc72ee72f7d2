#!/bin/sh
# SPDX-License-Identifier: ISC
# kill -9 of an upstream or of its worker mid-call: the call gets an error
# at once, other upstreams and sessions carry on, the upstream comes back
# with backoff, and nothing is left behind.
. "$(dirname "$0")/lib.sh"

TAG=crash$$
start_gateway "$(demo "a$TAG")" "$(demo "b$TAG")"
session

# mcp_bg BODY OUT: a call in the background, its output in OUT.
mcp_bg() {
	mcp "$1" --max-time 20 > "$2" &
	BG=$!
}

upstream_pid() { field "$1" 5; }
worker_pid() { field "$1" 4; }
procs() { pgrep -f -- "--name $1" | wc -l | tr -d ' '; }

# The upstream process dies mid-call.
mcp_bg '{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"a'"$TAG"'__sleep","arguments":{"ms":15000}}}' "$T/c1"
sleep 0.5
kill -9 "$(upstream_pid "a$TAG")"
wait "$BG"
like "killing the upstream fails the call in flight" "$(data_lines < "$T/c1")" '"id":"s1","error":\{"code":-32000,"message":"upstream a'"$TAG"': killed by signal 9'
out=$(mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b'"$TAG"'__echo","arguments":{"text":"b lives"}}}' | data_lines)
like "the other upstream carries on" "$out" '"text":"b lives"'
out=$(mcp '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a'"$TAG"'__echo","arguments":{"text":"x"}}}' | data_lines)
like "a call during backoff fails fast with a clear error" "$out" '"code":-32000,"message":"upstream a'"$TAG"' is (restarting|starting)'
wait_state ready "a$TAG"
is "restarted once" "$(field "a$TAG" 6)" 1
out=$(mcp '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a'"$TAG"'__echo","arguments":{"text":"back"}}}' | data_lines)
like "the session survives and the upstream is back" "$out" '"text":"back"'

# The worker dies mid-call: its upstream must not outlive it.
old_upstream=$(upstream_pid "a$TAG")
mcp_bg '{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"a'"$TAG"'__sleep","arguments":{"ms":15000}}}' "$T/c2"
sleep 0.5
kill -9 "$(worker_pid "a$TAG")"
wait "$BG"
like "killing the worker fails the call in flight" "$(data_lines < "$T/c2")" '"id":"s2","error":\{"code":-32000,"message":"upstream a'"$TAG"' exited during the call"'
for _ in $(seq 50); do kill -0 "$old_upstream" 2>/dev/null || break; sleep 0.1; done
ok "the orphaned upstream is gone" sh -c "! kill -0 $old_upstream 2>/dev/null"
wait_state ready "a$TAG"
is "restarted twice" "$(field "a$TAG" 6)" 2
like "backoff doubles" "$(cat "$T/log")" 'restarting in 1 s.*restarting in 2 s'

# The upstream crashes by itself mid-call (the crash tool).
out=$(mcp '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a'"$TAG"'__crash","arguments":{"code":7}}}' | data_lines)
like "an upstream that exits mid-call: error with its status" "$out" '"id":5,"error":\{"code":-32000,"message":"upstream a'"$TAG"': exited with status 7"'
is "not ready from the moment the worker reports it" "$(state "a$TAG")" backoff
wait_state ready "a$TAG"
like "mcpctl shows the last error" "$("$MCPCTL" -s "$CTL" status)" "exited with status 7"

# Its last answer, written without a newline just before it exits.
out=$(mcp '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"a'"$TAG"'__crash","arguments":{"code":0,"answer":"last words"}}}' | data_lines)
like "an answer without its newline at exit still arrives" "$out" '"id":6,"result":\{"content":\[\{"type":"text","text":"last words"\}\]'
wait_state ready "a$TAG"

# Stopping the daemon leaves no process behind; so does killing it.
is "one upstream process per upstream" "$(procs "a$TAG")" 1
kill -TERM "$GW_PID"
for _ in $(seq 100); do kill -0 "$GW_PID" 2>/dev/null || break; sleep 0.1; done
ok "the daemon exits on SIGTERM" sh -c "! kill -0 $GW_PID 2>/dev/null"
is "no upstream left after stop" "$(procs "$TAG")" 0

start_gateway "$(demo "c$TAG")"
worker=$(worker_pid "c$TAG")
kill -9 "$GW_PID"
for _ in $(seq 50); do
	[ "$(procs "c$TAG")" -eq 0 ] && ! kill -0 "$worker" 2>/dev/null && break
	sleep 0.1
done
ok "kill -9 of the supervisor: its worker exits" sh -c "! kill -0 $worker 2>/dev/null"
is "kill -9 of the supervisor: its upstream exits" "$(procs "c$TAG")" 0
finish

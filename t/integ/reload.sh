#!/bin/sh
# SPDX-License-Identifier: ISC
# Configuration reload (mcpctl reload and SIGHUP): upstreams added, changed
# and removed by name while sessions carry on; an unchanged upstream is not
# touched; a removed one fails its calls and leaves no process behind; a
# file with an error, a token that cannot be read, or an access log that
# cannot be opened, changes nothing (the request_state_key included); a
# new instance name waits for a restart everywhere, 2026-07-28 tokens
# included; the lock file (ws_lockfile) is moved, removed and added; an
# access log that cannot be reopened is told of once.
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
# Nor does it log a new listen address as waiting for a restart.
unset MCPS_NO_SUCH_TOKEN || true
GLOBALS='auth_tokens = [ "${env:MCPS_NO_SUCH_TOKEN}" ];'
LISTEN=127.0.0.1:2
write_conf "$(demo "k$TAG")"
GLOBALS=
LISTEN=
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
is "an unreadable token: mcpctl reload fails" "$rc" 1
like "and says which" "$out" 'auth_tokens: entry 1'
like "no token is asked for" "$(call "c${TAG}__echo")" '"text":"hi"'
ok "the refused reload logs no change waiting for a restart" lacks "$(cat "$T/log")" 'listen changed to 127.0.0.1:2'

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

# All or nothing, and the instance waits for a restart everywhere: in
# session ids, mcpctl status and the requestState tokens of 2026-07-28
# clients ("mcpsg1.<instance>.").  modern ARGS-JSON [STATE [ANSWER]]: a
# 2026-07-28 tools/call of the sampling tool; prints its answer's result,
# or with STATE and ANSWER, retries with requestState STATE and ANSWER as
# the text of every input request's sampling answer (from the file
# $T/ir, the input_required result the call before printed).
modern() {
	python3 - "$URL" "$1" "${2:-}" "${3:-}" "$T/ir" <<'PY'
import json, sys, urllib.request
url, args, state, answer, irfile = sys.argv[1:6]
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "hand", "version": "1"}}
params = {"name": "demo__sample", "arguments": json.loads(args), "_meta": meta}
if state:
    ir = json.load(open(irfile))
    params["requestState"] = state
    params["inputResponses"] = {k: {"role": "assistant", "model": "m",
        "content": {"type": "text", "text": answer}} for k in ir["inputRequests"]}
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
req = urllib.request.Request(url, body.encode(), {
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "demo__sample"})
text = urllib.request.urlopen(req, timeout=20).read().decode()
msgs = [json.loads(l[6:]) for l in text.splitlines() if l.startswith("data: ")] or [json.loads(text)]
result = [m for m in msgs if "id" in m][-1]
out = result.get("result", result)
if not state:
    json.dump(out, open(irfile, "w"))
print(json.dumps(out))
PY
}
KEY1=first-request-state-key-0123456789abcdef
KEY2=other-request-state-key-0123456789abcdef
GLOBALS="instance = \"rl1\"; request_state_key = \"$KEY1\";"
start_gateway "$(demo demo 'isolation = "per-session";')"
out=$(modern '{"prompt":"before"}')
like "a 2026-07-28 call that samples: input_required, its token names the instance" "$out" \
    '"resultType": "input_required".*"requestState": "mcpsg1[.]rl1[.]'
STATE1=$(sed -n 's/.*"requestState": "\([^"]*\)".*/\1/p' "$T/ir")

# A reload the access log refuses, with a new key and instance: nothing
# changes, the key included (the token minted before still resumes).
GLOBALS="instance = \"rl2\"; request_state_key = \"$KEY2\"; access_log = \"$T/no/such/dir/access.log\";"
write_conf "$(demo demo 'isolation = "per-session";')"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
like "an access log that cannot be opened: mcpctl reload fails" "$rc $out" "^1 mcpctl: access_log $T/no/such/dir/access.log: No such file"
like "the token minted before still resumes its call: the key did not change" \
    "$(modern '{"prompt":"before"}' "$STATE1" 'answered after the refused reload')" \
    '"text": "[^"]*answered after the refused reload'
out=$(modern '{"prompt":"after"}')
like "new tokens still name the running instance" "$out" '"requestState": "mcpsg1[.]rl1[.]'
# Resumed before the next call parks: these tokenless requests are one
# principal, whose upstream requests are refused while two of its calls
# are in flight (they cannot be told apart).
STATE3=$(sed -n 's/.*"requestState": "\([^"]*\)".*/\1/p' "$T/ir")
like "... and resumes its call" "$(modern '{"prompt":"after"}' "$STATE3" 'after, answered')" \
    '"text": "[^"]*after, answered'

# A reload that succeeds with a new instance: the instance stays rl1
# everywhere until a restart; the new key is taken.
GLOBALS="instance = \"rl2\"; request_state_key = \"$KEY2\";"
write_conf "$(demo demo 'isolation = "per-session";')"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
like "a new instance: the reload warns it waits for a restart" "$rc $out" \
    '^0 .*mcpctl: warning: instance changed to rl2: it takes effect when the daemon restarts \(still rl1\)'
like "mcpctl status: still rl1" "$("$MCPCTL" -j -s "$CTL" status)" '"instance": "rl1"'
SID=
session
like "a new session id: still rl1" "$SID" '^rl1[.][0-9a-f]{32}$'
out=$(modern '{"prompt":"new"}')
like "a new requestState token: still rl1" "$out" '"requestState": "mcpsg1[.]rl1[.]'
STATE2=$(sed -n 's/.*"requestState": "\([^"]*\)".*/\1/p' "$T/ir")
like "and it resumes its call" "$(modern '{"prompt":"new"}' "$STATE2" 'resumed under the new key')" \
    '"text": "[^"]*resumed under the new key'
stop_gateway

# The lock file follows reloads: written at the start with a fresh token;
# moved, or its URL changed (ws_path), with the same token, the old file
# removed; removed with its token; added again with a fresh one; not
# written (the old one kept); removed when ws_path is emptied.  A token
# of auth_tokens stays, so that removing the lock file's leaves a token
# to require.
# token_of FILE: its authToken.  init_status TOKEN: the HTTP status of an
# initialize with it.
token_of() { sed -n 's/.*"authToken": "\([0-9a-f]*\)".*/\1/p' "$1"; }
url_of() { sed -n 's/.*"url": "\([^"]*\)".*/\1/p' "$1"; }
init_status() {
	SID= status_of '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' \
	    -H "Authorization: Bearer $1"
}
OTHER=another-token-0123456789abcdef
GLOBALS="auth_tokens = [ \"$OTHER\" ]; ws_lockfile = \"$T/one.lock\";"
start_gateway "$(demo demo)"
TOK1=$(token_of "$T/one.lock")
like "the lock file has a token" "$TOK1" '^[0-9a-f]{64}$'
is "which opens a session" "$(init_status "$TOK1")" 200
GLOBALS="auth_tokens = [ \"$OTHER\" ]; ws_lockfile = \"$T/two.lock\"; ws_path = \"/socket\";"
write_conf "$(demo demo)"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
is "a reload moving the lock file succeeds" "$rc" 0
ok "the old file is removed" test ! -e "$T/one.lock"
is "the new one has the same token" "$(token_of "$T/two.lock")" "$TOK1"
like "and the new URL" "$(url_of "$T/two.lock")" '^ws://127[.]0[.]0[.]1:[0-9]+/socket$'
is "the token still opens a session" "$(init_status "$TOK1")" 200
GLOBALS="auth_tokens = [ \"$OTHER\" ];"
write_conf "$(demo demo)"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
like "a reload removing ws_lockfile warns" "$rc $out" "^0 .*warning: ws_lockfile removed: $T/two.lock is removed and its token no longer accepted"
ok "the file is removed" test ! -e "$T/two.lock"
is "its token no longer opens a session" "$(init_status "$TOK1")" 401
is "the other token does" "$(init_status "$OTHER")" 200
GLOBALS="auth_tokens = [ \"$OTHER\" ]; ws_lockfile = \"$T/one.lock\";"
write_conf "$(demo demo)"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
TOK2=$(token_of "$T/one.lock")
like "a reload adding it writes a fresh token" "$rc $TOK2" '^0 [0-9a-f]{64}$'
ok "not the old one" test "$TOK2" != "$TOK1"
is "which opens a session" "$(init_status "$TOK2")" 200
is "and the old one does not" "$(init_status "$TOK1")" 401
is "without a token: refused" "$(init_status x)" 401
# Moved to where it cannot be written (a directory): a warning, and the
# file before and its token stay.
mkdir "$T/adir"
GLOBALS="auth_tokens = [ \"$OTHER\" ]; ws_lockfile = \"$T/adir\";"
write_conf "$(demo demo)"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
like "a lock file that cannot be written: the reload warns" "$rc $out" "^0 .*warning: ws_lockfile $T/adir: Is a directory"
is "the file before stays" "$(token_of "$T/one.lock")" "$TOK2"
is "and its token" "$(init_status "$TOK2")" 200
# ws_path emptied: no endpoint, so no lock file and no token.
GLOBALS="auth_tokens = [ \"$OTHER\" ]; ws_lockfile = \"$T/one.lock\"; ws_path = \"\";"
write_conf "$(demo demo)"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
like "ws_path emptied: the reload warns" "$rc $out" "^0 .*warning: ws_lockfile: no WebSocket endpoint \\(ws_path is empty\\), not written; the file is removed and its token no longer accepted"
ok "the file is removed" test ! -e "$T/one.lock"
is "and its token refused" "$(init_status "$TOK2")" 401

# The access log's directory goes, then SIGHUP: the reopen and the
# reload fail on the same file, and say so once.
mkdir "$T/al"
GLOBALS="auth_tokens = [ \"$OTHER\" ]; access_log = \"$T/al/access.log\";"
write_conf "$(demo demo)"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
is "a reload to an access log" "$rc" 0
rm -rf "$T/al"
kill -HUP "$GW_PID"
for _ in $(seq 100); do
	grep -q "access.log: No such file or directory; nothing changed" "$T/log" && break
	sleep 0.05
done
is "a log that cannot be reopened is refused once, not warned of first" \
    "$(grep -c "access_log $T/al/access.log" "$T/log")" 1
GLOBALS=
finish

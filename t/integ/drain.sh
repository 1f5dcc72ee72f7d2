#!/bin/sh
# SPDX-License-Identifier: ISC
# mcpctl drain: no new sessions (initialize, /sse and WebSocket get 503,
# /readyz 404), the existing ones go on, and the daemon stops once none is
# left, or at the deadline.
. "$(dirname "$0")/lib.sh"

# gone: the daemon has exited (its process is reaped by the shell).
gone() { ! kill -0 "$GW_PID" 2>/dev/null; }
until_true() {
	n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		if "$@"; then return 0; fi
		n=$((n - 1))
		sleep 0.1
	done
	return 1
}

start_gateway "$(demo demo)"
BASE=${URL%/mcp}
session
S1=$SID
out=$("$MCPCTL" -s "$CTL" drain 60)
like "drain answers with what is left" "$out" 'draining: no new sessions; 1 session left, stopping when none is or in 60s'
is "/readyz answers 404 while draining" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" 404
is "/healthz is still 200" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz")" 200
SID=
st=$(status_of '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"late","version":"1"}}}')
is "initialize: 503" "$st" 503
like "saying why" "$(cat "$T/body")" 'draining and takes no new sessions'
is "GET /sse: 503" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/sse")" 503
is "a WebSocket upgrade: 503" "$(curl -s -o /dev/null -w '%{http_code}' \
    -H 'Upgrade: websocket' -H 'Connection: Upgrade' -H 'Sec-WebSocket-Version: 13' \
    -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' -H 'Sec-WebSocket-Protocol: mcp' "$BASE/ws")" 503
SID=$S1
out=$(mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"still"}}}' | data_lines)
like "the existing session goes on" "$out" '"text":"still"'
like "status says draining" "$("$MCPCTL" -s "$CTL" status)" 'draining: no new sessions; stops when none is left or in [0-9]+s'
like "check is not a failure while draining" "$("$MCPCTL" -s "$CTL" check)" 'OK: .*\(draining\)'
curl -s -o /dev/null -X DELETE -H "Mcp-Session-Id: $S1" "$URL"
ok "the last session ended: the daemon stops" until_true 15 gone
wait "$GW_PID" 2>/dev/null && rc=0 || rc=$?
is "with status 0" "$rc" 0
like "and says why" "$(cat "$T/log")" 'drain: no session left, stopping'
GW_PID=

# At the deadline, with a session left.
start_gateway "$(demo demo)"
session
"$MCPCTL" -s "$CTL" drain 1 > /dev/null
ok "the deadline passed: the daemon stops" until_true 15 gone
like "saying so" "$(cat "$T/log")" 'drain: the deadline passed with sessions left, stopping'
GW_PID=

# With no session at all, at once.
start_gateway "$(demo demo)"
"$MCPCTL" -s "$CTL" drain > /dev/null
ok "no session: it stops at once" until_true 15 gone
GW_PID=
finish

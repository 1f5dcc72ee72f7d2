#!/bin/sh
# SPDX-License-Identifier: ISC
# Attacks on the checks before a request reaches MCP: Host and Origin
# (DNS rebinding), an Origin that ends the head (read past it?), and a
# session used with another client's bearer token.
. "$(dirname "$0")/lib.sh"

TOKEN_A=attack-token-A-0123456789abcdef
TOKEN_B=attack-token-B-fedcba9876543210

start_gateway "$(demo demo)"
session

# alive: the daemon still runs and answers.
alive() {
	kill -0 "$GW_PID" 2>/dev/null && ping_ok
}

# 8. An Origin header whose value ends the head: a scan that looks past
# the value reads beyond the head's buffer.  403, no sanitizer report
# (finish fails the test on any), and the daemon still answers.
for o in abcd a 'http:/' '://' 'http' 'x://' 'http:' 'https:/'; do
	raw "s:GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nOrigin: $o\r\n\r\n" > "$T/out"
	is "Origin: $o as the last header: 403" "$(code_of < "$T/out")" 403
	ok "... and the daemon lives" alive
done
raw "s:$(head_mcp)Content-Length: 0\r\nOrigin: abcd\r\n\r\n" > "$T/out"
is "POST with Origin: abcd last: 403" "$(code_of < "$T/out")" 403

# 9. Host: it must name this server, and be well-formed.
host_status() {
	curl -s -o "$T/body" -w '%{http_code}' -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H "Mcp-Session-Id: $SID" -H "Host: $1" -d "$PING" "$URL" || true
}
for h in 'localhost:80@evil.com' '127.0.0.1:abc' '127.0.0.1:99999' \
    'localhost:65536' 'localhost:' '[::1' '[::1]:' '[::1]x' 'evil.com' \
    'evil.com:8931' 'localhost.evil.com' '127.0.0.1.nip.io' \
    'localhost:80:80' '[::1]:80@evil.com' 'localhost:+80' \
    '127.0.0.1:-1' 'localhost@evil.com' 'localhost evil.com'; do
	st=$(host_status "$h")
	ok "Host: $h is refused (400 or 403; got $st)" \
	    test "$st" = 400 -o "$st" = 403
done
for h in '' ' '; do
	raw "s:$(head_mcp)Host: $h\r\nContent-Length: 0\r\n\r\n" > "$T/out"
	st=$(code_of < "$T/out")
	ok "Host: '$h' is refused (400 or 403; got $st)" \
	    test "$st" = 400 -o "$st" = 403
done
raw "s:POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nConnection: close\r\nMcp-Session-Id: $SID\r\nContent-Length: 0\r\n\r\n" > "$T/out"
is "no Host at all: 400" "$(code_of < "$T/out")" 400
for h in localhost localhost:8931 127.0.0.1 127.0.0.1:1234 '[::1]:1' \
    localhost:65535; do
	is "Host: $h is allowed" "$(host_status "$h")" 200
done

# 9. Origin: an http(s) origin on a loopback name, nothing more.
origin_status() {
	status_of "$PING" -H "Origin: $1"
}
for o in 'http://localhost:80/path' 'http://localhost:80?x' \
    'http://localhost#x' 'javascript://localhost' 'file://localhost' \
    'http://localhost.evil.com' 'http://127.0.0.1.nip.io' \
    'http://localhost@evil.com' 'http://evil.com@localhost:80/' \
    'http://localhost:abc' 'http://localhost:99999' 'http://[::1' \
    'null' 'http://' 'http://localhost:' 'ws://localhost'; do
	is "Origin: $o is refused" "$(origin_status "$o")" 403
done
for o in 'http://localhost:3000' 'https://127.0.0.1' 'http://[::1]:8080' \
    'http://localhost' 'https://localhost:8443'; do
	is "Origin: $o is allowed" "$(origin_status "$o")" 200
done
ok "the daemon still answers" alive

# 8 and 10, with auth_tokens: the Origin check runs before the token's.
stop_gateway
GLOBALS="auth_tokens = [ \"$TOKEN_A\", \"$TOKEN_B\" ];"
start_gateway "$(demo demo)"
for o in abcd 'http:/' a '://'; do
	raw "s:GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nOrigin: $o\r\n\r\n" > "$T/out"
	is "auth_tokens set, no Authorization, Origin: $o last: 403" "$(code_of < "$T/out")" 403
	ok "... and the daemon lives" kill -0 "$GW_PID"
done
raw "s:GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" > "$T/out"
is "auth_tokens set, no Authorization: 401" "$(code_of < "$T/out")" 401

# 10. A session is bound to the token that created it: with the other
# token it is unknown (404) to POST, GET and DELETE, and it still works
# with its own.
SID=
curl -s -D "$T/headers" -o "$T/init" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H "Authorization: Bearer $TOKEN_A" \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"A","version":"1"}}}' \
    "$URL" || true
SID=$(tr -d '\r' < "$T/headers" | awk 'tolower($1) == "mcp-session-id:" { print $2 }')
mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "Authorization: Bearer $TOKEN_A" > /dev/null
SID_A=$SID
ok "a session made with token A" test -n "$SID_A"
is "ping with A: 200" "$(status_of "$PING" -H "Authorization: Bearer $TOKEN_A")" 200
is "ping with B: 404" "$(status_of "$PING" -H "Authorization: Bearer $TOKEN_B")" 404
like "... as for an unknown session" "$(cat "$T/body")" 'Session not found'
out=$(mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"via B"}}}' \
    -H "Authorization: Bearer $TOKEN_B" -o /dev/null -w '%{http_code}' || true)
is "a tool call with B: 404" "$out" 404
get_with() {
	tok=$1
	shift
	curl -s -o "$T/body" -w '%{http_code}' -m 3 -H 'Accept: text/event-stream' \
	    -H "Mcp-Session-Id: $SID" -H "Authorization: Bearer $tok" "$@" "$URL" || true
}
is "GET (standalone stream) with B: 404" "$(get_with "$TOKEN_B")" 404
is "GET resuming a stream with B: 404" "$(get_with "$TOKEN_B" -H 'Last-Event-ID: 0-0')" 404
del=$(curl -s -o "$T/body" -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $SID" \
    -H "Authorization: Bearer $TOKEN_B" "$URL" || true)
is "DELETE with B: 404" "$del" 404
is "the session still works with A" "$(status_of "$PING" -H "Authorization: Bearer $TOKEN_A")" 200
out=$(mcp '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"via A"}}}' \
    -H "Authorization: Bearer $TOKEN_A" | data_lines)
like "and calls tools with A" "$out" '"text":"via A"'

# The legacy transport: a /messages session of A's, posted to with B.
curl -s -N -m 10 -H 'Accept: text/event-stream' -H "Authorization: Bearer $TOKEN_A" \
    "${URL%/mcp}/sse" > "$T/legacy" &
legacy_pid=$!
BG_PIDS="$BG_PIDS $legacy_pid"
until_true 5 grep -q sessionId= "$T/legacy" 2>/dev/null || true
path=$(sed -n 's/^data: \(\/messages?sessionId=[A-Za-z0-9_.-]*\).*/\1/p' "$T/legacy" | head -1)
ok "a legacy session made with A" test -n "$path"
legacy_post() {
	curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	    -H "Authorization: Bearer $1" -d "$2" "${URL%/mcp}$path" || true
}
is "legacy POST with B: 404" "$(legacy_post "$TOKEN_B" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"evil","version":"1"}}}')" 404
is "legacy POST with A: 202" "$(legacy_post "$TOKEN_A" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}}')" 202
kill "$legacy_pid" 2>/dev/null || true
wait "$legacy_pid" 2>/dev/null || true
finish

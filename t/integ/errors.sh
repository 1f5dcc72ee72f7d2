#!/bin/sh
# SPDX-License-Identifier: ISC
# Bad input gets a precise error and the gateway carries on.
. "$(dirname "$0")/lib.sh"

GLOBALS='max_body = "64k";'
start_gateway "$(demo demo)" "$(demo small 'max_message = "64k"; request_timeout = 120;')" \
    "$(demo mid 'max_message = "512k"; request_timeout = 120;')"
session

is "bad JSON: 400" "$(status_of '{"jsonrpc":')" 400
like "bad JSON: parse error" "$(cat "$T/body")" '"id":null,"error":\{"code":-32700'
is "a batch: 400" "$(status_of '[{"jsonrpc":"2.0","id":1,"method":"ping"}]')" 400
like "a batch: invalid request" "$(cat "$T/body")" '"code":-32600,"message":"batches are not supported"'
is "not an object: 400" "$(status_of '"hello"')" 400
is "jsonrpc 1.0: 400" "$(status_of '{"jsonrpc":"1.0","id":1,"method":"ping"}')" 400
like "jsonrpc 1.0: the id is kept in the error" "$(cat "$T/body")" '^\{"jsonrpc":"2.0","id":1,"error":\{"code":-32600'
is "null id on a request: 400" "$(status_of '{"jsonrpc":"2.0","id":null,"method":"ping"}')" 400
is "invalid UTF-8: 400" "$(printf '{"jsonrpc":"2.0","id":1,"method":"p\377"}' > "$T/bad"; status_of @"$T/bad")" 400

out=$(mcp '{"jsonrpc":"2.0","id":1,"method":"no/such/method"}')
is "unknown method: JSON-RPC error" "$out" '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: no/such/method"}}'
out=$(mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}' | data_lines)
like "unknown tool: invalid params" "$out" '"code":-32602,"message":"unknown tool: nope"'
out=$(mcp '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}' | data_lines)
like "missing tool name: invalid params" "$out" '"code":-32602'
out=$(mcp '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"nowhere://x"}}' | data_lines)
like "unknown resource: -32002" "$out" '"code":-32002,"message":"Resource not found: nowhere://x","data":{"uri":"nowhere://x"}'
out=$(mcp '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"bogus"}}')
like "a cursor we never gave: invalid params" "$out" '"code":-32602,"message":"invalid cursor"'

is "a notification: 202" "$(status_of '{"jsonrpc":"2.0","method":"notifications/whatever"}')" 202
is "a response to nothing: 202" "$(status_of '{"jsonrpc":"2.0","id":77,"result":{}}')" 202

saved=$SID
SID=00000000000000000000000000000000
is "unknown session: 404" "$(status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}')" 404
SID=
is "missing session: 400" "$(status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}')" 400
SID=$saved

head -c 100000 /dev/zero | tr '\0' 'x' > "$T/huge"
is "a body over max_body: 413" "$(status_of @"$T/huge")" 413
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: text/plain' -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $SID" -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$URL")
is "wrong Content-Type: 415" "$code" 415
is "two Content-Type headers: 400" "$(status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'Content-Type: text/plain')" 400
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -H 'Accept: application/json' -H "Mcp-Session-Id: $SID" -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$URL")
is "Accept without text/event-stream: 406" "$code" 406
is "unsupported MCP-Protocol-Version: 400" "$(status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'MCP-Protocol-Version: 1999-01-01')" 400
is "supported MCP-Protocol-Version: 200" "$(status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'MCP-Protocol-Version: 2025-06-18')" 200
is "foreign Origin: 403" "$(status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'Origin: http://evil.example')" 403
is "loopback Origin: 200" "$(status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'Origin: http://localhost:6274')" 200
is "foreign Host: 403" "$(status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'Host: evil.example:8931')" 403
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$URL")
is "PUT: 405" "$code" 405
code=$(curl -s -o /dev/null -w '%{http_code}' "${URL%/mcp}/elsewhere")
is "another path: 404" "$code" 404
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' y)" "$URL")
is "a head over 16 KiB: 431" "$code" 431
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: application/json' -H "Mcp-Session-Id: $SID" "$URL")
is "GET that does not accept an event stream: 406" "$code" 406

# A garbage line and an over-long line from an upstream are dropped; the
# upstream keeps running.
out=$(mcp '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"demo__garbage","arguments":{}}}' | data_lines)
like "a garbage line does not break the call" "$out" '"text":"garbage sent"'
like "the garbage line is logged" "$(cat "$T/log")" 'upstream sent an invalid message .*dropped'
out=$(mcp '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"small__big","arguments":{"bytes":100000}}}' | data_lines)
like "a result over max_message fails its call at once, not at request_timeout" "$out" '"id":7,"error":\{"code":-32000,"message":"upstream small: its answer is over max_message \(65536 bytes\)"'
like "the over-long line is logged" "$(cat "$T/log")" 'dropped a line of 1000[0-9]+ bytes'
out=$(mcp '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"small__big","arguments":{"bytes":1000}}}' | data_lines)
like "the same upstream still answers" "$out" '"id":8,"result"'
is "and was not restarted" "$(field small 6)" 0

# Lines longer than 256 KiB are gathered in a buffer of their own.
out=$(mcp '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"demo__big","arguments":{"bytes":600000}}}' | data_lines)
like "a 600 kB result arrives" "$out" '^\{"jsonrpc":"2.0","id":10,"result"'
n=$(printf '%s' "$out" | wc -c)
ok "whole ($n bytes)" test "$n" -gt 600000 -a "$n" -lt 600200
out=$(mcp '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"mid__big","arguments":{"bytes":1000000}}}' | data_lines)
like "a long line over max_message fails its call too" "$out" '"id":11,"error":\{"code":-32000,"message":"upstream mid: its answer is over max_message'
like "and logged" "$(cat "$T/log")" 'dropped a line of 1000[0-9]{3} bytes'
out=$(mcp '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"mid__big","arguments":{"bytes":400000}}}' | data_lines)
like "the next long line is whole" "$out" '^\{"jsonrpc":"2.0","id":12,"result"'
n=$(printf '%s' "$out" | wc -c)
ok "whole ($n bytes)" test "$n" -gt 400000 -a "$n" -lt 400200

# A client that hangs up while its JSON-answered request is forwarded: the
# answer that comes later has nowhere to go (it was a use after free).
mcp '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"demo__hang","arguments":{"seconds":2}}}' --max-time 0.5 > /dev/null || true
mcp '{"jsonrpc":"2.0","id":14,"method":"resources/subscribe","params":{"uri":"demo://counter"}}' --max-time 0.5 > /dev/null || true
mcp '{"jsonrpc":"2.0","id":15,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"demo__greeting"},"argument":{"name":"name","value":"A"}}}' --max-time 0.5 > /dev/null || true
# The demo server answers both once it stops hanging.
sleep 2
sleep 0.5
out=$(mcp '{"jsonrpc":"2.0","id":9,"method":"ping"}')
is "the session still works after all that" "$out" '{"jsonrpc":"2.0","id":9,"result":{}}'

# A legacy session is reached only through /messages: its id on /mcp is an
# unknown session (a GET there used to take its stream over, and the two
# connections then freed it twice).
curl -s -N --max-time 3 "${URL%/mcp}/sse" > "$T/legacy" &
LPID=$!
for _ in $(seq 100); do grep -q '^data: /messages' "$T/legacy" && break; sleep 0.05; done
LSID=$(sed -n 's/^data: .*sessionId=\([A-Za-z0-9_.-]*\).*/\1/p' "$T/legacy" | tr -d '\r')
like "a legacy session has an id" "$LSID" '^[A-Za-z0-9_-]+[.][0-9a-f]{32}$'
is "its id on GET /mcp: 404" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $LSID" "$URL")" 404
is "its id on POST /mcp: 404" "$(SID=$LSID status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}')" 404
is "its id on DELETE /mcp: 404" "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $LSID" "$URL")" 404
is "and it still answers on /messages" "$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":2,"method":"ping"}' "${URL%/mcp}/messages?sessionId=$LSID")" 202
kill "$LPID" 2>/dev/null || true
wait "$LPID" 2>/dev/null || true

# The answer to HEAD has a body's headers but no body: a keep-alive client
# reads the next answer right after it.
out=$(python3 -c '
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=5)
s.sendall(b"HEAD /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
          b"GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
head, _, rest = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode(), "|", rest.split(b"\r\n")[0].decode())
' "$ADDR")
like "HEAD: 405 with no body, then the next answer" "$out" '^HTTP/1.1 405 Method Not Allowed \| HTTP/1.1 404 Not Found$'

# The control socket: a name cut inside a character in the error that
# quotes it is still an error (the daemon exited on it), and it goes on.
name="a$(printf 'é%.0s' $(seq 1 80))"
out=$("$MCPCTL" -s "$CTL" tools diff "$name" 2>&1; echo "exit $?")
like "mcpctl tools diff: a long non-ASCII name is refused" "$out" '^mcpctl: no tool a(é)+\? is pinned .*exit 1$'
out=$("$MCPCTL" -s "$CTL" stop "a$(printf 'é%.0s' $(seq 1 200))" 2>&1; echo "exit $?")
like "mcpctl stop: a long non-ASCII name is refused" "$out" '^mcpctl: no upstream named a(é)+\?.*exit 1$'
ctl_status
is "the daemon still answers mcpctl" "$(state demo)" ready
# A client that shuts its sending side after its requests (socat, a
# script) still gets every reply: here 3,000 requests at once, whose
# replies are more than the daemon writes before it reads the end (it
# closed on the rest).
out=$(python3 -c '
import json, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
body = json.dumps({"command": "status"}).encode()
s.sendall((struct.pack("!IHHII", len(body), 64, 0, 0, 0) + body) * 3000)
s.shutdown(socket.SHUT_WR)
time.sleep(1)
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
n = 0
while len(data) >= 16:
    size, t = struct.unpack("!IH", data[:6])
    if len(data) < 16 + size or t != 65 or not json.loads(data[16:16 + size])["ok"]:
        break
    data = data[16 + size:]
    n += 1
print(n)
' "$CTL")
is "a control client that half-closes gets every reply" "$out" 3000
finish

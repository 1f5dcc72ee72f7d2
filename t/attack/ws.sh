#!/bin/sh
# SPDX-License-Identifier: ISC
# Attacks on the WebSocket endpoint (/ws, mcp-supervisord(8) WebSocket):
# the checks before the upgrade, malformed frames (each closes its own
# connection with the code the man page gives, and the next session
# works), clients that do not read: one flooding pings, one whose answers
# pile up (bound: the supervisor's RSS stays under its RSS before + 64
# MiB), and messages in fragments: a request a byte per fragment is
# answered, a flood of one-byte fragments is refused at max_body with the
# RSS under its RSS before + twice max_body + 8 MiB, and a message that
# trickles in is cut at its deadline (30 s).
. "$(dirname "$0")/lib.sh"

BOUND_KB=65536
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ws-attack","version":"1"}}}'
ECHO='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"ws alive"}}}'

GLOBALS='max_body = "1M";'
start_gateway "$(demo demo)"
session

# wsc ACTION...: client.py ws on the gateway; prints what happened.
wsc() {
	"$PY" "$ATTACK/client.py" ws "$ADDR" "$@" 2>&1 || true
}

# ws_ok: a new WebSocket session initializes and calls a tool.
ws_ok() {
	wsc up "text:$INIT" 'until:5:"id":0' "text:$ECHO" 'until:5:ws alive' |
	    grep -q '"text":"ws alive"'
}
ok "a WebSocket session initializes and calls a tool" ws_ok

# The checks before the upgrade.
upgrade() {
	wsc up "$@" | sed -n 's/^status //p'
}
is "Origin: http://evil.example: 403" "$(upgrade 'Origin: http://evil.example')" 403
is "Host: evil.example: 403" "$(upgrade 'Host: evil.example')" 403
st=$(upgrade 'Host: localhost:80@evil.com')
ok "Host: localhost:80@evil.com: 400 or 403 ($st)" test "$st" = 400 -o "$st" = 403
is "no subprotocol: 400" "$(upgrade 'Sec-WebSocket-Protocol:')" 400
is "another subprotocol: 400" "$(upgrade 'Sec-WebSocket-Protocol: chat')" 400
is "version 8: 426" "$(upgrade 'Sec-WebSocket-Version: 8')" 426
is "a malformed key: 400" "$(upgrade 'Sec-WebSocket-Key: abc')" 400
is "no Upgrade header: 426" "$(upgrade 'Upgrade:')" 426
raw --timeout 1 "s:GET /ws HTTP/1.0\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp\r\n\r\n" > "$T/out"
is "HTTP/1.0: 426" "$(code_of < "$T/out")" 426
raw "s:POST /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}" > "$T/out"
is "POST /ws: 405" "$(code_of < "$T/out")" 405
raw --timeout 1 "s:GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp\r\nContent-Length: 2\r\n\r\n{}" > "$T/out"
is "an upgrade with a body: 400" "$(code_of < "$T/out")" 400

# Malformed frames after initialize: the connection is closed with the
# code the man page gives, and the next session works.
frames() {
	desc=$1
	want=$2
	shift 2
	out=$(wsc up "text:$INIT" 'until:5:"id":0' "$@" read:5)
	like "$desc: closed ($want)" "$out" "$want"
	ok "$desc: then a new session works" ws_ok
}
frames "an unmasked frame" 'close 1002' 'frame:1:nomask:{}'
frames "a reserved bit" 'close 1002' 'frame:1:rsv1:{}'
frames "a reserved opcode" 'close 1002' 'frame:7::'
frames "a binary frame" 'close 1003' 'frame:2::{}'
frames "a text frame that is not UTF-8" 'close 1007' 'frame:1::\xff\xfe'
frames "an overlong UTF-8 NUL" 'close 1007' 'frame:1::\xc0\x80'
frames "a continuation with nothing to continue" 'close 1002' 'frame:0::x'
frames "a ping of 200 bytes (control frames stop at 125)" 'close|eof' \
    "frame:9::$(head -c 200 /dev/zero | tr '\0' a)"
frames "a fragmented ping" 'close|eof' 'frame:9:nofin:x'
frames "a frame declaring 100 GB" 'close 1009' 'frame:1:len=100000000000:xxxx'
frames "a frame declaring 2 MiB (max_body 1M)" 'close 1009' \
    "frame:1:len=2097152:$(head -c 1000 /dev/zero | tr '\0' x)"
frames "fragments adding up past max_body" 'close 1009' \
    'frame:1:nofin,fill=600000:' 'frame:0:nofin,fill=600000:'
# A request a byte per fragment, a ping among them and a character of two
# bytes split between two fragments, is answered: the fragments are put
# back together, and UTF-8 is checked across them.
out=$(wsc up "text:$INIT" 'until:5:"id":0' \
    'frags:{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"ws alivé"}}}' \
    'until:5:ws aliv')
like "a request a byte per fragment, a ping among them: answered" "$out" '"text":"ws alivé"'
out=$(wsc up 'text:{"jsonrpc":"2.0","id":5,"method":"tools/list"}' 'until:5:"id":5' \
    "text:$INIT" 'until:5:"id":0' 'text:{"jsonrpc":' 'until:5:-32700' "text:$ECHO" 'until:5:ws alive')
like "a request before initialize: -32600" "$out" '"id":5,"error":\{"code":-32600'
like "bad JSON: -32700, and the connection stays" "$out" '"code":-32700.*"text":"ws alive"'
ok "a Streamable HTTP session still works" ping_ok

# A client that sends pings and never reads their pongs: the supervisor
# must not hold what it sends (256 MiB).  A new daemon, whose freed memory
# under ASan is not kept in quarantine (it would count in the RSS).
stop_gateway
quarantine 0
start_gateway "$(demo demo)"

# A message that trickles in, a one-byte fragment a second: cut with 1008
# at its deadline (30 s from its first frame, plus a second per 64 KiB of
# it), not before.  It runs while the floods below go on.
bg wsc up "text:$INIT" 'until:5:"id":0' drip:1:90 > "$T/drip"
dripper=$!

# A text message of 1 000 000 one-byte fragments (under max_body, 1M
# here), held unfinished for 2 s: each fragment costs its byte and no
# more, so the supervisor's RSS grows by the message, at most twice
# max_body while it grows.  (wslay's own reassembly held about 90 bytes
# per fragment: some 90 MiB here, 735 MiB with the default max_body of
# 8M.)  Past max_body, such a flood is refused with 1009.
FRAG_BOUND_KB=$((2 * 1024 + 8192))
rss0=$(rss_kb "$GW_PID")
rm -f "$T/rss" "$T/sampled"
bg rss_sampler "$T/rss" "$T/sampled"
sampler=$!
out=$(wsc up "text:$INIT" 'until:5:"id":0' frag1:1000000 sleep:2)
touch "$T/sampled"
wait "$sampler"
max=$(rss_max "$T/rss")
echo "# one-byte fragments: $(printf '%s' "$out" | grep -v '^text' | tr '\n' ' '); supervisor RSS $rss0 KiB before, at most $max KiB during"
like "1 000 000 one-byte fragments: taken" "$out" 'fragments sent 1000000'
ok "... the RSS under $rss0 + $FRAG_BOUND_KB KiB (at most $max KiB, +$((max - rss0)) KiB)" \
    test "$max" -lt $((rss0 + FRAG_BOUND_KB))
out=$(wsc up "text:$INIT" 'until:5:"id":0' frag1:2000000 read:5)
like "a flood of one-byte fragments past max_body: closed (1009)" "$out" 'close 1009 a message over max_body'
ok "then a new session works" ws_ok

rss0=$(rss_kb "$GW_PID")
rm -f "$T/rss" "$T/sampled"
bg rss_sampler "$T/rss" "$T/sampled"
sampler=$!
out=$(wsc up pings:256 sleep:2)
touch "$T/sampled"
wait "$sampler"
max=$(rss_max "$T/rss")
echo "# ping flood: $(printf '%s' "$out" | tr '\n' ' '); supervisor RSS $rss0 KiB before, at most $max KiB during, $(rss_kb "$GW_PID") KiB after"
ok "a ping flood that reads no pong: RSS under $rss0 + $BOUND_KB KiB (at most $max KiB, +$((max - rss0)) KiB)" \
    test "$max" -lt $((rss0 + BOUND_KB))
ok "then a new session works" ws_ok

# A client whose answers pile up: 60 calls of demo__log (1000 lines of
# 100 bytes each, at level debug) on a connection it does not read.  It is
# cut 4 MiB behind, as an event stream's reader is.  The client holds the
# connection until the cut is logged (at most 60 s): how long the lines
# take to pile up is the machine's speed, not the gateway's bound.
rss0=$(rss_kb "$GW_PID")
rm -f "$T/rss" "$T/sampled"
bg rss_sampler "$T/rss" "$T/sampled"
sampler=$!
line=$(head -c 100 /dev/zero | tr '\0' w)
set -- up "text:$INIT" 'until:5:"id":0' 'text:{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    'text:{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}'
i=0
while [ "$i" -lt 60 ]; do
	set -- "$@" "text:{\"jsonrpc\":\"2.0\",\"id\":\"log$i\",\"method\":\"tools/call\",\"params\":{\"name\":\"demo__log\",\"arguments\":{\"level\":\"debug\",\"count\":1000,\"message\":\"$line\"}}}"
	i=$((i + 1))
done
bg wsc "$@" "hold:60:$T/cut" > /dev/null
holder=$!
cut_logged() {
	grep -q 'bytes behind' "$T/log"
}
until_true 60 cut_logged || true
touch "$T/cut" "$T/sampled"
wait "$holder" "$sampler"
max=$(rss_max "$T/rss")
echo "# unread answers: supervisor RSS $rss0 KiB before, at most $max KiB during"
ok "answers nobody reads: RSS under $rss0 + $BOUND_KB KiB (at most $max KiB, +$((max - rss0)) KiB)" \
    test "$max" -lt $((rss0 + BOUND_KB))
is "the reader was cut" "$(grep -c 'bytes behind' "$T/log")" 1
ok "then a new session works" ws_ok
ok "and a Streamable HTTP client" call_ok

# The message that trickled in was cut at its deadline, and said so.
wait "$dripper"
drip=$(cat "$T/drip")
echo "# trickle: $(printf '%s' "$drip" | grep -v '^text' | tr '\n' ' ')"
like "a message that trickles in: closed (1008)" "$drip" 'close 1008 a message not whole after 3[0-9] s'
elapsed=$(printf '%s' "$drip" | sed -n 's/^dripped [0-9]* in \([0-9]*\)\..*/\1/p')
ok "... not before its 30 s deadline ($elapsed s)" test "${elapsed:-0}" -ge 29
is "... with a log line" "$(grep -c 'closing its WebSocket (1008 a message not whole after' "$T/log")" 1
ok "then a new session works" ws_ok

# With auth_tokens, the token is checked before the upgrade.
stop_gateway
GLOBALS='auth_tokens = [ "ws-attack-token-0123456789" ];'
start_gateway "$(demo demo)"
is "auth_tokens set, no token: 401 before the upgrade" "$(upgrade)" 401
is "a wrong token: 401" "$(upgrade 'Authorization: Bearer ws-attack-token-9876543210')" 401
is "the token: 101" "$(upgrade 'Authorization: Bearer ws-attack-token-0123456789')" 101
finish

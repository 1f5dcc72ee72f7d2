#!/bin/sh
# SPDX-License-Identifier: ISC
# Attacks on the HTTP front: request smuggling and framing, chunked
# edge cases, header floods, and slow clients (slowloris).  After each
# malformed request the gateway answers the status supervisor/http.c and
# mcp-supervisord(8) give, answers it once, and a request hidden where a
# lenient parser would find one (a DELETE of the live session) is never
# processed: the session still answers on a new connection.
. "$(dirname "$0")/lib.sh"

GLOBALS='max_body = "64k";'
start_gateway "$(demo demo)"
session

# Slow clients first, in the background: each takes about 30 s, the
# deadline, while the checks below run.
bg "$PY" "$ATTACK/client.py" trickle "$ADDR" \
    'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' 70 > "$T/slow-head"
bg "$PY" "$ATTACK/client.py" trickle "$ADDR" \
    "$(head_mcp)Content-Length: 300\r\n\r\n" 70 > "$T/slow-body"
bg "$PY" "$ATTACK/client.py" silent "$ADDR" 70 > "$T/slow-silent"
slow_pids=$BG_PIDS

# attack DESCRIPTION STATUS RESPONSES ACTION...: send with raw, then check
# the status of the first answer, the number of answers on the
# connection, and that the session was not touched.
attack() {
	desc=$1
	want=$2
	nresp=$3
	shift 3
	raw --timeout 2 "$@" > "$T/out"
	is "$desc: $want" "$(code_of < "$T/out")" "$want"
	is "$desc: $nresp response(s) on the connection" "$(responses < "$T/out")" "$nresp"
	ok "$desc: the session lives, a new connection works" ping_ok
}

LEN=$(printf '%s' "$PING" | wc -c)
HLEN=$(hidden | sed 's/\\r\\n/xx/g' | wc -c)	# its length on the wire
HEX=$(printf '%x' "$LEN")

# Control: a genuine pipelined request is answered, so counting responses
# would see a hidden one processed.
attack "control: two pipelined requests" 200 2 \
    "s:$(head_ka)Content-Length: $LEN\r\n\r\n$PING$(head_mcp)Content-Length: $LEN\r\n\r\n$PING"

# 1. Smuggling and framing.
attack "Content-Length and Transfer-Encoding" 400 1 \
    "s:$(head_ka)Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$(hidden)"
attack "Transfer-Encoding then Content-Length" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\nContent-Length: $((HLEN + 5))\r\n\r\n0\r\n\r\n$(hidden)"
attack "two different Content-Length" 400 1 \
    "s:$(head_ka)Content-Length: 0\r\nContent-Length: $HLEN\r\n\r\n$(hidden)"
attack "two equal Content-Length (one body, then close)" 200 1 \
    "s:$(head_mcp)Content-Length: $LEN\r\nContent-Length: $LEN\r\n\r\n$PING$(hidden)"
attack "two Mcp-Method headers (the gateway would check one, a balancer route on the other)" 400 1 \
    "s:$(head_ka)Mcp-Method: ping\r\nMcp-Method: tools/call\r\nContent-Length: $LEN\r\n\r\n$PING$(hidden)"
attack "two Mcp-Name headers" 400 1 \
    "s:$(head_ka)Mcp-Name: a\r\nmcp-name: b\r\nContent-Length: $LEN\r\n\r\n$PING$(hidden)"
attack "Content-Length as a list" 400 1 \
    "s:$(head_ka)Content-Length: $LEN, $LEN\r\n\r\n$PING$(hidden)"
attack "Content-Length with a sign" 400 1 \
    "s:$(head_ka)Content-Length: +$LEN\r\n\r\n$PING$(hidden)"
attack "Content-Length in hex" 400 1 \
    "s:$(head_ka)Content-Length: 0x$HEX\r\n\r\n$PING$(hidden)"
attack "Content-Length of 20 digits" 400 1 \
    "s:$(head_ka)Content-Length: 18446744073709551657\r\n\r\n$PING$(hidden)"
attack "Content-Length of 19 digits (over max_body)" 413 1 \
    "s:$(head_ka)Content-Length: 9999999999999999999\r\n\r\n$PING$(hidden)"
for te in "gzip, chunked" "chunked, chunked" "chunked, gzip" "gzip" \
    "xchunked" "chunked;q=1" "identity"; do
	attack "Transfer-Encoding: $te" 501 1 \
	    "s:$(head_ka)Transfer-Encoding: $te\r\n\r\n0\r\n\r\n$(hidden)"
done
attack "two Transfer-Encoding: chunked headers" 501 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$(hidden)"
attack "Transfer-Encoding folded onto a continuation line" 400 1 \
    "s:$(head_ka)Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n$(hidden)"
attack "obs-fold continuation of another header" 400 1 \
    "s:$(head_ka)X-A: b\r\n\tc\r\nContent-Length: $LEN\r\n\r\n$PING"
attack "Transfer-Encoding with a vertical tab" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\x0b\r\n\r\n0\r\n\r\n$(hidden)"
attack "space before the colon" 400 1 \
    "s:$(head_ka)Transfer-Encoding : chunked\r\nContent-Length: $HLEN\r\n\r\n$(hidden)"
attack "tab before the colon" 400 1 \
    "s:$(head_ka)Content-Length\t: $HLEN\r\n\r\n$(hidden)"
attack "a header with no colon" 400 1 \
    "s:$(head_ka)Content-Length $HLEN\r\n\r\n$(hidden)"
attack "a header with no name" 400 1 \
    "s:$(head_ka): x\r\nContent-Length: $LEN\r\n\r\n$PING"
attack "a NUL in a header value" 400 1 \
    "s:$(head_ka)X-A: a\x00b\r\nContent-Length: $LEN\r\n\r\n$PING"
attack "bare LF line endings (then a CRLF request)" 400 1 \
    "s:GET /nowhere HTTP/1.1\nHost: 127.0.0.1\n\n$(hidden)"
attack "bare LF line endings only: never taken for a request" - 0 \
    "s:DELETE /mcp HTTP/1.1\nHost: 127.0.0.1\nMcp-Session-Id: $SID\n\n" shut
attack "a CR alone in a header" 400 1 \
    "s:$(head_ka)X-A: a\rContent-Length: 0\r\n\r\n$(hidden)"
attack "an empty line before the request line" 400 1 \
    "s:\r\n$(head_mcp)Content-Length: $LEN\r\n\r\n$PING"
attack "absolute-form target" 404 1 \
    "s:POST http://127.0.0.1/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: $HLEN\r\n\r\n$(hidden)"
attack "two spaces after the method" 400 1 \
    "s:POST  /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "two spaces before the version" 400 1 \
    "s:POST /mcp  HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "a space after the version" 400 1 \
    "s:POST /mcp HTTP/1.1 \r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "a word between target and version" 400 1 \
    "s:POST /mcp x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "a tab as separator" 400 1 \
    "s:POST\t/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "a NUL in the target" 400 1 \
    "s:GET /mcp\x00x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "HTTP/2.0" 505 1 \
    "s:POST /mcp HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "HTTP/0.9 named" 505 1 \
    "s:GET /mcp HTTP/0.9\r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "HTTP/0.9 simple request" 400 1 \
    "s:GET /mcp\r\n\r\n$(hidden)"
attack "lower-case http/1.1" 400 1 \
    "s:GET /mcp http/1.1\r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "HTTP/1.10" 400 1 \
    "s:GET /mcp HTTP/1.10\r\nHost: 127.0.0.1\r\n\r\n$(hidden)"
attack "a request hidden in a well-framed chunked body" 400 1 \
    "s:$(head_mcp)Transfer-Encoding: chunked\r\n\r\n$(printf '%x' "$HLEN")\r\n$(hidden)\r\n0\r\n\r\n$(hidden)"

# 2. Chunked bodies (each a ping, so 200 when accepted).
P1=$(printf '%s' "$PING" | cut -c1-10)
P2=$(printf '%s' "$PING" | cut -c11-)
H2=$(printf '%X' $((LEN - 10)))
attack "chunked: extensions" 200 1 \
    "s:$(head_mcp)Transfer-Encoding: chunked\r\n\r\n$HEX;name=value;x\r\n$PING\r\n0;end\r\n\r\n$(hidden)"
attack "chunked: leading zeros" 200 1 \
    "s:$(head_mcp)Transfer-Encoding: chunked\r\n\r\n0000$HEX\r\n$PING\r\n000\r\n\r\n$(hidden)"
attack "chunked: 24 digits of which leading zeros (the value fits)" 200 1 \
    "s:$(head_mcp)Transfer-Encoding: chunked\r\n\r\n0000000000000000000000$HEX\r\n$PING\r\n0\r\n\r\n$(hidden)"
attack "chunked: upper-case hex, two chunks" 200 1 \
    "s:$(head_mcp)Transfer-Encoding: chunked\r\n\r\nA\r\n$P1\r\n$H2\r\n$P2\r\n0\r\n\r\n$(hidden)"
attack "chunked: trailers" 200 1 \
    "s:$(head_mcp)Transfer-Encoding: chunked\r\n\r\n$HEX\r\n$PING\r\n0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n$(hidden)"
attack "chunked: the final chunk split across packets" 200 1 \
    "s:$(head_mcp)Transfer-Encoding: chunked\r\n\r\n$HEX\r\n$PING\r\n" p:150 s:0 p:150 "s:\r" p:150 "s:\n" p:150 "s:\r" p:150 "s:\n"
attack "chunked: 17 hex digits" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\n1000000000000002a\r\n$PING\r\n0\r\n\r\n$(hidden)"
attack "chunked: a size that overflows 64 bits" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n$PING\r\n0\r\n\r\n$(hidden)"
attack "chunked: the largest size (over max_body)" 413 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n$PING\r\n0\r\n\r\n$(hidden)"
attack "chunked: no CRLF after the data" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\n$HEX\r\n${PING}0\r\n\r\n$(hidden)"
attack "chunked: more data than the size" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\n$(printf '%x' $((LEN - 5)))\r\n$PING\r\n0\r\n\r\n$(hidden)"
attack "chunked: a bare LF after the size" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\n$HEX\n$PING\r\n0\r\n\r\n$(hidden)"
attack "chunked: no digits" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\n;x\r\n$PING\r\n0\r\n\r\n$(hidden)"
attack "chunked: a negative size" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\n-$HEX\r\n$PING\r\n0\r\n\r\n$(hidden)"
attack "chunked: a 0x prefix" 400 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\n0x$HEX\r\n$PING\r\n0\r\n\r\n$(hidden)"
# Over max_body (64k) in chunks within it: 413 once the sum passes it.
head -c 40000 /dev/zero | tr '\0' ' ' > "$T/spaces"
attack "chunked: a body over max_body in two chunks" 413 1 \
    "s:$(head_ka)Transfer-Encoding: chunked\r\n\r\n9c40\r\n" "f:$T/spaces" "s:\r\n9c40\r\n" "f:$T/spaces" "s:\r\n0\r\n\r\n$(hidden)"

# 3. Header floods.
xheaders() {
	i=0
	while [ "$i" -lt "$1" ]; do
		printf 'X-H%d: %d\\r\\n' "$i" "$i"
		i=$((i + 1))
	done
}
# head_mcp has 5 fields, Content-Length is the sixth.
attack "64 header fields" 200 1 \
    "s:$(head_mcp)$(xheaders 58)Content-Length: $LEN\r\n\r\n$PING"
attack "65 header fields" 431 1 \
    "s:$(head_mcp)$(xheaders 59)Content-Length: $LEN\r\n\r\n$PING"
attack "1000 header fields" 431 1 \
    "s:$(head_mcp)$(xheaders 1000)Content-Length: $LEN\r\n\r\n$PING"
# A head of exactly 16 KiB (the request line, fields and the blank line)
# is taken; a byte more is not.
base=$(printf '%s' "$(head_mcp)Content-Length: $LEN\r\nX-Pad: \r\n\r\n" | sed 's/\\r\\n/xx/g' | wc -c)
pad=$(head -c $((16384 - base)) /dev/zero | tr '\0' p)
attack "a head of 16384 bytes" 200 1 \
    "s:$(head_mcp)Content-Length: $LEN\r\nX-Pad: $pad\r\n\r\n$PING"
attack "a head of 16385 bytes" 431 1 \
    "s:$(head_mcp)Content-Length: $LEN\r\nX-Pad: ${pad}p\r\n\r\n$PING"
big=$(head -c 12000 /dev/zero | tr '\0' q)
attack "many fields making a head over 16 KiB" 431 1 \
    "s:$(head_mcp)X-A: $big\r\nX-B: $big\r\nContent-Length: $LEN\r\n\r\n$PING"
head -c 20000 /dev/zero | tr '\0' z > "$T/line"
# An unfinished head is refused as soon as it passes 16 KiB, not at the
# 30 s deadline (which would answer 408).
attack "one endless header line, never finished" 431 1 \
    "s:$(head_ka)X-Long: " "f:$T/line" p:500 "f:$T/line"
attack "a request sent a byte per packet" 200 1 \
    "b:$(head_mcp)Content-Length: $LEN\r\n\r\n$PING"
attack "a head sent a byte per packet, a body in one" 200 1 \
    "b:$(head_mcp)$(xheaders 10)Content-Length: $LEN\r\n\r\n" "s:$PING"

ok "a tool call works after all that" call_ok

# 4. Slow clients: a head or a body trickled a byte a second is cut with
# 408 at the deadline (30 s from the first byte; 30 s + 1 s per 64 KiB for
# a body) although the client never stops sending; a silent connection is
# closed at 30 s.  Their bounded runs end by 75 s in any case.
for p in $slow_pids; do
	wait "$p" || true
done
for f in slow-head slow-body slow-silent; do
	echo "# $f: $(cat "$T/$f")"
done
r=$(cat "$T/slow-head")
like "a head trickled a byte a second: 408" "$r" 'status=408 '
like "... while the client was still sending (sent < 70 bytes)" "$r" 'sent=([0-9]|[1-6][0-9]) '
elapsed=$(printf '%s' "$r" | sed -n 's/.*elapsed=\([0-9]*\).*/\1/p')
ok "... not before the 30 s deadline ($elapsed s)" test "${elapsed:-0}" -ge 29
r=$(cat "$T/slow-body")
like "a body trickled a byte a second: 408" "$r" 'status=408 '
like "... while the client was still sending (sent < 70 bytes)" "$r" 'sent=([0-9]|[1-6][0-9]) '
elapsed=$(printf '%s' "$r" | sed -n 's/.*elapsed=\([0-9]*\).*/\1/p')
ok "... not before the 30 s deadline ($elapsed s)" test "${elapsed:-0}" -ge 29
r=$(cat "$T/slow-silent")
like "a silent connection is closed without an answer" "$r" 'status=- .*closed=1'
elapsed=$(printf '%s' "$r" | sed -n 's/.*elapsed=\([0-9]*\).*/\1/p')
ok "... not before the 30 s deadline ($elapsed s)" test "${elapsed:-0}" -ge 29
like "the slow head is logged" "$(cat "$T/log")" 'request head not complete within 30 s'
like "the slow body is logged" "$(cat "$T/log")" 'request body too slow'
ok "the session still works" ping_ok
ok "and a tool call" call_ok
finish

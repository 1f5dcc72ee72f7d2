#!/bin/sh
# SPDX-License-Identifier: ISC
# JSON confusion: a message the gateway could read one way and an upstream
# another.  Duplicate keys (also spelled with escapes) and NUL characters
# in routed names and URIs are refused, and the upstream never runs what
# a different reading would have run: demo__touch bumps demo://counter,
# which is read back to prove it.
. "$(dirname "$0")/lib.sh"

start_gateway "$(demo demo)"
session

# counter: the value of demo://counter.
counter() {
	mcp '{"jsonrpc":"2.0","id":"n","method":"resources/read","params":{"uri":"demo://counter"}}' |
	    data_lines | sed -n 's/.*"text":"\([0-9]*\)".*/\1/p'
}

# refused DESCRIPTION HTTP-STATUS CODE BODY: POST BODY, check the status
# and the JSON-RPC error code.
refused() {
	st=$(status_of "$4")
	is "$1: HTTP $2" "$st" "$2"
	like "$1: error $3" "$(data_lines < "$T/body")" "\"error\":\\{\"code\":$3,"
}

c0=$(counter)
is "the counter starts at 0" "$c0" 0
out=$(mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__touch","arguments":{}}}' | data_lines)
like "demo__touch works" "$out" '"id":1,"result"'
is "and bumps the counter" "$(counter)" 1

# 7. Duplicate routed parameters.
refused "tools/call with name twice (echo, then add)" 200 -32600 \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__echo","name":"demo__add","arguments":{"text":"x","a":1,"b":2}}}'
like "... names the duplicate" "$(cat "$T/body")" 'params.name appears more than once'
refused "tools/call with name twice (echo, then touch)" 200 -32600 \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo__echo","name":"demo__touch","arguments":{"text":"x"}}}'
refused "tools/call with name twice (touch, then echo)" 200 -32600 \
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"demo__touch","name":"demo__echo","arguments":{"text":"x"}}}'
refused "tools/call with name and an escaped na\\u006de" 200 -32600 \
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"demo__echo","na\u006de":"demo__touch","arguments":{"text":"x"}}}'
is "no duplicate-name call ran touch" "$(counter)" 1
refused "resources/read with uri twice" 200 -32600 \
    '{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"demo://readme","uri":"demo://counter"}}'
like "... names the duplicate" "$(cat "$T/body")" 'params.uri appears more than once'
refused "resources/subscribe with uri twice" 200 -32600 \
    '{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"demo://readme","uri":"demo://counter"}}'
refused "prompts/get with name twice" 200 -32600 \
    '{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"demo__greeting","name":"demo__summarize"}}'
refused "completion/complete with ref.name twice" 200 -32600 \
    '{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"demo__greeting","name":"x"},"argument":{"name":"name","value":"A"}}}'
refused "tools/call with _meta.progressToken twice" 200 -32600 \
    '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"demo__touch","arguments":{},"_meta":{"progressToken":1,"progressToken":2}}}'
like "... names the duplicate" "$(cat "$T/body")" 'progressToken appears more than once'
is "the duplicate-token call did not run touch" "$(counter)" 1

# Duplicate envelope keys: the message is refused whole.
refused "id twice" 400 -32600 '{"jsonrpc":"2.0","id":11,"id":12,"method":"ping"}'
refused "method twice" 400 -32600 \
    '{"jsonrpc":"2.0","id":13,"method":"ping","method":"tools/call","params":{"name":"demo__touch","arguments":{}}}'
refused "method and an escaped m\\u0065thod" 400 -32600 \
    '{"jsonrpc":"2.0","id":14,"method":"ping","m\u0065thod":"tools/call","params":{"name":"demo__touch","arguments":{}}}'
refused "params twice" 400 -32600 \
    '{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"x"}},"params":{"name":"demo__touch","arguments":{}}}'
refused "jsonrpc twice" 400 -32600 '{"jsonrpc":"2.0","jsonrpc":"2.0","id":16,"method":"ping"}'
is "no duplicate-envelope message ran touch" "$(counter)" 1

# 7. NUL characters in routed names and URIs.
refused "a tool name with an escaped NUL" 200 -32602 \
    '{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"demo__echo\u0000x","arguments":{"text":"ran"}}}'
like "... says why" "$(cat "$T/body")" 'params.name must not contain a NUL character'
if grep -q '"text":"ran"' "$T/body"; then r=ran; else r=no; fi
is "... and echo did not run" "$r" no
refused "a tool name ending in an escaped NUL" 200 -32602 \
    '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"demo__touch\u0000","arguments":{}}}'
is "... and touch did not run" "$(counter)" 1
refused "resources/read of a URI with an escaped NUL" 200 -32602 \
    '{"jsonrpc":"2.0","id":22,"method":"resources/read","params":{"uri":"demo://readme\u0000x"}}'
refused "resources/subscribe to a URI with an escaped NUL" 200 -32602 \
    '{"jsonrpc":"2.0","id":23,"method":"resources/subscribe","params":{"uri":"demo://counter\u0000x"}}'
refused "resources/unsubscribe of a URI with an escaped NUL" 200 -32602 \
    '{"jsonrpc":"2.0","id":24,"method":"resources/unsubscribe","params":{"uri":"demo://counter\u0000x"}}'
refused "prompts/get of a name with an escaped NUL" 200 -32602 \
    '{"jsonrpc":"2.0","id":25,"method":"prompts/get","params":{"name":"demo__greeting\u0000x"}}'
refused "a lone surrogate in a tool name" 400 -32700 \
    '{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"demo__touch\ud800","arguments":{}}}'
printf '{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"demo__touch\300\200","arguments":{}}}' > "$T/overlong"
refused "an overlong UTF-8 NUL in a tool name" 400 -32700 @"$T/overlong"
deep=$(printf '%0300d' 0 | tr 0 '[')$(printf '%0300d' 0 | tr 0 ']')
refused "arguments nested 300 deep" 400 -32700 \
    "{\"jsonrpc\":\"2.0\",\"id\":28,\"method\":\"tools/call\",\"params\":{\"name\":\"demo__touch\",\"arguments\":{\"x\":$deep}}}"
is "none of them ran touch" "$(counter)" 1

# An escaped spelling of the real name is the same name: no confusion.
out=$(mcp '{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"demo\u005f_touch","arguments":{}}}' | data_lines)
like "an escaped spelling of a tool's name calls that tool" "$out" '"id":30,"result"'
is "and only it" "$(counter)" 2
deep=$(printf '%0200d' 0 | tr 0 '[')$(printf '%0200d' 0 | tr 0 ']')
out=$(mcp "{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"tools/call\",\"params\":{\"name\":\"demo__touch\",\"arguments\":{\"x\":$deep}}}" | data_lines)
like "arguments nested 200 deep are passed on (the limit is depth 256)" "$out" '"id":31,"result"'
is "and run" "$(counter)" 3

# What a request in flight keeps is bounded: its id and its progress
# token at most 1024 bytes of JSON each, and an initialize's params (kept
# by the session and every worker) at most 64 KiB, refused before any
# tree is built.
id1022=$(printf '%01022d' 0 | tr 0 i)
out=$(mcp "{\"jsonrpc\":\"2.0\",\"id\":\"$id1022\",\"method\":\"ping\"}")
like "an id of 1024 bytes is taken" "$out" "\"id\":\"$id1022\",\"result\""
refused "an id of 1025 bytes" 400 -32600 \
    "{\"jsonrpc\":\"2.0\",\"id\":\"${id1022}i\",\"method\":\"ping\"}"
like "... answered with a null id" "$(cat "$T/body")" '"id":null,.*id is longer than 1024 bytes'
out=$(mcp "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"tools/call\",\"params\":{\"name\":\"demo__echo\",\"arguments\":{\"text\":\"t\"},\"_meta\":{\"progressToken\":\"$id1022\"}}}" | data_lines)
like "a progress token of 1024 bytes is taken" "$out" '"id":40,"result"'
refused "a progress token of 1025 bytes" 200 -32600 \
    "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":\"demo__echo\",\"arguments\":{\"text\":\"t\"},\"_meta\":{\"progressToken\":\"${id1022}i\"}}}"
like "... says why" "$(cat "$T/body")" 'progressToken is longer than 1024 bytes'
big=$(printf '%070000d' 0)
SID0=$SID
SID=
st=$(status_of "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"experimental\":{\"x\":\"$big\"}},\"clientInfo\":{\"name\":\"big\",\"version\":\"1\"}}}")
like "an initialize with 70,000 bytes of params is refused" "$(data_lines < "$T/body")" '"error":\{"code":-32602,"message":"initialize: params of [0-9]+ bytes, more than 65536"'
like "... and logged" "$(cat "$T/log")" 'initialize: params of [0-9]+ bytes, more than 65536'
SID=$SID0
ok "a tool call still works" call_ok
finish

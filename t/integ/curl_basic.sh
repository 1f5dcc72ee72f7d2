#!/bin/sh
# SPDX-License-Identifier: ISC
# Initialize, list and call through the gateway with curl; ids come back
# exactly as sent.
. "$(dirname "$0")/lib.sh"

PAGED="{ name = \"paged\"; transport = \"stdio\"; command = [ \"$DEMO\", \"--test-tools\", \"--page-size\", \"3\" ]; prefix = \"p_\"; }"
start_gateway "$(demo demo)" "$(demo two 'prefix = "t_";')" "$PAGED"
session
like "initialize answers with a session id" "$SID" '^[A-Za-z0-9_-]+[.][0-9a-f]{32}$'
like "initialize result" "$(cat "$T/init")" '"protocolVersion":"2025-11-25".*"serverInfo":\{"name":"mcp-supervisor"'

out=$(mcp '{"jsonrpc":"2.0","id":"list-1","method":"tools/list"}')
n=$(printf '%s' "$out" | grep -o '"name":"p_[a-z_]*"' | wc -l | tr -d ' ')
is "an upstream's pages are all followed" "$n" "$(printf '%s' "$out" | grep -o '"name":"demo__[a-z_]*"' | wc -l | tr -d ' ')"
is "no cursor leaks into the merged list" "$(printf '%s' "$out" | grep -c nextCursor)" 0
like "tools/list has prefixed names" "$out" '"name":"demo__echo".*"name":"t_echo"'
like "tools/list keeps a string id" "$out" '^\{"jsonrpc":"2.0","id":"list-1","result"'

out=$(mcp '{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"hi"}}}' | data_lines)
is "tools/call through SSE, numeric id kept" "$out" '{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hi"}]}}'

out=$(mcp '{"jsonrpc":"2.0","id":-7.250e1,"method":"tools/call","params":{"name":"t_add","arguments":{"a":1,"b":2}}}' | data_lines)
like "an id's exact text is kept" "$out" '^\{"jsonrpc":"2.0","id":-7.250e1,"result"'

out=$(mcp '{"jsonrpc":"2.0","id":"\u0041b","method":"ping"}')
is "ping, escaped string id kept byte for byte" "$out" '{"jsonrpc":"2.0","id":"\u0041b","result":{}}'

out=$(mcp '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"demo://item/9"}}' | data_lines)
like "resources/read by template" "$out" '"text":"item 9"'

out=$(mcp '{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"t_greeting","arguments":{"name":"Bo"}}}' | data_lines)
like "prompts/get routed, prefix removed" "$out" 'Hello, Bo!'

out=$(mcp '{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"demo__greeting"},"argument":{"name":"name","value":"L"}}}')
like "completion/complete routed" "$out" '"values":\["Linus"\]'

out=$(mcp '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"demo__sleep","arguments":{"ms":100,"steps":2},"_meta":{"progressToken":"tok"}}}' | data_lines)
like "progress token restored as a string" "$out" '"progressToken":"tok","progress":1'
out=$(mcp '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo__sleep","arguments":{"ms":100,"steps":1},"_meta":{"progressToken":99}}}' | data_lines)
like "progress token restored as a number" "$out" '"progressToken":99,"progress":1'

out=$("$MCPCTL" -s "$CTL" status)
like "mcpctl status lists both upstreams ready" "$out" 'demo +stdio +ready .*two +stdio +ready'
like "mcpctl status reports the resource collision" "$out" 'resources demo://readme: kept from demo, dropped from two'

code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $SID" "$URL")
is "DELETE ends the session" "$code" 200
is "the session is gone afterwards" "$(status_of '{"jsonrpc":"2.0","id":1,"method":"ping"}')" 404
finish

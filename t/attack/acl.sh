#!/bin/sh
# SPDX-License-Identifier: ISC
# A named client's allow and deny patterns against resource URIs spelled
# to escape them: "..", "%2e%2e", "%2F", "\", "..;", double encoding,
# encoded letters, mixed case, empty segments.  The patterns see the
# URI's normal form, what cannot be checked is refused with -32602 and
# a reason, and the upstream (t/attack/upstream.py files, a file server
# whose template file:///{+path} takes any path) never receives a URI
# whose path, read as a file server reads it, is outside what the client
# may use.
. "$(dirname "$0")/lib.sh"

READER=reader-token-0123456789abcdef
DENIER=denier-token-0123456789abcdef
SEEN=$T/seen
: > "$SEEN"
GLOBALS="clients = (
  { name = \"reader\"; token = \"$READER\"; allow = [ \"file:///pub/*\" ]; },
  { name = \"denier\"; token = \"$DENIER\";
    deny = [ \"file:///pub/private/*\", \"file:///secret/*\" ]; } );"
start_gateway "{ name = \"files\"; command = [ \"$PY\", \"$ATTACK/upstream.py\", \"files\", \"$SEEN\" ]; prefix = \"\"; }"

# as TOKEN: open a session with that client's token ($SID, $TOK).
as() {
	TOK=$1
	SID=
	curl -s -D "$T/headers" -o "$T/init" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H "Authorization: Bearer $TOK" \
	    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"acl","version":"1"}}}' \
	    "$URL"
	SID=$(tr -d '\r' < "$T/headers" | awk 'tolower($1) == "mcp-session-id:" { print $2 }')
	mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	    -H "Authorization: Bearer $TOK" > /dev/null
}

# ask BODY: the answer's JSON line.
ask() {
	mcp "$1" -H "Authorization: Bearer $TOK" | data_lines
}

# read URI-AS-JSON-TEXT: the answer to resources/read.
read_uri() {
	ask "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"$1\"}}"
}

# refused DESCRIPTION URI-AS-JSON-TEXT REASON: resources/read answers
# -32602 with the reason.
refused() {
	_r_out=$(read_uri "$2")
	like "$1: -32602" "$_r_out" '"error":\{"code":-32602,'
	like "$1: says why" "$_r_out" "$3"
}

# unknown DESCRIPTION URI-AS-JSON-TEXT: resources/read answers as for a
# resource that does not exist (-32002).
unknown() {
	like "$1: unknown" "$(read_uri "$2")" '"error":\{"code":-32002,"message":"Resource not found'
}

as "$READER"
like "reader: file:///pub/a.txt is read" "$(read_uri 'file:///pub/a.txt')" '"text":"read file:///pub/a.txt"'
unknown "reader: file:///secret/key.txt" 'file:///secret/key.txt'
refused "reader: file:///pub/../secret/key.txt" 'file:///pub/../secret/key.txt' "a '\\.\\.' segment in the path"
refused "reader: file:///pub/a/../../secret/key.txt" 'file:///pub/a/../../secret/key.txt' "a '\\.\\.' segment"
refused "reader: file:///pub/%2e%2e/secret/key.txt" 'file:///pub/%2e%2e/secret/key.txt' "a '\\.\\.' segment"
refused "reader: file:///pub/%2E%2e/secret/key.txt" 'file:///pub/%2E%2e/secret/key.txt' "a '\\.\\.' segment"
refused "reader: file:///pub/.%2E/secret/key.txt" 'file:///pub/.%2E/secret/key.txt' "a '\\.\\.' segment"
refused "reader: file:///pub/..%2Fsecret/key.txt" 'file:///pub/..%2Fsecret/key.txt' "an encoded '/' \\(%2F\\) in the path"
refused "reader: file:///pub/..%2fsecret/key.txt" 'file:///pub/..%2fsecret/key.txt' "an encoded '/'"
refused "reader: file:///pub/%2e%2e%2fsecret%2fkey.txt" 'file:///pub/%2e%2e%2fsecret%2fkey.txt' "an encoded '/'"
refused "reader: file:///pub/..%5Csecret" 'file:///pub/..%5Csecret' "an encoded '[^']*' \\(%5C\\) in the path"
refused "reader: file:///pub\\\\..\\\\secret\\\\key.txt" 'file:///pub\\..\\secret\\key.txt' "a '[^']*' in the path"
refused "reader: file:///pub/%252e%252e/secret/key.txt" 'file:///pub/%252e%252e/secret/key.txt' "a double percent-encoding"
refused "reader: file:///pub/%252E%252E%252Fsecret" 'file:///pub/%252E%252E%252Fsecret' "a double percent-encoding"
refused "reader: file:///pub/\\u002e\\u002e/secret/key.txt (JSON escapes)" 'file:///pub/\u002e\u002e/secret/key.txt' "a '\\.\\.' segment"
refused "reader: file:///pub/..;/secret/key.txt" 'file:///pub/..;/secret/key.txt' "a '\\.\\.' segment"
refused "reader: file:///pub//../secret/key.txt" 'file:///pub//../secret/key.txt' "an empty segment"
refused "reader: file:///pub/%2e/a.txt" 'file:///pub/%2e/a.txt' "a '\\.' segment spelled with %2E"
refused "reader: file:///pub/a.txt%00" 'file:///pub/a.txt%00' "an encoded NUL"
refused "reader: file:///pub/a%zz" 'file:///pub/a%zz' "an invalid percent-encoding"
refused "reader: a control character" 'file:///pub/a\u0009b' "a control character"
out=$(ask '{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///pub/../secret/key.txt"}}')
like "reader: resources/subscribe with '..': -32602" "$out" '"error":\{"code":-32602,.*resources/subscribe: params.uri'
out=$(ask '{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"file:///pub/%2e%2e/secret/key.txt"}}')
like "reader: resources/unsubscribe with '%2e%2e': -32602" "$out" '"error":\{"code":-32602,'
out=$(ask '{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"file:///pub/../{+path}"},"argument":{"name":"path","value":"x"}}}')
like "reader: completion/complete of a ref with '..': -32602" "$out" '"error":\{"code":-32602,.*params.ref.uri'
# The normal form is what allows: a '.' segment and encoded letters.
like "reader: file:///pub/./a.txt is read, as written" "$(read_uri 'file:///pub/./a.txt')" '"text":"read file:///pub/./a.txt"'
like "reader: file:///%70ub/a.txt is read, as written" "$(read_uri 'file:///%70ub/a.txt')" '"text":"read file:///%70ub/a.txt"'
ask '{"jsonrpc":"2.0","id":5,"method":"resources/list","params":{}}' > "$T/list"
like "reader: the list has file:///pub/a.txt" "$(cat "$T/list")" 'file:///pub/a.txt'
ok "reader: the list has neither file:///secret/key.txt nor file:///pub/../secret/listed.txt" \
    sh -c "! grep -q secret '$T/list'"

# 2026-07-28 subscriptions/listen: only the allowed URIs are honoured
# (and subscribed at the upstream).
ENV='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"acl","version":"1"}}'
curl -s --max-time 2 -o "$T/listen" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: subscriptions/listen' \
    -H "Authorization: Bearer $READER" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":\"L\",\"method\":\"subscriptions/listen\",\"params\":{$ENV,\"notifications\":{\"resourceSubscriptions\":[\"file:///pub/../secret/key.txt\",\"file:///pub/%2e%2e/secret/key.txt\",\"file:///pub%2F..%2Fsecret/key.txt\",\"file:///pub/a.txt\"]}}}" \
    "$URL"
like "reader: listen honours file:///pub/a.txt alone" "$(cat "$T/listen")" '"resourceSubscriptions":\["file:///pub/a.txt"\]'

as "$DENIER"
like "denier: file:///pub/a.txt is read" "$(read_uri 'file:///pub/a.txt')" '"text":"read file:///pub/a.txt"'
unknown "denier: file:///secret/key.txt" 'file:///secret/key.txt'
unknown "denier: file:///pub/private/key.txt" 'file:///pub/private/key.txt'
unknown "denier: file:///%73ecret/key.txt" 'file:///%73ecret/key.txt'
unknown "denier: file:///%73%65%63%72%65%74/key.txt" 'file:///%73%65%63%72%65%74/key.txt'
unknown "denier: file:///pub/priv%61te/key.txt" 'file:///pub/priv%61te/key.txt'
unknown "denier: File:///secret/key.txt" 'File:///secret/key.txt'
unknown "denier: FILE:///pub/private/key.txt" 'FILE:///pub/private/key.txt'
unknown "denier: file:///pub/./private/key.txt" 'file:///pub/./private/key.txt'
unknown "denier: file:///./secret/key.txt" 'file:///./secret/key.txt'
refused "denier: file:///pub/../secret/key.txt" 'file:///pub/../secret/key.txt' "a '\\.\\.' segment"
refused "denier: file:///pub//private/key.txt" 'file:///pub//private/key.txt' "an empty segment"
refused "denier: file:///x/..%2Fsecret/key.txt" 'file:///x/..%2Fsecret/key.txt' "an encoded '/'"
refused "denier: file:///pub/priv%2561te/key.txt" 'file:///pub/priv%2561te/key.txt' "a double percent-encoding"

# What the upstream was sent, all of it allowed.
ok "the upstream saw reads" grep -q 'resources/read file:///pub/a.txt' "$SEEN"
n=$(grep -c '^resources/read ' "$SEEN")
is "the upstream saw the four allowed reads" "$n" 4
n=$(grep -vc '^resources/read ' "$SEEN")
is "and the listen's subscription and its end, and nothing else" "$n" 2
ok "... to file:///pub/a.txt" grep -q '^resources/subscribe file:///pub/a.txt$' "$SEEN"
ok "... and from it" grep -q '^resources/unsubscribe file:///pub/a.txt$' "$SEEN"
ok "no '..', encoded '/', '.', '\\' or '%25', secret or private reached it" \
    sh -c "! grep -Eiq '\\.\\.|%2f|%2e|%5c|\\\\|%25|secret|private' '$SEEN'"
like "refusals are logged, with the reason" "$(cat "$T/log")" "resources/read: params.uri refused: a '\\.\\.' segment in the path"
finish

#!/bin/sh
# SPDX-License-Identifier: ISC
# Tools registered by clients (tools/register): a request over the limit,
# prefixes that squat a configured client's or an upstream's names, and
# many large tools registered and withdrawn while another client pings.
# Sessions are plain Streamable HTTP sessions with a token (curl): the
# registration and the lists need no stream.
. "$(dirname "$0")/lib.sh"

ADMIN=admin-token-0123456789abcdef
BOB=bob-token-0123456789abcdef
BOB2=bob2-token-0123456789abcdef
VIEWER=viewer-token-0123456789abcdef
VIEWER2=viewer2-token-0123456789abcdef
CAROL=carol-token-0123456789abcdef
BOUND_KB=163840		# 64 MiB of tools held, parsing, answers, slack

# clients [CAROL-ENTRY] [BOB-REGISTER]: the global settings.
clients() {
	echo "auth_tokens = [ \"$ADMIN\" ];
clients = (
  { name = \"bob\"; token = \"$BOB\"; register = ${2:-true}; },
  { name = \"bob2\"; token = \"$BOB2\"; register = true; },
  { name = \"viewer\"; token = \"$VIEWER\"; allow = [ \"bob__*\", \"demo__echo\" ]; },
  { name = \"viewer2\"; token = \"$VIEWER2\"; allow = [ \"bob2__*\", \"carol__*\" ]; }${1:-}
);"
}
CAROL_ENTRY=",
  { name = \"carol\"; token = \"$CAROL\"; register = true; }"

# as TOKEN NAME: initialize a session with a token and clientInfo.name;
# sets SID and TOKEN.
as() {
	TOKEN=$1
	SID=
	curl -s -D "$T/headers" -o "$T/init" -H "Authorization: Bearer $1" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -d "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"$2\",\"version\":\"1\"}}}" \
	    "$URL"
	SID=$(tr -d '\r' < "$T/headers" | awk 'tolower($1) == "mcp-session-id:" { print $2 }')
	req '{"jsonrpc":"2.0","method":"notifications/initialized"}' > /dev/null
}

# req BODY: POST BODY (or @FILE) in the session, with its token.
req() {
	mcp "$1" -H "Authorization: Bearer $TOKEN" | data_lines
}

# py EXPRESSION: evaluate it on the JSON message read from stdin (r).
py() {
	"$PY" -c 'import json, sys
try:
    r = json.loads(sys.stdin.read())
    print(eval(sys.argv[1]))
except Exception as e:
    print("(%s)" % e)' "$1"
}

# register TOOL-NAME...: register small tools; print the names given.
register() {
	_rg_t=
	for _rg_n in "$@"; do
		_rg_t="$_rg_t${_rg_t:+,}{\"name\":\"$_rg_n\",\"inputSchema\":{\"type\":\"object\"}}"
	done
	req "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"tools/register\",\"params\":{\"tools\":[$_rg_t]}}" |
	    py '" ".join(r["result"]["registered"] + [x["reason"] for x in r["result"]["refused"]])'
}

# tools: the names the session lists, sorted, on one line.
tools() {
	req '{"jsonrpc":"2.0","id":"l","method":"tools/list"}' |
	    py '" ".join(sorted(t["name"] for t in r["result"]["tools"]))'
}

# alive: a fresh session of the admin's pings.
alive() {
	(
		as "$ADMIN" probe
		req '{"jsonrpc":"2.0","id":"p","method":"ping"}' |
		    grep -q '"result":{}'
	)
}

GLOBALS=$(clients)
start_gateway "$(demo demo)" "$(demo up 'prefix = "_u_";')"

# 1. One tool more than client_tools_max (128) in one request: the last
# is refused, with its name and why (it was freed, then its name read:
# a use after free, ASan aborted; the release build refused nothing).
as "$ADMIN" curl
"$PY" -c 'import json, sys
t = [{"name": "t%d" % i, "inputSchema": {"type": "object"}} for i in range(129)]
t.append({"name": "no schema"})
t.append(17)
print(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/register", "params": {"tools": t}}))' > "$T/129.json"
out=$(req "@$T/129.json")
is "129 tools at once: 128 registered" "$(echo "$out" | py 'len(r["result"]["registered"])')" 128
is "... the 129th refused, by name and position, with the reason" \
    "$(echo "$out" | py 'r["result"]["refused"][0]')" \
    "{'index': 128, 'name': 't128', 'reason': 'too many tools: a session may register 128 (client_tools_max)'}"
is "... a tool without a schema refused by name" \
    "$(echo "$out" | py 'r["result"]["refused"][1]["name"], r["result"]["refused"][1]["reason"]')" \
    "('no schema', 'inputSchema must be a JSON Schema object of type \"object\"')"
is "... and one that is not an object, by position" \
    "$(echo "$out" | py 'r["result"]["refused"][2]')" \
    "{'index': 130, 'name': '', 'reason': 'a tool must be an object'}"
out=$(req '{"jsonrpc":"2.0","id":2,"method":"tools/register","params":{"tools":[{"name":"t0","description":"again","inputSchema":{"type":"object"}},{"name":"t999","inputSchema":{"type":"object"}}]}}')
is "at the limit, a tool registered again is replaced, a new one refused" \
    "$(echo "$out" | py 'r["result"]["registered"], [x["name"] for x in r["result"]["refused"]]')" \
    "(['_curl__t0'], ['t999'])"
ok "the daemon answers afterwards" alive
req '{"jsonrpc":"2.0","id":3,"method":"tools/unregister","params":{"names":["t0","_curl__t1","nothing"]}}' > "$T/unreg"
is "tools/unregister by own and by exposed name" \
    "$(py 'r["result"]["unregistered"]' < "$T/unreg")" "['t0', '_curl__t1']"
is "... makes room for as many" "$(register t999 t998 t997)" \
    "_curl__t999 _curl__t998 too many tools: a session may register 128 (client_tools_max)"
req '{"jsonrpc":"2.0","id":4,"method":"tools/unregister","params":{"names":["t2",'"$(seq -s, 3 127 | sed 's/[0-9]*/"t&"/g')"',"t999","t998"]}}' > /dev/null
out=$(req '{"jsonrpc":"2.0","id":5,"method":"tools/register","params":{"tools":[{"name":"nul","description":"a\u0000b","inputSchema":{"type":"object"}},{"name":"n\u0000l","inputSchema":{"type":"object"}}]}}')
is "a NUL in a description is kept, in a name refused" \
    "$(echo "$out" | py 'r["result"]["registered"], r["result"]["refused"]')" \
    "(['_curl__nul'], [{'index': 1, 'name': 'n\\x00l', 'reason': 'name must be a string of 1 to 128 characters'}])"
out=$(req '{"jsonrpc":"2.0","id":6,"method":"tools/register","params":{"tools":[{"name":"a","na\u006de":"b","inputSchema":{"type":"object"}},{ "name" : "sp" ,
 "inputSchema" : { "type" : "object" , "properties" : { "a b" : { } } } , "x" : 1 }]}}')
is "a tool that gives its name twice (once escaped) is refused" \
    "$(echo "$out" | py 'r["result"]["refused"]')" \
    "[{'index': 0, 'name': '', 'reason': 'name is given more than once'}]"
is "a tool is listed without space between tokens, within strings kept" \
    "$(req '{"jsonrpc":"2.0","id":"l","method":"tools/list"}' | grep -o '{"name":"_curl__sp"[^]]*')" \
    '{"name":"_curl__sp","inputSchema":{"type":"object","properties":{"a b":{}}}}'

# 7. Prefixes.  An unnamed client called "bob" (or "bob__x") registers
# first: its tools must not be named bob__*, which the configured client
# bob's are, and which viewer may use.
as "$ADMIN" bob
is "an unnamed client named bob: its prefix is _bob__" "$(register evil)" _bob__evil
as "$ADMIN" bob__x
is "an unnamed client named bob__x: _bob__x__" "$(register evil)" _bob__x__evil
as "$BOB" editor
BOB_SID=$SID
is "the configured client bob registers as bob__" "$(register t)" bob__t
as "$VIEWER" viewer
is "viewer (allowed bob__*) sees bob's tool, no squatter's" "$(tools)" \
    "bob__t demo__echo"
like "... and may not call a squatter's" \
    "$(req '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"_bob__evil","arguments":{}}}')" \
    '"code":-32602,"message":"unknown tool: _bob__evil"'
# A second session of bob: numbered inside bob's names, not as bob2.
as "$BOB" editor
is "bob's second session registers as bob__2__" "$(register u)" bob__2__u
as "$BOB2" editor
is "the configured client bob2 registers as bob2__" "$(register v)" bob2__v
as "$VIEWER2" viewer2
is "viewer2 (allowed bob2__* and carol__*) sees bob2's tool only" \
    "$(tools)" "bob2__v"
# An unnamed client named "u": its prefix _u__ is in the names of the
# upstream whose prefix is _u_.
as "$ADMIN" u
is "an unnamed client's tool in an upstream's names is refused" \
    "$(register x)" "_u__x is in the names of upstream up (prefix _u_)"
# carol is configured later, while an unnamed client named carol has
# tools: it never had carol__, and carol gets it.
as "$ADMIN" carol
SQUATTER=$SID
is "an unnamed client named carol, before carol is configured" \
    "$(register c)" _carol__c
GLOBALS=$(clients "$CAROL_ENTRY")
write_conf "$(demo demo)" "$(demo up 'prefix = "_u_";')"
like "reload: carol configured" "$("$MCPCTL" -s "$CTL" reload 2>&1)" 'reloaded:'
as "$CAROL" editor
is "the configured client carol registers as carol__" "$(register c)" carol__c
as "$VIEWER2" viewer2
is "viewer2 sees carol's tool, not the unnamed one's" "$(tools)" \
    "bob2__v carol__c"
# A reload that takes register from bob withdraws bob's tools.
GLOBALS=$(clients "$CAROL_ENTRY" false)
write_conf "$(demo demo)" "$(demo up 'prefix = "_u_";')"
like "reload: bob may no longer register" "$("$MCPCTL" -s "$CTL" reload 2>&1)" 'reloaded:'
as "$VIEWER" viewer
is "viewer no longer sees bob's tools" "$(tools)" "demo__echo"
SID=$BOB_SID TOKEN=$BOB
is "... and bob may not register again" \
    "$(req '{"jsonrpc":"2.0","id":6,"method":"tools/register","params":{"tools":[]}}' | py 'r["error"]["message"]')" \
    "tools/register: client bob may not register tools"

# A 2026-07-28 client is sent no requests: its tools could only make
# their callers wait client_tool_timeout (30 s).  Not a method of that
# era (a check, not a fix).
out=$(curl -s -H "Authorization: Bearer $ADMIN" \
    -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/register' \
    -d '{"jsonrpc":"2.0","id":"m","method":"tools/register","params":{"tools":[{"name":"m","inputSchema":{"type":"object"}}],"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"}}}}' \
    "$URL" | data_lines)
like "a 2026-07-28 client may not register tools" "$out" \
    '"code":-32601,"message":"Method not found: tools/register"'

# A list of more than a page (page_size 500): the catalog's tools then
# the clients', each once, as many as mcpctl tools shows.
i=0
while [ "$i" -lt 4 ]; do
	as "$ADMIN" pager
	register $(seq -s ' ' -f 'p%g' 1 128) > /dev/null
	i=$((i + 1))
done
as "$ADMIN" lister
pages=$("$PY" -c 'import json, sys, urllib.request
url, sid, token = sys.argv[1:4]
names, cursor, pages = [], None, 0
while pages < 20:
    params = {"cursor": cursor} if cursor else {}
    body = json.dumps({"jsonrpc": "2.0", "id": pages, "method": "tools/list", "params": params}).encode()
    req = urllib.request.Request(url, body, {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": sid, "Authorization": "Bearer " + token})
    r = json.loads(urllib.request.urlopen(req).read())["result"]
    names += [t["name"] for t in r["tools"]]
    pages += 1
    cursor = r.get("nextCursor")
    if not cursor:
        break
print(pages, len(names), len(set(names)), names[-1])' "$URL" "$SID" "$ADMIN")
listed=$("$MCPCTL" -s "$CTL" tools | sed -n 's/^\([0-9]*\) tools$/\1/p')
is "the tools walked page by page: pages, tools, distinct, the last" \
    "$pages" "2 $listed $listed _pager__4__p128"

# Calls to client tools in flight: max_pending (256) per owner, and per
# caller whatever the number of owners (each call holds the caller's id
# and a timer until the owner answers or client_tool_timeout passes).
as "$ADMIN" slow
register wait > /dev/null
as "$ADMIN" slow
register wait > /dev/null
set --
i=0
while [ "$i" -lt 300 ]; do
	case $i in
	*[02468]) name=_slow__wait ;;
	*) name=_slow__2__wait ;;
	esac
	set -- "$@" "text:{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"$name\",\"arguments\":{}}}"
	i=$((i + 1))
done
"$PY" "$ATTACK/client.py" ws "$ADDR" up "Authorization: Bearer $ADMIN" \
    'text:{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"caller","version":"1"}}}' \
    'until:5:"id":"i"' "$@" 'until:10:"id":299' > "$T/calls" 2>&1
is "300 calls to two owners' tools from one session: 44 refused" \
    "$(grep -c 'too many calls to client tools in flight for this session (limit 256)' "$T/calls")" 44
ok "the daemon answers afterwards" alive

# 8. Many large tools while another client pings: 1792 tools of 64 KiB
# (14 sessions of two requests of 64), after one session's 128 tools of
# 60 KiB of tiny properties (a tree of them costs 20 times its text).
# Each registration and each session's end used to rebuild the whole
# catalog, holding every tool as a tree and as text (RSS +340 MiB, pings
# stalled up to 0.7 s here).  Bound: what is held is counted with its
# overhead (8 MiB a session, 64 MiB in all) and refused beyond; the RSS
# stays under its value before + 160 MiB; every ping is answered.
"$PY" -c 'import json, sys
desc = [{"name": "t%d" % i, "description": "x" * (65536 - 120), "inputSchema": {"type": "object"}} for i in range(64)]
props = [{"name": "p%d" % i, "inputSchema": {"type": "object", "properties": {"p%d" % k: {} for k in range(5500)}}} for i in range(128)]
for name, tools in (("desc", desc), ("props", props)):
    with open(sys.argv[1] + "/" + name + ".json", "w") as f:
        json.dump({"jsonrpc": "2.0", "id": 7, "method": "tools/register", "params": {"tools": tools}}, f, separators=(",", ":"))' "$T"
quarantine 0
# (The daemon restarts under the quarantine setting for ASan.)
stop_gateway
GLOBALS=$(clients)
start_gateway "$(demo demo)"
as "$ADMIN" pinger
PINGER=$SID
rss0=$(rss_kb "$GW_PID")
echo "# supervisor RSS before: $rss0 KiB"
bg rss_sampler "$T/rss" "$T/sampled"
sampler_pid=$!
# The pinger: another client, until told to stop (at most 3000 pings).
pinger() {
	SID=$PINGER TOKEN=$ADMIN
	n=0
	while [ ! -e "$T/stop" ] && [ "$n" -lt 3000 ]; do
		curl -s -o "$T/pong" -w '%{http_code} %{time_total}\n' \
		    -H "Authorization: Bearer $ADMIN" \
		    -H 'Content-Type: application/json' \
		    -H 'Accept: application/json, text/event-stream' \
		    -H "Mcp-Session-Id: $SID" \
		    -d '{"jsonrpc":"2.0","id":"p","method":"ping"}' "$URL"
		n=$((n + 1))
		sleep 0.02
	done > "$T/pings"
}
bg pinger
pinger_pid=$!
as "$ADMIN" owner
OWNERS=$SID
req "@$T/props.json" > "$T/answer.props"
i=0
while [ "$i" -lt 14 ]; do
	as "$ADMIN" owner
	OWNERS="$OWNERS $SID"
	req "@$T/desc.json" > "$T/answer.$i.a"
	sed 's/"t\([0-9]*\)"/"u\1"/g' "$T/desc.json" > "$T/desc2.json"
	req "@$T/desc2.json" > "$T/answer.$i.b"
	i=$((i + 1))
done
counts=$("$PY" -c 'import json, sys
n = [0, 0, 0, 0, 0]
for name in sys.argv[1:]:
    try:
        r = json.load(open(name))["result"]
    except (ValueError, KeyError):
        continue
    n[0] += 1
    n[1] += len(r["registered"]) if not name.endswith("props") else 0
    n[2] += "the tools of all clients may hold 64 MiB" in str(r["refused"])
    n[3] += "a session" in str(r["refused"])
    n[4] += len(r["refused"])
print(*n)' "$T"/answer.*)
read -r answered registered all_full session_full refused <<EOF
$counts
EOF
echo "# tools of 64 KiB registered: $registered; tools refused: $refused"
is "every register request was answered" "$answered" 29
ok "what all clients hold is bounded: tools refused at 64 MiB" \
    test "${all_full:-0}" -gt 0
ok "... and per session at 8 MiB" test "${session_full:-0}" -gt 0
ok "... and fewer than 64 MiB of tools of 64 KiB registered (${registered:-?})" \
    test "${registered:-9999}" -lt 1024
rss1=$(rss_kb "$GW_PID")
# The owners end.
for sid in $OWNERS; do
	curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $ADMIN" \
	    -H "Mcp-Session-Id: $sid" "$URL"
done
sleep 0.5
touch "$T/stop" "$T/sampled"
wait "$pinger_pid" "$sampler_pid"
max=$(rss_max "$T/rss")
echo "# supervisor RSS: $rss0 KiB before, $rss1 KiB with the tools, at most ${max:-?} KiB ($(wc -l < "$T/rss") samples), $(rss_kb "$GW_PID") KiB after their sessions ended"
ok "the supervisor's RSS stayed under $rss0 + $BOUND_KB KiB (at most ${max:-?} KiB, +$((${max:-0} - rss0)) KiB)" \
    test "${max:-999999999}" -lt $((rss0 + BOUND_KB))
npings=$(wc -l < "$T/pings")
echo "# pings: $npings, the slowest $(sort -k2 -n "$T/pings" | tail -1 | cut -d' ' -f2) s (a figure, not a check)"
ok "another client's pings were answered throughout ($npings)" \
    test "$npings" -gt 0 -a "$(grep -c '^200 ' "$T/pings")" -eq "$npings"
as "$ADMIN" after
is "after the owners ended, their room is given back" \
    "$(req "@$T/desc.json" | py 'len(r["result"]["registered"])')" 64
finish

#!/bin/sh
# SPDX-License-Identifier: ISC
# Rate limits with the real daemon and a real (demo) upstream: a greedy
# named client is held to its rate while a polite one is served, a shared
# rule on a tool holds both together, what is refused says which rule and
# when to retry, and /metrics and mcpctl status count it.  The bound checked
# is the bucket's (burst + rate x the time the calls took), never a speed.
# A rule's concurrent holds a client to one slow call at a time (refused
# at once, HTTP 429 for a 2026-07-28 call) and gives the slot back when the
# call ends.
. "$(dirname "$0")/lib.sh"

GREEDY=greedy-token-0123456789abcdef
POLITE=polite-token-0123456789abcdef
SLEEPER=sleeper-token-0123456789abcdef
GLOBALS="clients = ( { name = \"greedy\"; token = \"$GREEDY\"; metrics = true; },
  { name = \"polite\"; token = \"$POLITE\"; },
  { name = \"sleeper\"; token = \"$SLEEPER\"; } );
rate_limits = ( { name = \"per-client\"; rate = 0.2; burst = 2; },
  { name = \"adder\"; tool = \"demo__add\"; rate = 0.1; burst = 1; shared = true; },
  { name = \"sleepers\"; tool = \"demo__sleep\"; concurrent = 1; } );"
start_gateway "$(demo demo)"
BASE=${URL%/mcp}

# session_as TOKEN: initialize with a token; SID set.
session_as() {
	SID=
	curl -s -D "$T/headers" -o "$T/init" -H "Authorization: Bearer $1" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' \
	    "$URL"
	SID=$(tr -d '\r' < "$T/headers" | awk 'tolower($1) == "mcp-session-id:" { print $2 }')
	mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "Authorization: Bearer $1" > /dev/null
}
# call TOKEN SID ID TOOL ARGS: one tools/call; its answer.
call() {
	SID=$2 mcp "{\"jsonrpc\":\"2.0\",\"id\":$3,\"method\":\"tools/call\",\"params\":{\"name\":\"$4\",\"arguments\":$5}}" \
	    -H "Authorization: Bearer $1" | data_lines
}

session_as "$GREEDY"
GSID=$SID
session_as "$POLITE"
PSID=$SID

# The greedy client calls as fast as it can.
t0=$(date +%s%N)
okn=0
refused=0
for i in 1 2 3 4 5 6 7 8; do
	out=$(call "$GREEDY" "$GSID" "$i" demo__echo '{"text":"g"}')
	case $out in
	*'"result":'*) okn=$((okn + 1)) ;;
	*'"reason":"rate_limited","limit":"per-client"'*) refused=$((refused + 1)); last=$out ;;
	*) echo "# unexpected: $out" ;;
	esac
done
t1=$(date +%s%N)
# At most burst + rate x elapsed (+1 for a token that came meanwhile).
bound=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", 2 + 0.2 * (b - a) / 1e9 + 1 }')
ok "the greedy client is held to its bucket ($okn of 8 answered, at most $bound)" [ "$okn" -le "$bound" ]
ok "so some of its calls are refused ($refused)" [ "$refused" -ge 1 ]
is "every call was answered or refused" "$((okn + refused))" 8
like "a refusal names the rule and when to retry" "$last" \
    '"code":-32003,"message":"rate limit per-client: more than 0.2 calls per second \(burst 2\); retry after [1-5] s","data":\{"reason":"rate_limited","limit":"per-client","retryAfter":[1-5]\}'

# Meanwhile the polite one is served: its own bucket.
like "the polite client is served" "$(call "$POLITE" "$PSID" 1 demo__echo '{"text":"p1"}')" 'p1'
like "and again" "$(call "$POLITE" "$PSID" 2 demo__echo '{"text":"p2"}')" 'p2'

# A shared rule on one tool: one bucket for both.
session_as "$POLITE"
P2=$SID
sleep 6	# greedy's bucket has a token again (0.2 a second)
like "the first call to the shared tool goes through" "$(call "$GREEDY" "$GSID" 20 demo__add '{"a":1,"b":2}')" '"result":'
like "another client's is refused by the shared rule" "$(call "$POLITE" "$P2" 21 demo__add '{"a":1,"b":2}')" \
    '"reason":"rate_limited","limit":"adder"'

curl -s -H "Authorization: Bearer $GREEDY" "$BASE/metrics" > "$T/m"
like "refusals are counted by rule" "$(cat "$T/m")" \
    "mcp_supervisor_rate_limited_total\\{limit=\"per-client\"\\} $refused .*mcp_supervisor_rate_limited_total\\{limit=\"adder\"\\} 1"
"$MCPCTL" -s "$CTL" status > "$T/status" || true
like "mcpctl status shows the rules" "$(cat "$T/status")" \
    "rate limits .* per-client: 0.2/s, burst 2 per principal; [0-9]+ passed, $refused refused .* adder: 0.1/s, burst 1, shared; 1 passed, 1 refused"
like "the daemon's log says who was held" "$(cat "$T/log")" \
    'rate limit per-client: client greedy held to 0.2 calls per second'

# concurrent = 1 on the sleep tool: one slow call in flight, the next
# refused at once (and takes none of per-client's two tokens), the slot
# given back when the slow one is answered.
# in_flight: the sleepers rule's calls in flight, from /metrics.
in_flight() {
	curl -s -H "Authorization: Bearer $GREEDY" "$BASE/metrics" |
	    sed -n 's/^mcp_supervisor_rate_limit_in_flight{limit="sleepers"} //p'
}
session_as "$SLEEPER"
SSID=$SID
call "$SLEEPER" "$SSID" 30 demo__sleep '{"ms":3000}' > "$T/slow" &
SLOW=$!
for _ in $(seq 200); do
	[ "$(in_flight)" = 1 ] && break
	sleep 0.05
done
is "the slow call is in flight" "$(in_flight)" 1
like "a second call while it is in flight is refused" \
    "$(call "$SLEEPER" "$SSID" 31 demo__sleep '{"ms":10}')" \
    '"code":-32003,"message":"rate limit sleepers: more than 1 calls in flight; retry after 1 s","data":\{"reason":"concurrency_limited","limit":"sleepers","retryAfter":1\}'
curl -s -D "$T/h429" -o "$T/b429" -H "Authorization: Bearer $SLEEPER" \
    -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' \
    -H 'Mcp-Name: demo__sleep' \
    -d '{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"demo__sleep","arguments":{"ms":10},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
    "$URL"
like "a 2026-07-28 call over it gets HTTP 429" "$(head -1 "$T/h429")" ' 429 '
like "with Retry-After: 1" "$(tr -d '\r' < "$T/h429")" 'Retry-After: 1'
like "and the refusal in its body" "$(cat "$T/b429")" '"reason":"concurrency_limited","limit":"sleepers"'
like "another client's slow call is counted apart" \
    "$(call "$POLITE" "$PSID" 33 demo__sleep '{"ms":10}')" '"result":'
wait "$SLOW"
like "the slow call is answered" "$(cat "$T/slow")" '"result":'
is "its slot is given back" "$(in_flight)" 0
like "the next call goes through (the refused took no token)" \
    "$(call "$SLEEPER" "$SSID" 34 demo__sleep '{"ms":10}')" '"result":'
"$MCPCTL" -s "$CTL" status > "$T/status" || true
like "mcpctl status shows the calls in flight" "$(cat "$T/status")" \
    "sleepers: 0 of 1 in flight per principal; 3 passed, 2 refused"
like "the daemon's log says who was held" "$(cat "$T/log")" \
    'rate limit sleepers: client sleeper held to 1 calls in flight'

finish

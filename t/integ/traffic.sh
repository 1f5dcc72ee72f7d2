#!/bin/sh
# SPDX-License-Identifier: ISC
# Traffic policy with the real daemon and real (demo) upstreams: a stdio
# upstream capped at one call in flight queues the next, refuses one over
# max_queued and one that waited past queue_timeout; an upstream that hangs
# opens its circuit breaker (calls then fail fast, /readyz is 503 for it,
# /metrics and mcpctl status say so), and once it recovers a probe call
# after the cool-down closes the breaker again.  No call is left hanging.
. "$(dirname "$0")/lib.sh"

start_gateway \
    "$(demo slow 'max_concurrent = 1; max_queued = 1; queue_timeout = 2;')" \
    "$(demo flaky 'request_timeout = 1; breaker_failures = 2; breaker_cooldown = 2; required = true;')"
BASE=${URL%/mcp}
session

# until_true SECONDS COMMAND...: run COMMAND every 0.1 s until it succeeds.
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
call() {
	mcp "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}" | data_lines
}
metric() { curl -s "$BASE/metrics" | grep -F "$1"; }
has_metric() { curl -s "$BASE/metrics" | grep -qF "$1"; }
breaker() {
	"$MCPCTL" -s "$CTL" -j status | tr -d ' \n' |
	    sed -n 's/.*"name":"flaky"[^]]*"breaker":{[^}]*"state":"\([a-z-]*\)".*/\1/p'
}

# The cap: one call in flight, one waiting, the next refused.
call 1 slow__sleep '{"ms":1500}' > "$T/a" &
A=$!
until_true 5 has_metric 'mcp_supervisor_upstream_calls_in_flight{upstream="slow"} 1'
call 2 slow__echo '{"text":"second"}' > "$T/b" &
B=$!
ok "the second call waits for the slot" until_true 5 has_metric 'mcp_supervisor_upstream_calls_queued{upstream="slow"} 1'
like "a third is refused: the queue is full" "$(call 3 slow__echo '{"text":"third"}')" \
    '"code":-32003,"message":"upstream slow is busy: 1 calls in flight \(max_concurrent\) and 1 waiting \(max_queued\)","data":\{"reason":"queue_full","upstream":"slow","maxConcurrent":1,"maxQueued":1,"retryAfter":1\}'
wait $A $B
like "the first call is answered" "$(cat "$T/a")" '"result":'
like "the one that waited is answered after it" "$(cat "$T/b")" 'second'
call 4 slow__sleep '{"ms":4000}' > "$T/a" &
A=$!
until_true 5 has_metric 'mcp_supervisor_upstream_calls_in_flight{upstream="slow"} 1'
like "a call that waits past queue_timeout is refused" "$(call 5 slow__echo '{"text":"late"}')" \
    '"code":-32003,"message":"upstream slow is busy: no slot came free within 2 s.*"reason":"queue_timeout"'
wait $A
like "and the one in flight is answered" "$(cat "$T/a")" '"result":'
like "queue refusals are counted" "$(curl -s "$BASE/metrics")" \
    'mcp_supervisor_upstream_calls_shed_total\{upstream="slow",reason="queue_full"\} 1 .*reason="queue_timeout"\} 1'

# The breaker: the upstream hangs, two calls time out, it opens.
is "the breaker starts closed" "$(breaker)" closed
like "a call to a hung upstream times out" "$(call 10 flaky__hang '{"seconds":3}')" '"code":-32001'
like "and another" "$(call 11 flaky__echo '{"text":"x"}')" '"code":-32001'
is "two timeouts in a row open the breaker" "$(breaker)" open
like "calls now fail fast with when to retry" "$(call 12 flaky__echo '{"text":"x"}')" \
    '"code":-32000,"message":"upstream flaky is failing: circuit breaker open after 2 failures in a row \(last: upstream flaky did not answer within 1 s\); retry after [12] s","data":\{"reason":"circuit_open","upstream":"flaky","breaker":"open","retryAfter":[12]\}'
is "/readyz is 503 while a required upstream's breaker is open" "$(curl -s -o "$T/ready" -w '%{http_code}' "$BASE/readyz")" 503
like "and says why" "$(cat "$T/ready")" 'required upstream flaky is failing: its circuit breaker is open'
like "/metrics has its state" "$(curl -s "$BASE/metrics")" \
    'mcp_supervisor_upstream_breaker_state\{upstream="flaky",state="open"\} 1'
"$MCPCTL" -s "$CTL" status > "$T/status" || true
like "mcpctl status shows it" "$(cat "$T/status")" \
    'flaky: 0 in flight, 0 waiting; breaker open, 2/2 failures in a row, opened 1, 1 calls failed fast, retry after [12] s; last: upstream flaky did not answer within 1 s'
is "the upstream itself was not restarted" "$(field flaky 3)" ready

# It recovers; after the cool-down one probe goes through and closes it.
half_open() { [ "$(breaker)" = half-open ]; }
ok "the cool-down ends: half-open" until_true 10 half_open
like "the probe is answered" "$(call 13 flaky__echo '{"text":"back"}')" 'back'
is "and the breaker is closed" "$(breaker)" closed
is "/readyz is 200 again" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" 200
like "calls go through" "$(call 14 flaky__echo '{"text":"again"}')" 'again'
like "the opening is counted" "$(curl -s "$BASE/metrics")" \
    'mcp_supervisor_upstream_breaker_opened_total\{upstream="flaky"\} 1'
is "nothing is left in flight" "$(metric 'mcp_supervisor_upstream_calls_in_flight{upstream="slow"}')" \
    'mcp_supervisor_upstream_calls_in_flight{upstream="slow"} 0'

finish

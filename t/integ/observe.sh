#!/bin/sh
# SPDX-License-Identifier: ISC
# Observability: /metrics (checked by promtool under load), /healthz and
# /readyz, the access log (a file reopened by mcpctl reopen and SIGHUP,
# also when the reload fails, and syslog; refusals over a limit and of a
# bad Origin), the same line in the daemon's log at -v, security refusals with the peer and the refused value,
# mcpctl status, sessions, tools, check and their exit statuses.
. "$(dirname "$0")/lib.sh"

PROMTOOL=$(command -v promtool || true)
if [ -z "$PROMTOOL" ]; then
	echo "promtool not found (Debian package prometheus)"
	[ -n "${MCPS_REQUIRE_ALL:-}" ] && exit 1
	exit 77
fi

ALOG=$T/access.log
GLOBALS="instance = \"obs1\"; access_log = \"$ALOG\";"
BAD='{ name = "bad"; transport = "stdio"; command = [ "/nonexistent/mcp-server" ]; max_failures = 1; }'
WAIT_STATE=none start_gateway "$(demo demo 'required = true;')" "$(demo spare)" "$BAD"
wait_state ready demo
wait_state ready spare
wait_state failed bad
BASE=${URL%/mcp}

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
code() { curl -s -o "$T/out" -w '%{http_code}' "$@"; }

# Health.
is "/healthz is 200" "$(code "$BASE/healthz")" 200
is "/readyz is 200 once every upstream has been ready (or, not required, has failed)" "$(code "$BASE/readyz")" 200
is "/readyz answers HEAD" "$(curl -s -I -o /dev/null -w '%{http_code}' "$BASE/readyz")" 200
is "/readyz refuses POST" "$(code -d x "$BASE/readyz")" 405
is "/readyz is under the Host rule" "$(code -H 'Host: evil.example' "$BASE/readyz")" 403

# Calls, and what the access log says of them.
session
like "the session id begins with the instance" "$SID" '^obs1[.][0-9a-f]{32}$'
out=$(mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"SECRET-ARGUMENT-42"}}}' | data_lines)
like "a call goes through" "$out" 'SECRET-ARGUMENT-42'
mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}' > /dev/null
mcp '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo__echo","arguments":5}}' > /dev/null
mcp '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"demo://readme"}}' > /dev/null
curl -s -o /dev/null -H 'Host: evil.example:80' -H 'Origin: http://evil.example' "$URL"
until_true 5 grep -q 'status=403' "$ALOG"
short=$(printf '%s' "$SID" | cut -c1-13)
like "initialize is logged" "$(grep 'method="initialize"' "$ALOG")" \
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z peer=127.0.0.1 session=$short client=\"curl\" auth=- transport=http method=\"initialize\" name=\"\" upstream=\\(gateway\\) outcome=ok code=- gateway_ms=[0-9.]+ total_ms=[0-9.]+"
like "a call: tool, upstream, outcome and both latencies" "$(grep 'name="demo__echo"' "$ALOG")" \
    "session=$short client=\"curl\" .*transport=http method=\"tools/call\" name=\"demo__echo\" upstream=demo outcome=ok code=- gateway_ms=[0-9.]+ total_ms=[0-9.]+"
like "an unknown tool: refused with its code" "$(grep 'name="nope"' "$ALOG")" \
    'upstream=\(gateway\) outcome=refused code=-32602'
like "an upstream's error answer: its code" "$(grep 'outcome=error' "$ALOG")" \
    'name="demo__echo" upstream=demo outcome=error code=-32602'
like "a resource read names its URI" "$(grep 'method="resources/read"' "$ALOG")" \
    'name="demo://readme" upstream=demo outcome=ok'
is "arguments never reach the access log" "$(grep -c SECRET "$ALOG")" 0
like "a refused Host: the peer and the refused values" "$(grep 'status=403' "$ALOG")" \
    'peer=127.0.0.1 http="GET /mcp" status=403 refused="Host not allowed: Host evil.example:80 Origin http://evil.example"'
like "and the daemon's log has the peer too" "$(cat "$T/log")" \
    'http 127.0.0.1: GET /mcp refused: Host not allowed \(Host "evil.example:80"'
ok "health checks are not access logged (only refused ones)" sh -c "! grep readyz '$ALOG' | grep -qv status=403"

# The metrics.
curl -s "$BASE/metrics" > "$T/m1"
ok "promtool check metrics" "$PROMTOOL" check metrics < "$T/m1"
like "requests by upstream, method and outcome" "$(cat "$T/m1")" \
    'mcp_supervisor_requests_total\{upstream="demo",method="tools/call",outcome="ok"\} 1'
like "an upstream's error answer counts as an error" "$(cat "$T/m1")" \
    'mcp_supervisor_requests_total\{upstream="demo",method="tools/call",outcome="error"\} 1'
like "refusals count" "$(cat "$T/m1")" 'mcp_supervisor_refused_total\{reason="host"\} 2'
like "sessions by transport" "$(cat "$T/m1")" 'mcp_supervisor_sessions\{transport="http"\} 1'
like "upstream state" "$(cat "$T/m1")" 'mcp_supervisor_upstream_state\{upstream="demo",state="ready"\} 1'
like "worker RSS" "$(cat "$T/m1")" 'mcp_supervisor_worker_resident_bytes\{upstream="demo"\} [1-9][0-9]+'
like "both latency histograms" "$(cat "$T/m1")" \
    'mcp_supervisor_request_duration_seconds_count\{upstream="demo"\} 3.*mcp_supervisor_request_gateway_seconds_count\{upstream="demo"\} 3'
like "build info with the instance" "$(cat "$T/m1")" \
    'mcp_supervisor_build_info\{version="[^"]+",gateway_instance="obs1"\} 1'
ok "no session id in any label" sh -c "! grep -q '$(printf '%s' "$SID" | cut -c6-13)' '$T/m1'"
is "/metrics is under the Host rule" "$(code -H 'Host: evil.example' "$BASE/metrics")" 403

# A scrape taken under load: calls from several clients while scraping
# (ids of their own: one in flight in the session is not used again).
load() {
	i=0
	while [ $i -lt 40 ]; do
		mcp "{\"jsonrpc\":\"2.0\",\"id\":$(($1 + i)),\"method\":\"tools/call\",\"params\":{\"name\":\"demo__echo\",\"arguments\":{\"text\":\"x\"}}}" > /dev/null
		i=$((i + 1))
	done
}
load 1000 & L1=$!
load 2000 & L2=$!
load 3000 & L3=$!
sleep 0.3
curl -s "$BASE/metrics" > "$T/m2"
wait $L1 $L2 $L3
ok "promtool check metrics on a scrape under load" "$PROMTOOL" check metrics < "$T/m2"
curl -s "$BASE/metrics" > "$T/m3"
like "every call counted" "$(cat "$T/m3")" \
    'mcp_supervisor_requests_total\{upstream="demo",method="tools/call",outcome="ok"\} 121'

# mcpctl.
out=$("$MCPCTL" -s "$CTL" status)
like "status: instance, pid, uptime, state" "$out" 'instance obs1, pid [0-9]+, up [0-9]+s, running'
like "status: ready, calls in flight" "$out" 'calls? in flight.*ready'
out=$("$MCPCTL" -s "$CTL" sessions)
like "sessions: client, version, protocol, transport, peer" "$out" \
    "$short +curl +1 +2025-11-25 +http +127.0.0.1 "
out=$("$MCPCTL" -j -s "$CTL" sessions)
like "sessions -j" "$out" '"client": "curl"'
like "sessions -j: how many there are" "$out" '"total": 1'
# A second session: sessions N lists the newest N, and says of how many.
FIRST=$SID
session
second=$(printf '%s' "$SID" | cut -c1-13)
out=$("$MCPCTL" -s "$CTL" sessions 1)
like "sessions 1: the newest" "$out" "$second +curl"
like "sessions 1: of how many" "$out" 'the newest 1 of 2 sessions'
is "sessions 1: only the newest" "$(printf '%s\n' "$out" | grep -c "^$short ")" 0
like "sessions: both" "$("$MCPCTL" -s "$CTL" sessions)" '2 sessions$'
rc=0; out=$("$MCPCTL" -s "$CTL" sessions 0 2>&1) || rc=$?
like "sessions 0: refused by the daemon, exit 1" "$rc $out" '^1 mcpctl: sessions: the number to list is from 1 to 10000'
rc=0; out=$("$MCPCTL" -s "$CTL" sessions many 2>&1) || rc=$?
like "sessions many: a usage error, exit 2" "$rc $out" '^2 mcpctl: sessions: "many" is not a number of sessions'
curl -s -o /dev/null -X DELETE -H "Mcp-Session-Id: $SID" "$URL"
SID=$FIRST
out=$("$MCPCTL" -s "$CTL" tools)
like "tools: owner and original name" "$out" 'demo__echo +demo +echo'
like "tools: every upstream's" "$out" 'spare__echo +spare +echo'
out=$("$MCPCTL" -s "$CTL" tools demo__echo)
like "tools NAME: the listed object" "$out" 'original: echo.*"description"'
out=$("$MCPCTL" -s "$CTL" tools nope 2>&1) && rc=0 || rc=$?
like "tools NAME unknown: exit 1" "$rc $out" '^1 mcpctl: no tool is listed as nope'
out=$("$MCPCTL" -s "$CTL" check) && rc=0 || rc=$?
like "check: an upstream that is not required fails: a warning, exit 0" "$rc $out" \
    '^0 WARNING: upstream bad is failed: .*/nonexistent/mcp-server.*OK'
out=$("$MCPCTL" -s "$CTL" status)
like "status: the last error with its time" "$out" \
    'bad +stdio +failed .*\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\] .*nonexistent'
"$MCPCTL" -s "$CTL" stop spare
out=$("$MCPCTL" -s "$CTL" check) && rc=0 || rc=$?
like "check: one stopped is a warning too" "$rc $out" '^0 .*WARNING: upstream spare is stopped'
"$MCPCTL" -s "$CTL" stop demo
out=$("$MCPCTL" -s "$CTL" check) && rc=0 || rc=$?
like "check: a required upstream stopped, exit 3" "$rc $out" '^3 CRITICAL: not ready: required upstream demo is stopped'
out=$("$MCPCTL" -j -s "$CTL" check) && rc=0 || rc=$?
like "check -j: the same exit status" "$rc $out" '^3 \{.*"healthy": false'
is "/readyz 503 while a required upstream is down" "$(code "$BASE/readyz")" 503
like "and says why" "$(cat "$T/out")" 'required upstream demo is stopped'
out=$("$MCPCTL" -s "$CTL" status) && rc=0 || rc=$?
like "status: a required upstream stopped, exit 3" "$rc $out" '^3 .*not ready: required upstream demo is stopped'
out=$("$MCPCTL" -j -s "$CTL" status) && rc=0 || rc=$?
like "status -j: the same exit status, and the problems" "$rc $out" '^3 \{.*"healthy": false, +"problems": \[ +"not ready: required upstream demo is stopped"'
"$MCPCTL" -s "$CTL" start demo
"$MCPCTL" -s "$CTL" start spare
wait_state ready demo
wait_state ready spare
is "/readyz 200 again" "$(code "$BASE/readyz")" 200
out=$("$MCPCTL" -s "$CTL" frobnicate 2>&1) && rc=0 || rc=$?
is "an unknown command: exit 2" "$rc" 2
out=$("$MCPCTL" -s "$CTL" drain soon 2>&1) && rc=0 || rc=$?
like "drain with a bad number: exit 2" "$rc $out" '^2 mcpctl: drain: "soon" is not a number'
out=$("$MCPCTL" -s "$T/none.sock" check 2>&1) && rc=0 || rc=$?
is "check without a daemon: exit 1" "$rc" 1

# Reopen: mcpctl reopen and SIGHUP, as logrotate would.
mv "$ALOG" "$ALOG.1"
out=$("$MCPCTL" -s "$CTL" reopen)
is "mcpctl reopen" "$out" "access log reopened"
mcp '{"jsonrpc":"2.0","id":9,"method":"ping"}' > /dev/null
until_true 5 test -s "$ALOG"
like "a new file after reopen" "$(cat "$ALOG")" 'method="ping" .*outcome=ok'
mv "$ALOG" "$ALOG.2"
kill -HUP "$GW_PID"
until_true 5 grep -q 'reloaded' "$T/log"
mcp '{"jsonrpc":"2.0","id":10,"method":"ping"}' > /dev/null
until_true 5 test -s "$ALOG"
like "and after SIGHUP" "$(cat "$ALOG")" 'method="ping"'
is "the old files keep their lines" "$(grep -c 'method="ping"' "$ALOG.1") $(grep -c 'method="ping"' "$ALOG.2")" "0 1"
# logrotate's kill -HUP reopens the log even when the file has become
# one the reload refuses.
mv "$ALOG" "$ALOG.3"
cp "$T/conf" "$T/conf.good"
echo 'this is not a configuration' >> "$T/conf"
kill -HUP "$GW_PID"
until_true 5 grep -q 'nothing changed' "$T/log"
mcp '{"jsonrpc":"2.0","id":11,"method":"ping"}' > /dev/null
until_true 5 test -s "$ALOG" || true
like "a SIGHUP whose reload fails still reopens the access log" "$(cat "$ALOG" 2>/dev/null)" 'method="ping"'
is "and the rotated file gets no more lines" "$(grep -c 'method="ping"' "$ALOG.3")" 1
cp "$T/conf.good" "$T/conf"
# The shipped logrotate file, pointed at this test's log, socket and
# mcpctl (and not switching users): it rotates, and mcpctl reopen in its
# postrotate gives the daemon the new file.
if command -v logrotate > /dev/null 2>&1; then
	sed -e "s|/var/log/mcp-supervisord/|$T/|" \
	    -e "s|/run/mcp-supervisord/control.sock|$CTL|g" \
	    -e "s|[^ ]*/mcpctl |$MCPCTL |" -e '/^[[:space:]]*su /d' \
	    -e 's|^\([[:space:]]*create\).*|\1 0640|' \
	    "$top_builddir/etc/logrotate.d/mcp-supervisor" > "$T/logrotate.conf"
	rm -f "$ALOG".*
	logrotate -f -s "$T/logrotate.state" "$T/logrotate.conf" > "$T/logrotate.out" 2>&1 && rc=0 || rc=$?
	is "logrotate with the shipped file" "$rc $(cat "$T/logrotate.out")" "0 "
	mcp '{"jsonrpc":"2.0","id":12,"method":"ping"}' > /dev/null
	until_true 5 test -s "$ALOG" || true
	like "after logrotate, the daemon writes to the new file" "$(cat "$ALOG" 2>/dev/null)" 'method="ping"'
	is "the rotated file has what came before" "$(grep -c 'method="ping"' "$ALOG.1")" 1
else
	# bootstrap installs it: a missing one is a failure, not a skip.
	is "logrotate is installed (to try the shipped file)" "missing" "installed"
fi

# Over-limit refusals and a bad Origin alone: each has its access log
# line, with the peer and what was refused.
stop_gateway
rm -f "$ALOG" "$ALOG".*
GLOBALS="access_log = \"$ALOG\"; max_sessions = 1; max_pending = 1;"
start_gateway "$(demo demo)"
session
is "a second session over max_sessions: 503" "$(code -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"second","version":"1"}}}' \
    "$URL")" 503
mcp '{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"demo__sleep","arguments":{"ms":1500}}}' > /dev/null &
SLOW=$!
until_true 5 sh -c "'$MCPCTL' -j -s '$CTL' status | grep -q '\"calls_in_flight\": 1'" || true
mcp '{"jsonrpc":"2.0","id":"over","method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"x"}}}' > "$T/over"
like "a call over max_pending: refused" "$(cat "$T/over")" '"id":"over","error":\{"code":-32003'
wait "$SLOW"
is "a bad Origin alone (a good Host): 403" "$(code -H 'Origin: http://evil.example' "$URL")" 403
until_true 5 grep -q 'refused="Origin' "$ALOG" || true
like "the session limit: the refused initialize, its peer and code" \
    "$(grep 'method="initialize".*outcome=refused' "$ALOG")" \
    'peer=127.0.0.1 session=- client="" auth=- transport=http method="initialize" name="" upstream=\(gateway\) outcome=refused code=-32003 '
like "... and the daemon's log says which limit, for which peer" "$(cat "$T/log")" \
    'session limit \(1\) reached, refusing a session for 127.0.0.1'
like "max_pending: the refused call, its peer, tool and code" \
    "$(grep 'name="demo__echo"' "$ALOG")" \
    'peer=127.0.0.1 session=[^ ]+ client="curl" .*method="tools/call" name="demo__echo" upstream=demo outcome=refused code=-32003 '
like "a bad Origin alone: the peer and the refused Origin" "$(grep 'status=403' "$ALOG")" \
    'peer=127.0.0.1 http="GET /mcp" status=403 refused="Origin not allowed: Host 127.0.0.1:[0-9]+ Origin http://evil.example"'
# The connection limit: with 40 descriptors, 20 connections.
stop_gateway
rm -f "$ALOG"
GLOBALS="access_log = \"$ALOG\";"
GW_NOFILE=40 start_gateway "$(demo demo)"
python3 - "${URL#http://}" 30 "$T/held" <<'PY' &
import socket, sys, time
host, rest = sys.argv[1].split(':')
port = int(rest.split('/')[0])
held = [socket.create_connection((host, port)) for _ in range(int(sys.argv[2]))]
open(sys.argv[3], 'w').close()
time.sleep(5)
PY
HOLD=$!
until_true 5 test -e "$T/held" || true
is "over the connection limit: 503" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${URL%/mcp}/healthz")" 503
until_true 5 grep -q 'the connection limit' "$ALOG" || true
like "the connection limit: the peer and what was refused" "$(grep 'status=503' "$ALOG" | head -n 1)" \
    'peer=127.0.0.1 http="- -" status=503 refused="the connection limit"'
kill "$HOLD" 2>/dev/null || true
wait "$HOLD" 2>/dev/null || true

# -v: the daemon's log has a line per finished request, with no access
# log set: the access log's fields, never arguments.
stop_gateway
GLOBALS=
start_gateway "$(demo demo)"
session
mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"SECRET-ARGUMENT-43"}}}' > /dev/null
mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}' > /dev/null
mcp '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo__echo","arguments":5}}' > /dev/null
short=$(printf '%s' "$SID" | sed 's/^\([^.]*[.][0-9a-f]\{8\}\).*/\1/')
like "-v: a call that succeeded" "$(grep 'debug: request: .*name="demo__echo".*outcome=ok' "$T/log")" \
    "mcp-supervisord debug: request: peer=127.0.0.1 session=$short client=\"curl\" auth=- transport=http method=\"tools/call\" name=\"demo__echo\" upstream=demo outcome=ok code=- gateway_ms=[0-9.]+ total_ms=[0-9.]+\$"
like "-v: an upstream's error, with its code" "$(grep 'debug: request: .*outcome=error' "$T/log")" \
    'method="tools/call" name="demo__echo" upstream=demo outcome=error code=-32602 gateway_ms='
like "-v: an unknown tool, refused by the gateway" "$(grep 'debug: request: .*name="nope"' "$T/log")" \
    'upstream=\(gateway\) outcome=refused code=-32602 '
like "-v: initialize too" "$(grep 'debug: request: ' "$T/log")" 'method="initialize" .*outcome=ok'
is "-v: never the arguments" "$(grep -c SECRET "$T/log")" 0
stop_gateway
GW_VERBOSE= start_gateway "$(demo demo)"
session
mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"x"}}}' > /dev/null
is "without -v: no request lines" "$(grep -c 'request: ' "$T/log")" 0

# No upstream usable, none of them required: every one failed (or
# stopped) is not ready, CRITICAL for check, and status exits 3 too.
stop_gateway
GLOBALS=
BAD2='{ name = "bad2"; transport = "stdio"; command = [ "/nonexistent/mcp-server-2" ]; max_failures = 1; }'
WAIT_STATE=failed start_gateway "$BAD" "$BAD2"
BASE=${URL%/mcp}
is "/readyz 503 when every upstream has failed" "$(code "$BASE/readyz")" 503
like "and says why" "$(cat "$T/out")" '^not ready: no upstream is usable: all 2 are failed or stopped'
out=$("$MCPCTL" -s "$CTL" check) && rc=0 || rc=$?
like "check: nothing usable is CRITICAL, exit 3" "$rc $out" \
    '^3 CRITICAL: not ready: no upstream is usable.*WARNING: upstream bad is failed'
is "check: and not OK" "$(printf '%s\n' "$out" | grep -c '^OK')" 0
out=$("$MCPCTL" -s "$CTL" status) && rc=0 || rc=$?
like "status: exit 3, and says why" "$rc $out" '^3 .*not ready: no upstream is usable'
like "metrics: not ready" "$(curl -s "$BASE/metrics")" 'mcp_supervisor_ready 0'
stop_gateway
WAIT_STATE=none start_gateway "$BAD" "$(demo later 'lazy = true;')"
BASE=${URL%/mcp}
wait_state failed bad
is "a lazy upstream that has not started can still serve: /readyz 200" "$(code "$BASE/readyz")" 200
"$MCPCTL" -s "$CTL" status > /dev/null && rc=0 || rc=$?
is "and status exits 0" "$rc" 0
stop_gateway
start_gateway "$(demo only)"
BASE=${URL%/mcp}
"$MCPCTL" -s "$CTL" stop only
is "the only upstream stopped: /readyz 503" "$(code "$BASE/readyz")" 503
like "naming it" "$(cat "$T/out")" 'no upstream is usable: only is stopped'
"$MCPCTL" -s "$CTL" check > /dev/null && rc=0 || rc=$?
is "and check exits 3" "$rc" 3

# A token is needed for /metrics, not for the health checks.
stop_gateway
TOKEN=obs-token-0123456789abcdef
GLOBALS="auth_tokens = [ \"$TOKEN\" ]; metrics_listen = \"127.0.0.1:0\";"
start_gateway "$(demo demo)"
BASE=${URL%/mcp}
MBASE=http://$("$MCPCTL" -j -s "$CTL" status | sed -n 's/.*"metrics_listen": "\([^"]*\)".*/\1/p')
is "metrics_listen: /metrics needs a token" "$(code "$MBASE/metrics")" 401
like "the refusal names what was sent, never a token" "$(cat "$T/log")" 'GET /metrics refused: no Authorization header'
is "with one, 200" "$(code -H "Authorization: Bearer $TOKEN" "$MBASE/metrics")" 200
ok "promtool on metrics_listen" "$PROMTOOL" check metrics < "$T/out"
curl -s -o /dev/null -H "Authorization: Bearer wrong-token-0123456789" "$MBASE/metrics"
like "a wrong token is logged by its length" "$(cat "$T/log")" 'refused: a bearer token of 22 characters that matches none'
is "no token logged" "$(grep -c wrong-token "$T/log")" 0
is "health checks need none" "$(code "$MBASE/readyz")" 200
is "the metrics listener serves nothing else" "$(code -H "Authorization: Bearer $TOKEN" "$MBASE/mcp")" 404
is "and the main listener no /metrics" "$(code -H "Authorization: Bearer $TOKEN" "${URL%/mcp}/metrics")" 404

# Behind a proxy: the PROXY protocol and X-Forwarded-For, from a trusted
# peer only; the access log to syslog (a socket of the test's own).
stop_gateway
python3 - "$T/syslog.sock" > "$T/syslog.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.2)
end = time.time() + 60
while time.time() < end:
    try:
        print(s.recv(4096).decode(), flush=True)
    except socket.timeout:
        pass
EOF
SYSLOG_PID=$!
until_true 5 test -S "$T/syslog.sock"
export MCP_SUPERVISOR_SYSLOG="$T/syslog.sock"
GLOBALS="trusted_proxies = [ \"127.0.0.0/8\" ]; access_log = \"syslog\";"
start_gateway "$(demo demo)"
BASE=${URL%/mcp}
unset MCP_SUPERVISOR_SYSLOG
SID=
curl -s -o /dev/null --haproxy-protocol -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"via-proxy","version":"1"}}}' "$URL"
curl -s -o /dev/null -H 'X-Forwarded-For: 6.6.6.6, 203.0.113.7, 127.0.0.9' \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"via-xff","version":"1"}}}' "$URL"
is "a malformed X-Forwarded-For from a trusted peer: 400" \
    "$(code -H 'X-Forwarded-For: 203.0.113.7:80' "$BASE/healthz")" 400
python3 - "${URL#http://}" > "$T/v2.out" <<'EOF'
import socket, struct, sys
host, rest = sys.argv[1].split(':')
port = int(rest.split('/')[0])
s = socket.create_connection((host, port))
addr = socket.inet_aton('198.51.100.23') + socket.inet_aton('127.0.0.1') + struct.pack('!HH', 40001, port)
hdr = b'\r\n\r\n\x00\r\nQUIT\n' + bytes([0x21, 0x11]) + struct.pack('!H', len(addr)) + addr
body = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"via-v2","version":"1"}}}'
req = (b'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n'
       b'Accept: application/json, text/event-stream\r\nConnection: close\r\n'
       b'Content-Length: ' + str(len(body)).encode() + b'\r\n\r\n' + body)
s.sendall(hdr + req)
print(s.recv(65536).split(b'\r\n')[0].decode())
EOF
is "PROXY v2: answered" "$(cat "$T/v2.out")" "HTTP/1.1 200 OK"
until_true 5 grep -q via-v2 "$T/syslog.out"
like "syslog: PROXY v1 names the client" "$(grep via-proxy "$T/syslog.out")" \
    '^<30>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} mcp-supervisord\[[0-9]+\]: access: peer=127.0.0.1 '
like "syslog: X-Forwarded-For walked past trusted hops" "$(grep via-xff "$T/syslog.out")" \
    'access: peer=203.0.113.7 '
like "syslog: PROXY v2 names the client" "$(grep via-v2 "$T/syslog.out")" \
    'access: peer=198.51.100.23 '
like "the session records its peer" "$("$MCPCTL" -s "$CTL" sessions)" \
    'via-xff .*203.0.113.7'
kill "$SYSLOG_PID" 2>/dev/null || true

# From a peer that is not trusted, neither is looked at.
stop_gateway
GLOBALS="trusted_proxies = [ \"10.0.0.0/8\" ];"
start_gateway "$(demo demo)"
BASE=${URL%/mcp}
is "a PROXY header from an untrusted peer is a bad request" \
    "$(curl -s -o /dev/null -w '%{http_code}' --haproxy-protocol "$BASE/healthz")" 400
is "X-Forwarded-For from an untrusted peer is ignored" \
    "$(code -H 'X-Forwarded-For: junk' "$BASE/healthz")" 200
finish

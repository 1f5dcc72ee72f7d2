#!/bin/sh
# SPDX-License-Identifier: ISC
# What /metrics, /readyz and /healthz tell, and to whom
# (mcp-supervisord.conf(5): metrics_tokens, a client's metrics; the
# rules in auth.c and health.c).  With tokens configured: /metrics needs
# one with the metrics right (auth_tokens, the lock file's, metrics_tokens,
# a client with metrics = true), 401 without a token, 403 with a client's
# that lacks it; a metrics token admits to nothing else (403 on /mcp);
# /readyz and /healthz need no token, and say why the gateway is not ready
# (naming the upstream) only to a request that may read the metrics.  On
# metrics_listen the same.  A reload gives or takes the right.  Without
# any token configured (the default) a loopback scrape needs none, and
# /readyz says why to anyone: /mcp, open to the same peers, lists every
# upstream's tools anyway; a metrics_listen beyond loopback then gets a
# warning.
. "$(dirname "$0")/lib.sh"

ADMIN=admin-token-0123456789
ALICE=alice-token-0123456789
PROM=prom-token-01234567890
SCRAPE=scrape-token-012345678
BAD='{ name = "bad"; transport = "stdio"; command = [ "/nonexistent/mcp-server" ]; max_failures = 1; required = true; }'

# code [CURL-ARGS...] URL: the status; the body in $T/out.
code() { curl -s -o "$T/out" -w '%{http_code}' "$@"; }
bearer() { printf 'Authorization: Bearer %s' "$1"; }
body() { cat "$T/out"; }
init() {
	code -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' "$@" \
	    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"exposure","version":"1"}}}' \
	    "$URL"
}

# 1. auth_tokens and a named client without the metrics right: settings
# the gateway had before these rules.
GLOBALS="auth_tokens = [ \"$ADMIN\" ];
clients = ( { name = \"alice\"; token = \"$ALICE\"; } );"
WAIT_STATE=none start_gateway "$(demo demo)" "$BAD"
wait_state ready demo
wait_state failed bad
BASE=${URL%/mcp}
is "/metrics without a token: 401" "$(code "$BASE/metrics")" 401
is "/metrics with a client's token that lacks the right: 403" \
    "$(code -H "$(bearer "$ALICE")" "$BASE/metrics")" 403
ok "and no metric in the answer" sh -c "! grep -q mcp_supervisor_ '$T/out'"
like "the refusal is logged, naming the client and not the token" \
    "$(cat "$T/log")" 'GET /metrics refused: client alice may not read the metrics'
is "no token in the log" "$(grep -c "$ALICE" "$T/log")" 0
is "/metrics with an auth_tokens token: 200" \
    "$(code -H "$(bearer "$ADMIN")" "$BASE/metrics")" 200
like "naming the upstreams" "$(body)" 'upstream="bad"'
is "the client's token still admits to /mcp" "$(init -H "$(bearer "$ALICE")")" 200
is "/readyz without a token: 503" "$(code "$BASE/readyz")" 503
is "says only that" "$(body)" "not ready"
is "HEAD /readyz without a token: 503" \
    "$(curl -s -I -o /dev/null -w '%{http_code}' "$BASE/readyz")" 503
is "/readyz with a wrong token: 503, not 401" \
    "$(code -H "$(bearer wrong-token-0123456789)" "$BASE/readyz")" 503
is "says only that" "$(body)" "not ready"
is "/readyz with the client's token: says only that" \
    "$(code -H "$(bearer "$ALICE")" "$BASE/readyz"; echo " $(body)")" "503 not ready"
is "/readyz with an auth_tokens token says why" \
    "$(code -H "$(bearer "$ADMIN")" "$BASE/readyz"; echo " $(body)")" \
    "503 not ready: required upstream bad is failed"
is "/healthz without a token: 200 ok" "$(code "$BASE/healthz"; echo " $(body)")" "200 ok"

# 2. A scrape-only token and a client with the right; on metrics_listen.
stop_gateway
GLOBALS="auth_tokens = [ \"$ADMIN\" ];
metrics_tokens = [ \"$SCRAPE\" ];
metrics_listen = \"127.0.0.1:0\";
clients = ( { name = \"alice\"; token = \"$ALICE\"; },
  { name = \"prom\"; token = \"$PROM\"; metrics = true; } );"
WAIT_STATE=none start_gateway "$(demo demo)" "$BAD"
wait_state ready demo
wait_state failed bad
MBASE=http://$("$MCPCTL" -j -s "$CTL" status | sed -n 's/.*"metrics_listen": "\([^"]*\)".*/\1/p')
is "metrics_listen: /metrics without a token: 401" "$(code "$MBASE/metrics")" 401
is "with a client's token that lacks the right: 403" \
    "$(code -H "$(bearer "$ALICE")" "$MBASE/metrics")" 403
is "with a metrics token: 200" "$(code -H "$(bearer "$SCRAPE")" "$MBASE/metrics")" 200
like "the whole scrape" "$(body)" 'mcp_supervisor_upstream_state\{upstream="demo"'
is "with a client's token that has the right: 200" \
    "$(code -H "$(bearer "$PROM")" "$MBASE/metrics")" 200
is "with an auth_tokens token: 200" "$(code -H "$(bearer "$ADMIN")" "$MBASE/metrics")" 200
is "a metrics token on /mcp: 403" "$(init -H "$(bearer "$SCRAPE")")" 403
ok "with no session made" sh -c "! grep -q 'session .*: new' '$T/log'"
like "logged without the token" "$(cat "$T/log")" \
    'POST /mcp refused: a token of metrics_tokens, which admits to /metrics only'
is "no token in the log" "$(grep -c -e "$SCRAPE" -e "$PROM" "$T/log")" 0
is "a metrics token on the WebSocket: 403" \
    "$(code -H 'Upgrade: websocket' -H 'Connection: Upgrade' -H 'Sec-WebSocket-Version: 13' \
        -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' -H 'Sec-WebSocket-Protocol: mcp' \
        -H "$(bearer "$SCRAPE")" "${URL%/mcp}/ws")" 403
is "the client with the right still admits to /mcp" "$(init -H "$(bearer "$PROM")")" 200
is "metrics_listen: /readyz without a token says only that" \
    "$(code "$MBASE/readyz"; echo " $(body)")" "503 not ready"
is "with the client's token without the right, the same" \
    "$(code -H "$(bearer "$ALICE")" "$MBASE/readyz"; echo " $(body)")" "503 not ready"
is "with a metrics token, why" \
    "$(code -H "$(bearer "$SCRAPE")" "$MBASE/readyz"; echo " $(body)")" \
    "503 not ready: required upstream bad is failed"
is "with the client's that has the right, why" \
    "$(code -H "$(bearer "$PROM")" "$MBASE/readyz"; echo " $(body)")" \
    "503 not ready: required upstream bad is failed"
is "the main listener's /readyz without a token, only that" \
    "$(code "${URL%/mcp}/readyz"; echo " $(body)")" "503 not ready"
is "and with a metrics token, why" \
    "$(code -H "$(bearer "$SCRAPE")" "${URL%/mcp}/readyz"; echo " $(body)")" \
    "503 not ready: required upstream bad is failed"

# 3. Only metrics_tokens: MCP stays open, the metrics do not.
stop_gateway
GLOBALS="metrics_tokens = [ \"$SCRAPE\" ];"
WAIT_STATE=none start_gateway "$(demo demo)" "$BAD"
wait_state ready demo
wait_state failed bad
BASE=${URL%/mcp}
is "only metrics_tokens: /mcp needs no token" "$(init)" 200
is "/metrics without a token: 401" "$(code "$BASE/metrics")" 401
is "with the metrics token: 200" "$(code -H "$(bearer "$SCRAPE")" "$BASE/metrics")" 200
is "/readyz without a token: only that" "$(code "$BASE/readyz"; echo " $(body)")" "503 not ready"
is "with it: why" "$(code -H "$(bearer "$SCRAPE")" "$BASE/readyz"; echo " $(body)")" \
    "503 not ready: required upstream bad is failed"

# 4. A reload gives a client the right, and takes it back.
stop_gateway
GLOBALS="clients = ( { name = \"alice\"; token = \"$ALICE\"; } );"
start_gateway "$(demo demo)"
BASE=${URL%/mcp}
is "only clients, none with the right: /metrics with one's token 403" \
    "$(code -H "$(bearer "$ALICE")" "$BASE/metrics")" 403
is "without a token: 401" "$(code "$BASE/metrics")" 401
GLOBALS="clients = ( { name = \"alice\"; token = \"$ALICE\"; metrics = true; } );"
write_conf "$(demo demo)"
"$MCPCTL" -s "$CTL" reload > /dev/null 2>&1
is "reloaded with metrics = true: 200" "$(code -H "$(bearer "$ALICE")" "$BASE/metrics")" 200
GLOBALS="clients = ( { name = \"alice\"; token = \"$ALICE\"; } );"
write_conf "$(demo demo)"
"$MCPCTL" -s "$CTL" reload > /dev/null 2>&1
is "and without it again: 403" "$(code -H "$(bearer "$ALICE")" "$BASE/metrics")" 403

# 5. No token configured (the default): a loopback scrape needs none, and
# /readyz says why to anyone.
stop_gateway
GLOBALS=
WAIT_STATE=none start_gateway "$(demo demo)" "$BAD"
wait_state ready demo
wait_state failed bad
BASE=${URL%/mcp}
is "no tokens: /metrics 200 without one" "$(code "$BASE/metrics")" 200
is "/readyz says why" "$(code "$BASE/readyz"; echo " $(body)")" \
    "503 not ready: required upstream bad is failed"

# 6. A metrics listener beyond loopback with no token is warned about
# (checked with -n: nothing is bound).
GLOBALS='metrics_listen = "0.0.0.0:9";'
write_conf "$(demo demo)"
like "-n warns of metrics_listen beyond loopback without tokens" \
    "$("$SUPERVISORD" -n -f "$T/conf" 2>&1)" \
    'metrics_listen 0.0.0.0:9 is beyond loopback and there are no tokens'
GLOBALS="metrics_listen = \"0.0.0.0:9\"; metrics_tokens = [ \"$SCRAPE\" ];"
write_conf "$(demo demo)"
ok "and not with a metrics token" sh -c "! '$SUPERVISORD' -n -f '$T/conf' 2>&1 | grep -q 'metrics_listen.*beyond loopback'"
finish

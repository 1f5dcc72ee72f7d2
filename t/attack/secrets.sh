#!/bin/sh
# SPDX-License-Identifier: ISC
# Secrets (t/attack/README): an upstream that looks for them finds none.
# The daemon runs with secrets in its environment (an LLM key, a header
# value, the request_state_key, and one nothing refers to); a stdio
# upstream sees none of them in its own environment, only the base set,
# its env and what pass_env names, and the workers' environments hold
# none either.  As the same user without privileges it cannot open
# /proc/PID/environ or /proc/PID/mem of the daemon or of any worker (it
# can those of another upstream, the control).  URL credentials
# (user:pass@, ?api_key=) are in no log line, mcpctl output or client
# error, yet still reach the upstream.  A provider's error that repeats
# the key after 290 characters does not show any of it.
. "$(dirname "$0")/lib.sh"

PYTHON3=$(command -v "$PY")
UP=$ATTACK/upstream.py
NODE=$(command -v node || true)
FIX=$top_srcdir/t/fixtures

# The fixtures need the npm test peers (t/node_modules), as t/node-test.sh.
if [ -z "$NODE" ] ||
    [ ! -d "$top_srcdir/t/node_modules/@modelcontextprotocol/sdk" ]; then
	echo "1..0 # SKIP no node, or no t/node_modules (npm ci in t/)"
	[ -n "${MCPS_REQUIRE_ALL:-}" ] && exit 1
	exit 77
fi

# Secrets of the daemon's environment; each is random, so a match is one.
rnd() {
	od -An -N12 -tx1 /dev/urandom | tr -d ' \n'
}
MCPS_T_LLM_KEY=sk-t20$(rnd)$(rnd)$(rnd)
MCPS_T_HEADER=hdr$(rnd)
MCPS_T_STATE_KEY=state$(rnd)$(rnd)
MCPS_T_UNRELATED=unrelated$(rnd)
MCPS_T_PASSED=passed$(rnd)
MCPS_T_GLOBAL=global$(rnd)
export MCPS_T_LLM_KEY MCPS_T_HEADER MCPS_T_STATE_KEY MCPS_T_UNRELATED \
    MCPS_T_PASSED MCPS_T_GLOBAL
unset MCPS_T_UNSET
# In URLs.
URL_PASS=pw$(rnd)
URL_QKEY=qk$(rnd)
LLM_PASS=lp$(rnd)
# Part of what an error cut at 300 characters would show of the LLM key.
KEY_HEAD=$(printf '%.8s' "$MCPS_T_LLM_KEY")

# The OpenAI stand-in (its key is ours), and an HTTP upstream.
# Its standard input is a pipe held open here (read-write, so that
# opening it does not wait): it exits when that closes.
mkfifo "$T/llm.in"
exec 9<> "$T/llm.in"
env PORT=0 MCPS_PORT_FILE="$T/llm.port" STANDIN_KEY="$MCPS_T_LLM_KEY" \
    "$NODE" --import "$FIX/loopback.mjs" "$FIX/llm-openai.mjs" \
    < "$T/llm.in" > "$T/llm.log" 2>&1 &
BG_PIDS="$BG_PIDS $!"
bg "$PYTHON3" "$UP" http "$T/http.port"
HTTP_PID=$!
wait_file "$T/llm.port" 30
wait_file "$T/http.port" 30
LLM_PORT=$(cat "$T/llm.port")
HTTP_PORT=$(cat "$T/http.port")

# As root, the daemon (and so everything it starts) gives up every
# capability first, as the packaged service runs: else CAP_SYS_PTRACE
# would open anything, and a process with fewer capabilities than another
# could open nothing of it, dumpable or not.  What is left is one user
# without privileges, the daemon's and its upstreams'.
PEEK=1
if [ "$(id -u)" -eq 0 ]; then
	SETPRIV=$(command -v setpriv || true)
	if [ -n "$SETPRIV" ]; then
		printf '#!/bin/sh\nexec "%s" --bounding-set=-all --inh-caps=-all "%s" "$@"\n' \
		    "$SETPRIV" "$SUPERVISORD" > "$T/supervisord"
		chmod +x "$T/supervisord"
		SUPERVISORD=$T/supervisord
	else
		PEEK=0
	fi
fi
NOSY="\"$PYTHON3\", \"$UP\", \"nosy\""

GLOBALS="pass_env = [ \"MCPS_T_GLOBAL\" ];
request_state_key = \"\${env:MCPS_T_STATE_KEY}\";
llm = ( { name = \"gpt\"; provider = \"openai\";
    url = \"http://llmuser:$LLM_PASS@127.0.0.1:$LLM_PORT/v1\";
    api_key = \"\${env:MCPS_T_LLM_KEY}\"; model = \"gpt-4.1-mini\"; } );"
REMOTE_URL="http://user:$URL_PASS@127.0.0.1:$HTTP_PORT/mcp?api_key=$URL_QKEY&x=1"
start_gateway "$(demo demo)" \
    "{ name = \"nosy\"; command = [ $NOSY ]; pass_env = [ \"MCPS_T_PASSED\", \"MCPS_T_UNSET\" ]; env = { MCPS_T_OWN = \"own\"; }; }" \
    "{ name = \"remote\"; transport = \"http\"; url = \"$REMOTE_URL\"; headers = { X-Api-Key = \"\${env:MCPS_T_HEADER}\"; }; }" \
    "{ name = \"asker\"; command = [ \"$NODE\", \"$FIX/sampling-server.mjs\" ]; sampling = [ \"llm:gpt\" ]; }"
session

# call NAME TOOL ARGS: the answer to a tool call.
call() {
	mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1__$2\",\"arguments\":$3}}" |
	    data_lines | grep '"id": *1[,}]'
}

# lacks TEXT NEEDLE: TEXT does not hold NEEDLE.
lacks() {
	! printf '%s' "$1" | grep -qF -- "$2"
}

# first6 S: how a secret is named in a check.
first6() {
	printf '%.6s...' "$1"
}

# jq-less JSON: python3 -c CODE, stdin the JSON, sys.argv[1:] the args.
pyj() {
	_code=$1
	shift
	"$PYTHON3" -c "import json, sys; d = json.load(sys.stdin); $_code" "$@"
}

# The text of the first content block of a tools/call answer.
text_of() {
	pyj 'print(d.get("result", {}).get("content", [{}])[0].get("text", ""))'
}

STATUS_JSON=$("$MCPCTL" -s "$CTL" -j status)
# pid_of KIND NAME FIELD: a pid from mcpctl's JSON (upstreams or llm).
pid_of() {
	printf '%s' "$STATUS_JSON" |
	    pyj 'print([u for u in d[sys.argv[1]] if u["name"] == sys.argv[2]][0][sys.argv[3]])' "$@"
}
NOSY_WORKER=$(pid_of upstreams nosy pid)
REMOTE_WORKER=$(pid_of upstreams remote pid)
LLM_WORKER=$(pid_of llm gpt pid)
DEMO_UPSTREAM=$(pid_of upstreams demo upstream_pid)

# 1. What a stdio upstream's environment holds.
env_json=$(call nosy environ '{}' | text_of)
# has NAME: the upstream has the variable; value NAME: its value.
has() {
	printf '%s' "$env_json" | pyj 'sys.exit(0 if sys.argv[1] in d else 1)' "$1"
}
value() {
	printf '%s' "$env_json" | pyj 'print(d.get(sys.argv[1], ""))' "$1"
}
ok "the upstream reported its environment" has PATH
for v in MCPS_T_LLM_KEY MCPS_T_HEADER MCPS_T_STATE_KEY MCPS_T_UNRELATED \
    MCP_SUPERVISOR_WORKER JOURNAL_STREAM; do
	ok "the upstream does not get $v" lacks "$env_json" "\"$v\""
done
for s in "$MCPS_T_LLM_KEY" "$MCPS_T_HEADER" "$MCPS_T_STATE_KEY" "$MCPS_T_UNRELATED"; do
	ok "no secret's value is in its environment ($(first6 "$s"))" \
	    lacks "$env_json" "$s"
done
is "pass_env passes a variable on" "$(value MCPS_T_PASSED)" "$MCPS_T_PASSED"
is "the global pass_env too" "$(value MCPS_T_GLOBAL)" "$MCPS_T_GLOBAL"
is "and its env" "$(value MCPS_T_OWN)" own
like "PATH is the daemon's (pyenv may add to it)" "$(value PATH)" "$PATH\$"
is "so is HOME" "$(value HOME)" "$HOME"
ok "a name pass_env gives that is not set is not passed" \
    lacks "$env_json" MCPS_T_UNSET
like "and is warned of" "$(cat "$T/log")" 'upstream nosy: pass_env names MCPS_T_UNSET, which'

# 2. The workers' environments (as root only: they are not dumpable).
if [ -r "/proc/$REMOTE_WORKER/environ" ]; then
	for p in "$NOSY_WORKER" "$REMOTE_WORKER" "$LLM_WORKER"; do
		wenv=$(tr '\0' '\n' < "/proc/$p/environ")
		for s in "$MCPS_T_LLM_KEY" "$MCPS_T_HEADER" "$MCPS_T_STATE_KEY" \
		    "$MCPS_T_UNRELATED" "$MCPS_T_PASSED"; do
			ok "worker $p's environment holds no secret ($(first6 "$s"))" \
			    lacks "$wenv" "$s"
		done
	done
else
	echo "# not root: the workers' environments cannot be read"
fi
# Yet what comes from the environment works: the header and the key.
who=$(call remote whoami '{}' | text_of)
is "the remote upstream gets the URL's credentials and the header" "$who" \
    "basic=user:$URL_PASS query=api_key=$URL_QKEY&x=1 key=$MCPS_T_HEADER"
ask=$(call asker ask '{"params":{"messages":[{"role":"user","content":{"type":"text","text":"Hello"}}],"maxTokens":50}}' | text_of)
like "the provider's worker has its key" "$ask" '"result":.*openai stand-in'

# 3. Peeking at other processes, from the upstream, as the same user.
peek=$(call nosy peek "{\"pids\":[$GW_PID,$NOSY_WORKER,$REMOTE_WORKER,$LLM_WORKER,$DEMO_UPSTREAM]}" | text_of)
echo "# peek: $peek"
# seen PID WHAT: what the upstream got opening /proc/PID/WHAT ("ok", an
# errno name, or "?").
seen() {
	printf '%s' "$peek" |
	    pyj 'print(d.get(sys.argv[1], {}).get(sys.argv[2], "?"))' "$1" "$2"
}
# denied PID WHAT: the kernel refused it.
denied() {
	case $(seen "$1" "$2") in
	E*)	return 0 ;;
	*)	return 1 ;;
	esac
}
if [ "$PEEK" = 0 ]; then
	echo "# root without setpriv: every process has every capability"
else
	is "the control: another upstream's environment can be read" \
	    "$(seen "$DEMO_UPSTREAM" environ)" ok
	for p in "$GW_PID" "$NOSY_WORKER" "$REMOTE_WORKER" "$LLM_WORKER"; do
		ok "process $p's environment cannot be read ($(seen "$p" environ))" \
		    denied "$p" environ
	done
fi
if [ "$PEEK" = 1 ] && [ "$(seen "$DEMO_UPSTREAM" mem)" = ok ]; then
	for p in "$GW_PID" "$NOSY_WORKER" "$REMOTE_WORKER" "$LLM_WORKER"; do
		ok "process $p's memory cannot be read ($(seen "$p" mem))" \
		    denied "$p" mem
	done
else
	echo "# another upstream's memory cannot be read either ($(seen "$DEMO_UPSTREAM" mem)): Yama?"
fi

# What still works with processes that are not dumpable: the daemon reads
# its workers' memory use (statm) and counts its own descriptors.
metrics=$(curl -s "http://$ADDR/metrics")
like "the metrics still have the workers' memory" "$metrics" \
    'mcp_supervisor_worker_resident_bytes\{upstream="nosy"\} [1-9]'
like "and the daemon's descriptors" "$metrics" 'process_open_fds [1-9]'

# 4. A provider's error that repeats the key after 290 characters.
ask=$(call asker ask '{"params":{"messages":[{"role":"user","content":{"type":"text","text":"[echo-key]"}}],"maxTokens":50}}' | text_of)
echo "# $ask"
like "the provider's error reaches the upstream, the key masked" "$ask" '"error":.*quote the key.*\[api key\]'
ok "no part of the key is in it" lacks "$ask" "$KEY_HEAD"

# 5. An HTTP upstream that goes away: its URL in errors, the log, mcpctl.
kill "$HTTP_PID"
wait "$HTTP_PID" 2>/dev/null
e1=$(call remote echo '{"text":"x"}')
# A call while it waits to restart (not one that meets a restart).
for _ in 1 2 3 4 5; do
	wait_state backoff remote
	e2=$(call remote echo '{"text":"x"}')
	case $e2 in
	*"is restarting"*)	break ;;
	esac
done
echo "# $e1"
echo "# $e2"
like "the call in flight fails" "$e1" '"code":-32000,'

like "a call meanwhile gets the last error, naming the URL without its secrets" \
    "$e2" "\"code\":-32000,\"message\":\"upstream remote is restarting \\(last error: upstream remote: http://\\*\\*\\*@127\\.0\\.0\\.1:$HTTP_PORT/mcp\\?api_key=\\*\\*\\*&x=1"
status=$("$MCPCTL" -s "$CTL" status)
jstatus=$("$MCPCTL" -s "$CTL" -j status)
check=$("$MCPCTL" -s "$CTL" check)
like "mcpctl status shows the last error" "$status" 'http://\*\*\*@127\.0\.0\.1'
like "mcpctl check too" "$check" 'upstream remote is [a-z]+: upstream remote: http://\*\*\*@'
like "mcpctl shows the provider's URL without its password" "$jstatus" "\"url\": *\"http://\\*\\*\\*@127\\.0\\.0\\.1:$LLM_PORT/v1\""
like "so does the log" "$(cat "$T/log")" "llm gpt: ready \\(openai, http://\\*\\*\\*@127\\.0\\.0\\.1:$LLM_PORT/v1"

# Then look everywhere.
stop_gateway
all=$(cat "$T/log"; printf '%s\n%s\n%s\n%s\n%s\n%s\n' "$e1" "$e2" "$status" "$jstatus" "$check" "$ask")
for s in "$URL_PASS" "$URL_QKEY" "$LLM_PASS" "$KEY_HEAD" "$MCPS_T_HEADER" \
    "$MCPS_T_STATE_KEY" "$MCPS_T_UNRELATED"; do
	ok "no secret in the log, mcpctl or errors ($(first6 "$s"))" \
	    lacks "$all" "$s"
done
exec 9>&-
finish

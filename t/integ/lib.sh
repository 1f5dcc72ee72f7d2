# SPDX-License-Identifier: ISC
# Shell helpers for integration tests: start the real daemon with a private
# temporary directory, control socket and port, talk to it with curl, and
# clean up every process on exit.  Source it; it sets -eu.
set -eu

: "${top_builddir:=$(cd "$(dirname "$0")/../../build" && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
SUPERVISORD=$top_builddir/supervisor/mcp-supervisord
MCPCTL=$top_builddir/mcpctl/mcpctl
DEMO=$top_builddir/demo/mcp-demo-server
export MCP_SUPERVISOR_WORKER=$top_builddir/worker/mcp-worker
export PATH="$top_builddir/demo:$PATH"

T=$(mktemp -d "${TMPDIR:-/tmp}/mcps-integ.XXXXXX")
# Sanitizer reports of every process go to files, checked at the end.
export ASAN_OPTIONS="log_path=$T/asan:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="log_path=$T/ubsan:print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$top_srcdir/t/lsan.supp"
CTL=$T/control.sock
GW_PID=
failures=0
ntests=0

# Stop the daemon (SIGTERM, then SIGKILL of its group after 10 s).
stop_gateway() {
	if [ -n "$GW_PID" ] && kill -0 "$GW_PID" 2>/dev/null; then
		kill -TERM "$GW_PID" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$GW_PID" 2>/dev/null || break
			sleep 0.1
		done
	fi
	if [ -n "$GW_PID" ]; then
		kill -KILL -- "-$GW_PID" 2>/dev/null || true
	fi
	GW_PID=
}

cleanup() {
	stop_gateway
	if [ -z "${KEEP_TMP:-}" ]; then rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Print the daemon's log (on failure).
show_log() {
	echo "--- daemon log ---" >&2
	cat "$T/log" >&2 || true
}

# ok CONDITION-DESCRIPTION COMMAND...: run a check, count it.
ok() {
	desc=$1
	shift
	ntests=$((ntests + 1))
	if "$@"; then
		echo "ok $ntests - $desc"
	else
		echo "not ok $ntests - $desc"
		failures=$((failures + 1))
	fi
}

# is DESCRIPTION GOT WANT
is() {
	ntests=$((ntests + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $ntests - $1"
	else
		echo "not ok $ntests - $1"
		echo "#   got:  $2"
		echo "#   want: $3"
		failures=$((failures + 1))
	fi
}

# like DESCRIPTION GOT REGEX
like() {
	ntests=$((ntests + 1))
	if printf '%s' "$2" | tr '\n' ' ' | grep -Eq -- "$3"; then
		echo "ok $ntests - $1"
	else
		echo "not ok $ntests - $1"
		echo "#   got:  $(printf '%s' "$2" | head -c 400)"
		echo "#   want: /$3/"
		failures=$((failures + 1))
	fi
}

finish() {
	stop_gateway
	for f in "$T"/asan.* "$T"/ubsan.*; do
		[ -e "$f" ] || continue
		echo "not ok - sanitizer report $f"
		cat "$f"
		failures=$((failures + 1))
	done
	echo "1..$ntests"
	if [ "$failures" -ne 0 ]; then
		show_log
		exit 1
	fi
	exit 0
}

# write_conf SERVER-ENTRY...: write the daemon's configuration file.
write_conf() {
	{
		echo "listen = \"${LISTEN:-127.0.0.1:0}\";"
		echo "control = \"$CTL\";"
		echo "${GLOBALS:-}"
		echo 'servers = ('
		first=1
		for s in "$@"; do
			[ $first -eq 1 ] || echo ','
			first=0
			echo "  $s"
		done
		echo ');'
	} > "$T/conf.new"
	mv "$T/conf.new" "$T/conf"
}

# ctl_status: mcpctl status into $T/status; true when the daemon answered
# (exit 0, or 3: it answered, and something required is unhealthy).
ctl_status() {
	"$MCPCTL" -s "$CTL" status > "$T/status" 2>/dev/null && return 0
	[ $? -eq 3 ]
}

# start_gateway SERVER-ENTRY...: write a config and start the daemon.
# GW_NOFILE, if set, is its descriptor limit; GW_VERBOSE its verbosity
# flag (-v unless set, possibly to nothing); GW_IGNORE signals it starts
# ignoring (as nohup leaves SIGHUP).
start_gateway() {
	write_conf "$@"
	(
		if [ -n "${GW_NOFILE:-}" ]; then ulimit -n "$GW_NOFILE"; fi
		if [ -n "${GW_IGNORE:-}" ]; then trap '' $GW_IGNORE; fi
		exec setsid "$SUPERVISORD" -d ${GW_VERBOSE--v} -f "$T/conf"
	) > "$T/log" 2>&1 &
	GW_PID=$!
	for _ in $(seq 200); do
		if [ -S "$CTL" ] && ctl_status; then
			break
		fi
		sleep 0.05
	done
	ADDR=$(sed -n 's/.*listening on \([^,]*\),.*/\1/p' "$T/status")
	URL="http://$ADDR/mcp"
	# WAIT_STATE=none returns at once; by default every upstream is ready.
	if [ "${WAIT_STATE:-ready}" != none ]; then
		wait_state "${WAIT_STATE:-ready}"
	fi
}

# demo NAME [EXTRA]: a server entry running the demo upstream.
demo() {
	echo "{ name = \"$1\"; transport = \"stdio\"; command = [ \"$DEMO\", \"--test-tools\", \"--name\", \"$1\" ]; ${2:-} }"
}

# state NAME: an upstream's state from mcpctl status.
state() {
	"$MCPCTL" -s "$CTL" status | awk -v n="$1" '$1 == n { print $3 }'
}

# field NAME COLUMN: a column of an upstream's status line.
field() {
	"$MCPCTL" -s "$CTL" status | awk -v n="$1" -v c="$2" '$1 == n { print $c }'
}

# wait_state STATE [NAME]: until every (or the named) upstream is in STATE.
wait_state() {
	for _ in $(seq 400); do
		if ctl_status && awk -v s="$1" -v n="${2:-}" '
			$1 == "NAME" { table = 1; next }
			table && NF == 0 { table = 0 }
			table && (n == "" || $1 == n) && $3 != s { bad = 1 }
			END { exit bad }' "$T/status"; then
			return 0
		fi
		sleep 0.05
	done
	echo "timed out waiting for state $1" >&2
	cat "$T/status" >&2
	show_log
	return 1
}

# mcp [CURL-ARGS...] BODY: POST one message; prints the body.
mcp() {
	body=$1
	shift
	curl -s -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    ${SID:+-H "Mcp-Session-Id: $SID"} "$@" -d "$body" "$URL"
}

# status_of [CURL-ARGS...] BODY: the HTTP status of a POST.
status_of() {
	body=$1
	shift
	curl -s -o "$T/body" -w '%{http_code}' \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    ${SID:+-H "Mcp-Session-Id: $SID"} "$@" -d "$body" "$URL"
}

# session: initialize and set SID.
session() {
	SID=
	curl -s -D "$T/headers" -o "$T/init" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' \
	    "$URL"
	SID=$(tr -d '\r' < "$T/headers" | awk 'tolower($1) == "mcp-session-id:" { print $2 }')
	mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' > /dev/null
}

# data_lines: the JSON messages of an SSE or JSON body, one per line.
data_lines() {
	sed -n -e 's/^data: \(..*\)$/\1/p' -e t -e '/^{/p'
}

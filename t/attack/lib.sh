# SPDX-License-Identifier: ISC
# Helpers for the attack suite: t/integ/lib.sh (a private daemon, curl,
# TAP, sanitizer reports checked by finish), plus raw sockets and
# measurements of the daemon from /proc.  Source it.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/t/integ/lib.sh"

# A daemon that dies must not stop the script: every later check then
# fails, and finish shows the sanitizer report that says why.
set +e

# Print the daemon's log on failure, but not a flood of it.
show_log() {
	_sl_n=$(wc -l < "$T/log" 2>/dev/null || echo 0)
	echo "--- daemon log ($_sl_n lines) ---" >&2
	if [ "$_sl_n" -le 400 ]; then
		cat "$T/log" >&2
	else
		head -n 200 "$T/log" | cut -c1-400 >&2
		echo "--- ($((_sl_n - 400)) lines left out) ---" >&2
		tail -n 200 "$T/log" | cut -c1-400 >&2
	fi
}

ATTACK=$top_srcdir/t/attack
PY=${PYTHON:-python3}

# Background clients (started with bg) are stopped with the daemon.
BG_PIDS=
bg() {
	"$@" &
	BG_PIDS="$BG_PIDS $!"
}
attack_cleanup() {
	for _ac_p in $BG_PIDS; do
		kill "$_ac_p" 2>/dev/null || true
	done
	cleanup
}
trap attack_cleanup EXIT

# raw ACTION...: client.py send on the gateway's address; prints what came
# (nothing if it could not connect: the checks then say what is wrong).
raw() {
	"$PY" "$ATTACK/client.py" send "$ADDR" "$@" || true
}

# client SUBCOMMAND ARGS...: client.py with the gateway's address.
client() {
	_cl_sub=$1
	shift
	"$PY" "$ATTACK/client.py" "$_cl_sub" "$ADDR" "$@"
}

# code_of: the status of the first response read on stdin, or "-".
code_of() {
	head -c 64 | sed -n '1s/^HTTP\/1\.[01] \([0-9][0-9][0-9]\).*/\1/p' |
	    grep . || echo -
}

# responses: how many HTTP responses stdin holds (status lines; a body
# need not end with a newline, so they are counted anywhere).
responses() {
	grep -ao 'HTTP/1\.[01] [0-9][0-9][0-9] ' | wc -l
}

# fds PID: the number of open descriptors of a process.  The daemon is
# not dumpable: without CAP_SYS_PTRACE (not root), its own count, less
# the connection that asks.
fds() {
	if ls "/proc/$1/fd" > /dev/null 2>&1; then
		ls "/proc/$1/fd" | wc -l
	elif [ "$1" = "$GW_PID" ]; then
		curl -s --max-time 5 "http://$ADDR/metrics" |
		    awk '$1 == "process_open_fds" { print $2 - 1 }'
	fi
}

# cpu_ticks PID: user and system time of a process, in clock ticks.
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# rss_kb PID: resident memory of a process, in KiB.
rss_kb() {
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"
}

# quarantine MIB: under AddressSanitizer, keep at most MIB MiB of freed
# memory in quarantine (256 by default), which the RSS counts: tests that
# bound the RSS set it low, at the cost of catching fewer uses after free.
quarantine() {
	ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=$1"
	export ASAN_OPTIONS
}

# rss_sampler FILE STOP: the daemon's RSS every 0.1 s into FILE, until
# the file STOP exists (at most 3 minutes); run it in the background.
rss_sampler() {
	_rs_n=0
	while [ ! -e "$2" ] && [ "$_rs_n" -lt 1800 ]; do
		rss_kb "$GW_PID" >> "$1" || break
		sleep 0.1
		_rs_n=$((_rs_n + 1))
	done
}

# rss_max FILE: the largest sample.
rss_max() {
	sort -n "$1" | tail -1
}

# log_lines: the number of lines in the daemon's log.
log_lines() {
	wc -l < "$T/log"
}

# wait_file FILE SECONDS: until FILE exists; 1 if it did not in time.
wait_file() {
	_wf_i=0
	while [ ! -e "$1" ]; do
		_wf_i=$((_wf_i + 1))
		[ "$_wf_i" -le $(($2 * 20)) ] || return 1
		sleep 0.05
	done
}

# until_true SECONDS COMMAND...: run COMMAND every 0.1 s until it succeeds.
until_true() {
	_ut_n=$(($1 * 10))
	shift
	while ! "$@"; do
		_ut_n=$((_ut_n - 1))
		[ "$_ut_n" -gt 0 ] || return 1
		sleep 0.1
	done
}

# ping_ok: a ping in the current session, on a new connection, gets 200.
ping_ok() {
	[ "$(status_of '{"jsonrpc":"2.0","id":"alive","method":"ping"}')" = 200 ]
}

# call_ok: a session can still call a tool (a fresh session each time).
call_ok() {
	(
		session
		mcp '{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"still here"}}}' |
		    data_lines | grep -q '"text":"still here"'
	)
}

# The head of a POST to /mcp in the current session, with \r\n escapes
# for raw, kept alive; the caller adds framing headers and the blank line.
head_ka() {
	printf '%s' "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: $SID\r\n"
}

# The same, with Connection: close.
head_mcp() {
	printf '%s' "$(head_ka)Connection: close\r\n"
}

# A request hidden in a body: if the gateway ever took it for a request it
# would end the session, which ping_ok then notices.
hidden() {
	printf '%s' "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: $SID\r\n\r\n"
}

PING='{"jsonrpc":"2.0","id":1,"method":"ping"}'

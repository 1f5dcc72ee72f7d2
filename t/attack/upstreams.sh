#!/bin/sh
# SPDX-License-Identifier: ISC
# Upstreams that misbehave (t/attack/upstream.py): garbage on stdout, a
# storm of notifications, children left behind, no answer to initialize,
# an endless line, a list never answered.  Each harms at most itself: its calls work or fail
# cleanly, the log stays bounded (100 lines per call site in 10 s), no
# process outlives it, and the other upstreams and clients carry on.
. "$(dirname "$0")/lib.sh"

PYTHON3=$(command -v "$PY")
UP=$ATTACK/upstream.py
MARK=3599.$$		# "sleep MARK" marks the forker's children

# bad NAME MODE [ARG] [EXTRA]: a server entry running upstream.py.
bad() {
	arg=
	[ -z "${3:-}" ] || arg=", \"$3\""
	echo "{ name = \"$1\"; transport = \"stdio\"; command = [ \"$PYTHON3\", \"$UP\", \"$2\"$arg ]; ${4:-} }"
}

# marked: the pids of processes running "sleep MARK".
marked() {
	for d in /proc/[0-9]*; do
		if [ "$({ tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null)" = "sleep $MARK " ]; then
			echo "${d#/proc/}"
		fi
	done
}
none_of() {
	for p in "$@"; do
		if kill -0 "$p" 2>/dev/null; then return 1; fi
	done
	return 0
}
no_marked() {
	[ -z "$(marked)" ]
}

# call NAME TOOL ARGS [CURL-ARGS]: call a tool; prints its JSON messages.
call() {
	_up=$1
	_tool=$2
	_args=$3
	shift 3
	mcp "{\"jsonrpc\":\"2.0\",\"id\":\"$_up\",\"method\":\"tools/call\",\"params\":{\"name\":\"${_up}__$_tool\",\"arguments\":$_args}}" "$@" |
	    data_lines
}

# worker_lines NAME: log lines of the worker of an upstream.
worker_lines() {
	grep -c "mcp-worker $1 " "$T/log"
}

quarantine 16
WAIT_STATE=none GW_VERBOSE= start_gateway "$(demo demo)" \
    "$(bad garbage garbage)" "$(bad storm storm)" "$(bad forker forker "$MARK")" \
    "$(bad mute mute '' 'init_timeout = 2; max_failures = 2;')" \
    "$(bad endless endless '' 'max_message = "64k"; request_timeout = 120;')" \
    "$(bad lister lister '' 'request_timeout = 2;')"
for u in demo garbage storm forker endless lister; do
	wait_state ready "$u"
done
session
ok "a client works while the mute upstream is starting" call_ok

# 12a. Garbage: 1000 lines before the handshake, 100 000 on a call.
l0=$(worker_lines garbage)
out=$(call garbage spew '{"count":100000}')
like "a call behind 100 000 garbage lines is answered" "$out" '"id":"garbage","result".*"text":"spewed"'
like "its upstream's other tool works" "$(call garbage echo '{"text":"clean"}')" '"text":"clean"'
l1=$(worker_lines garbage)
echo "# garbage: $l1 log lines from its worker for 101 000 garbage lines ($((l1 - l0)) for the last 100 000)"
ok "the log stays bounded (under 1000 lines, got $l1)" test "$l1" -lt 1000
is "it was not restarted" "$(field garbage 6)" 0

# 12b. A storm of 60 000 notifications ahead of an answer.
rss0=$(rss_kb "$GW_PID")
l0=$(log_lines)
out=$(call storm storm '{"count":60000}')
like "a call behind a storm of 60 000 notifications is answered" "$out" '"id":"storm","result".*"text":"stormed"'
like "the upstream's other tool works" "$(call storm echo '{"text":"calm"}')" '"text":"calm"'
ok "other upstreams answer" call_ok
rss1=$(rss_kb "$GW_PID")
l1=$(log_lines)
echo "# storm: supervisor RSS $rss0 KiB before, $rss1 KiB after; $((l1 - l0)) log lines"
ok "the supervisor's RSS grew by less than 64 MiB ($((rss1 - rss0)) KiB)" test $((rss1 - rss0)) -lt 65536
ok "the log stays bounded (under 1000 lines, got $((l1 - l0)))" test $((l1 - l0)) -lt 1000
is "the storm's upstream was not restarted" "$(field storm 6)" 0

# 12c. An endless line: dropped once past max_message (64k), its call
# failed at once (the line is still being written: it never ends), the
# worker holding none of it.
wpid=$(field endless 4)
upid=$(field endless 5)
out=$(call endless endless '{}' -m 30)
like "a call answered with an endless line fails at once with -32000" "$out" '"id":"endless","error":\{"code":-32000,"message":"upstream endless: its answer is over max_message \(65536 bytes\)'
big=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
	r=$(rss_kb "$wpid")
	[ "${r:-0}" -le "$big" ] || big=$r
	sleep 0.2
done
echo "# endless: worker RSS at most $big KiB while the line goes on"
ok "the worker holds none of the line (RSS under 64 MiB: $big KiB)" test "$big" -gt 0 -a "$big" -lt 65536
"$MCPCTL" -s "$CTL" restart endless > /dev/null
wait_state ready endless
like "after a restart the upstream answers" "$(call endless echo '{"text":"again"}')" '"text":"again"'
ok "the old upstream and its worker are gone" until_true 10 none_of "$wpid" "$upid"

# 12d. Children left behind: in the group, in a session of their own,
# double-forked, deaf to SIGTERM, one holding the upstream's stdout.
first=$(marked)
is "the forker's four children run" "$(echo "$first" | grep -c .)" 4
out=$(call forker quit '{}' -m 30)
like "a call to an upstream that exits fails with -32000" "$out" '"id":"forker","error":\{"code":-32000'
ok "every child of the exited upstream is gone (within 10 s)" until_true 10 none_of $first
wait_state ready forker
ok "the restarted upstream's children run" until_true 10 test -n "$(marked)"

# 12f. A tools/list never answered (after a list_changed) is given up at
# request_timeout (2 s): the next change is listed, not the list frozen.
like "the lister says its tools changed" "$(call lister change '{}')" '"text":"changed"'
like "... twice (the second while its list is unanswered)" "$(call lister change '{}')" '"text":"changed"'
lister_added() {
	mcp '{"jsonrpc":"2.0","id":"l","method":"tools/list"}' | data_lines |
	    grep -q '"name":"lister__added"'
}
ok "a tools/list never answered does not freeze the catalog (within 10 s)" until_true 10 lister_added
like "... the worker says why" "$(grep 'mcp-worker lister' "$T/log")" 'tools/list: no answer within 2 s'

# 12e. No answer to initialize: failed after init_timeout (2 s), twice.
ok "the mute upstream is failed after max_failures (2)" wait_state failed mute
echo "# mute: $(field mute 3), $(field mute 6) restarts; $("$MCPCTL" -s "$CTL" status | awk '$1 == "mute"')"
like "its last error says why" "$("$MCPCTL" -s "$CTL" status | awk '$1 == "mute"')" 'init|initialize|time'
ok "and the rest still works" call_ok

# What the rate limit left out is counted once its 10 s window is over,
# when the same call site logs again.
spew_once() {
	call garbage spew '{"count":1}' > /dev/null
	grep -q 'more lines like "upstream sent an invalid message.*suppressed' "$T/log" && return 0
	sleep 1
	return 1
}
ok "the log says how many garbage lines it left out" until_true 20 spew_once
grep 'suppressed' "$T/log" | sed 's/^/# /'

# The whole log, for all of that.
echo "# log: $(log_lines) lines in all"
ok "the whole log stays bounded (under 2000 lines)" test "$(log_lines)" -lt 2000
stop_gateway
ok "after the daemon stops, no child of any upstream is left (within 10 s)" until_true 10 no_marked
finish

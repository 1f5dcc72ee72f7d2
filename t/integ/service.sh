#!/bin/sh
# SPDX-License-Identifier: ISC
# The daemon as a service: -h and -V; -n finding what startup would (the
# listen address, users, tokens, the lock file's directory) and printing
# startup's warnings; the readiness protocol ($NOTIFY_SOCKET: READY,
# RELOADING, STOPPING, STATUS) received by a real datagram socket; log
# lines with <N> priorities when stderr is the journal's stream; one log
# line per upstream failure; mcpctl's refusal naming who may use the
# socket.
. "$(dirname "$0")/lib.sh"

VERSION=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")

# -h and -V of both programs.
is "mcp-supervisord -V" "$("$SUPERVISORD" -V)" "mcp-supervisord $VERSION"
is "mcpctl -V" "$("$MCPCTL" -V)" "mcpctl $VERSION"
out=$("$SUPERVISORD" -h); rc=$?
like "mcp-supervisord -h prints the options and exits 0" "$rc $out" '^0 usage: mcp-supervisord .*-n .*check the configuration'
out=$("$MCPCTL" -h); rc=$?
like "mcpctl -h prints the commands and exits 0" "$rc $out" '^0 usage: mcpctl .*reload'
"$SUPERVISORD" -x > /dev/null 2>&1 && rc=0 || rc=$?
is "a bad option exits 2" "$rc" 2

# check CONF-TEXT: run -n on a file; prints the exit status and stderr.
check() {
	printf '%b' "$1" > "$T/check.conf"
	"$SUPERVISORD" -n -f "$T/check.conf" 2> "$T/check.err" && rc=0 || rc=$?
	echo "$rc $(cat "$T/check.err")"
}
C="control = \"$T/c.sock\";\n"
like "-n: a port above 65535 is an error, with file:line" \
    "$(check "${C}listen = \"127.0.0.1:99999\";\n")" \
    "^1 $T/check.conf:2: listen \"127.0.0.1:99999\": the port must be a number from 1 to 65535"
like "-n: a port that is not a number" \
    "$(check "${C}listen = \"127.0.0.1:http\";\n")" '^1 .*check.conf:2: listen .*the port must be a number'
like "-n: localhost without a port" \
    "$(check "${C}listen = \"localhost\";\n")" \
    '^1 .*check.conf:2: listen "localhost": no port; write host:port, e.g. "127.0.0.1:8931"$'
like "-n: an IPv6 address without brackets" \
    "$(check "${C}listen = \"::1:8931\";\n")" '^1 .*check.conf:2: .*an IPv6 address goes in brackets'
like "-n: a listen host that does not resolve" \
    "$(check "${C}listen = \"no-such-host.invalid:8931\";\n")" '^1 .*check.conf:2: listen "no-such-host.invalid:8931": '
like "-n: a global user that does not exist" \
    "$(check "${C}user = \"no-such-user-$$\";\n")" "^1 .*check.conf:2: user \"no-such-user-$$\" does not exist"
like "-n: an upstream's user that does not exist" \
    "$(check "${C}servers = ( { name = \"a\"; transport = \"stdio\";\n command = [ \"x\" ]; user = \"no-such-user-$$\"; } );\n")" \
    "^1 .*check.conf:3: user \"no-such-user-$$\" does not exist"
like "-n: a literal token that is too short" \
    "$(check "${C}auth_tokens = [ \"0123456789abcdef\", \"short\" ];\n")" \
    '^1 .*check.conf:2: a token must have at least 16 characters \(this one has 5\)'
like "-n: a client's literal token that is too short" \
    "$(check "${C}clients = ( { name = \"ed\";\n token = \"abc\"; } );\n")" \
    '^1 .*check.conf:3: a token must have at least 16 characters'
like "-n: a token from an unset variable" \
    "$(check "${C}auth_tokens = [ \"\${env:MCPS_UNSET_$$}\" ];\n")" \
    "^1 .*check.conf: auth_tokens: entry 1: environment variable MCPS_UNSET_$$ is not set"
like "-n: a token from a variable that is too short" \
    "$(MCPS_SHORT=abc check "${C}auth_tokens = [ \"\${env:MCPS_SHORT}\" ];\n")" \
    '^1 .*auth_tokens: entry 1: a token must have at least 16 characters'
like "-n: a lock file whose directory is missing" \
    "$(check "${C}ws_lockfile = \"$T/no/such/dir/lock\";\n")" \
    "^1 .*check.conf: ws_lockfile $T/no/such/dir/lock: its directory: No such file or directory"
like "-n: listening beyond loopback prints startup's warnings" \
    "$(check "${C}listen = \"0.0.0.0:8931\";\n")" \
    '^0 mcp-supervisord: warning: listen 0.0.0.0:8931 is beyond loopback and there are no auth_tokens or clients.*warning: .*no allowed_hosts.*configuration OK$'
like "-n: a good file" "$(check "${C}listen = \"[::1]:8931\";\n")" '^0 configuration OK$'
export MCPS_TEST_KEY=sk-test-0123456789
L="llm = ( { name = \"p\"; provider = \"openai\"; model = \"m\"; api_key = \"\${env:MCPS_TEST_KEY}\"; url = "
for u in "http://localhost.example.com:8000" "http://127.0.0.1.example.com" "http://user@evil.example/@127.0.0.1"; do
	like "-n: an api_key to $u goes without TLS" \
	    "$(check "${C}${L}\"$u\"; } );\n")" "^0 mcp-supervisord: warning: llm p: its api_key goes to .* without TLS"
done
for u in "http://localhost:11434" "http://127.0.0.2:8000/v1" "http://[::1]:8000" "http://u@LOCALHOST"; do
	like "-n: an api_key to $u stays on this machine" \
	    "$(check "${C}${L}\"$u\"; } );\n")" '^0 configuration OK$'
done
if [ "$(id -u)" -eq 0 ]; then
	like "-n: an upstream left running as root is named" \
	    "$(check "${C}servers = ( { name = \"a\"; transport = \"stdio\"; command = [ \"x\" ]; } );\n")" \
	    '^0 mcp-supervisord: warning: upstream a runs as root: set user'
	like "-n as another user: upstreams cannot change user" \
	    "$(printf '%b' "${C}servers = ( { name = \"a\"; transport = \"stdio\";\n command = [ \"x\" ]; user = \"root\"; } );\n" > "$T/check.conf"
	       chmod 755 "$T"; chmod 644 "$T/check.conf"
	       setpriv --reuid=nobody --regid=nogroup --clear-groups "$SUPERVISORD" -n -f "$T/check.conf" 2>&1 && echo rc=0 || echo "rc=$?")" \
	    'check.conf:2: upstream a: user "root": mcp-supervisord runs as uid [0-9]+, not root, and cannot start upstreams as another user rc=1'
fi
# Startup refuses what -n refuses, and listens on nothing.
printf 'listen = "127.0.0.1:99999";\ncontrol = "%s";\n' "$T/c.sock" > "$T/bad.conf"
out=$("$SUPERVISORD" -d -f "$T/bad.conf" 2>&1) && rc=0 || rc=$?
like "startup refuses a port above 65535" "$rc $out" '^1 .*bad.conf:1: listen "127.0.0.1:99999": the port must be'
# -n finds what the start would: a configured state_dir that is not there.
printf 'listen = "127.0.0.1:0";\nstate_dir = "%s";\nservers = ( );\n' "$T/no-such-dir" > "$T/state.conf"
out=$("$SUPERVISORD" -n -f "$T/state.conf" 2>&1) && rc=0 || rc=$?
like "-n refuses a state_dir that is not there" "$rc $out" '^1 .*state.conf:2: state_dir .*no-such-dir: No such file or directory'
# A control path that names a file, not a socket: the file is kept.
echo keep > "$T/not-a-socket"
printf 'listen = "127.0.0.1:0";\ncontrol = "%s";\nservers = ( );\n' "$T/not-a-socket" > "$T/file.conf"
out=$(timeout 10 "$SUPERVISORD" -d -f "$T/file.conf" 2>&1) && rc=0 || rc=$?
like "startup refuses a control path that is not a socket" "$rc $out" '^1 .*control socket .*not-a-socket: something else is there \(not a socket\): not replaced'
is "and leaves the file alone" "$(cat "$T/not-a-socket")" keep

# A datagram socket playing the service manager: it writes each message
# on a line ("|" between its fields) and stops by itself.
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(1)
end = time.time() + 120
with open(sys.argv[2], "a") as f:
    while time.time() < end:
        try:
            m = s.recv(4096)
        except socket.timeout:
            continue
        f.write(m.decode().replace("\n", "|") + "\n")
        f.flush()
' "$T/notify.sock" "$T/notify.log" &
NPID=$!
for _ in $(seq 100); do [ -S "$T/notify.sock" ] && break; sleep 0.05; done

# wait_notify REGEX: until a message matches.
wait_notify() {
	for _ in $(seq 200); do
		grep -Eq -- "$1" "$T/notify.log" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# wait_ready_after N: until READY=1 follows the Nth RELOADING=1.
wait_ready_after() {
	for _ in $(seq 200); do
		awk -v n="$1" '/^RELOADING=1\|STATUS=reloading .*\|MONOTONIC_USEC=[0-9]+$/ { if (++r == n) at = NR }
		    /^READY=1\|/ && at && NR > at { ok = 1 } END { exit !ok }' \
		    "$T/notify.log" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# stderr is the journal's stream when JOURNAL_STREAM names its file.
: > "$T/log"
export JOURNAL_STREAM="$(stat -c '%d:%i' "$T/log")"
export NOTIFY_SOCKET="$T/notify.sock"
TAG=sv$$
WAIT_STATE=none start_gateway "$(demo "d$TAG")" \
    "{ name = \"gone$TAG\"; transport = \"stdio\"; command = [ \"/nonexistent/$TAG\" ]; restart_delay = 1; max_failures = 3; }"
unset NOTIFY_SOCKET JOURNAL_STREAM
wait_state ready "d$TAG"
ok "READY=1 once listening, with a status line and the main pid" \
    wait_notify "^READY=1\|STATUS=listening on $ADDR; [0-9]+ of 2 upstreams ready; [0-9]+ sessions\|MAINPID=$GW_PID$"
ok "STATUS follows the upstreams" wait_notify "^STATUS=listening on $ADDR; 1 of 2 upstreams ready"
up=$(field "d$TAG" 5)
ok "the upstream does not inherit NOTIFY_SOCKET" sh -c "! tr '\0' '\n' < /proc/$up/environ | grep -q NOTIFY_SOCKET"

"$MCPCTL" -s "$CTL" reload > /dev/null 2>&1
ok "a reload sends RELOADING=1 (with MONOTONIC_USEC) and then READY=1" \
    wait_ready_after 1
echo 'bogus' >> "$T/conf"
out=$("$MCPCTL" -s "$CTL" reload 2>&1) && rc=0 || rc=$?
like "a rejected file fails mcpctl reload (and so ExecReload)" "$rc $out" '^1 mcpctl: .*conf:[0-9]+: syntax error'
ok "and the service is READY again after it" wait_ready_after 2

# Journal lines: a priority, no timestamp of ours; workers' too.
ok "every log line has a <N> priority prefix" sh -c "! grep -vqE '^<[0-7]>' '$T/log'"
ok "an info line is <6>" grep -Eq '^<6>listening on http://' "$T/log"
ok "a debug line (-v) is <7>" grep -Eq '^<7>' "$T/log"
ok "a warning is <4>" grep -Eq "^<4>upstream gone$TAG: worker exited with status 3" "$T/log"
ok "a worker's lines carry the prefix too" grep -Eq "^<[67]>d$TAG: " "$T/log"
ok "no timestamps of our own" sh -c "! grep -qE '^<[0-7]>[0-9]{2}:[0-9]{2}:[0-9]{2}' '$T/log'"

# One line per failure: the worker does not repeat what the supervisor logs.
wait_state failed "gone$TAG"
is "a command that is not found is logged once per attempt" \
    "$(grep -c "command not found: /nonexistent/$TAG" "$T/log")" 3
like "the last says the upstream is given up" \
    "$(grep "command not found: /nonexistent/$TAG" "$T/log" | tail -1)" "failed 3 times in a row, giving up"

stop_gateway
ok "STOPPING=1 at exit" wait_notify '^STOPPING=1\|STATUS=stopping \(SIGTERM\)$'
kill "$NPID" 2>/dev/null || true
wait "$NPID" 2>/dev/null || true

# Without JOURNAL_STREAM (or with one naming another file) lines are stamped.
export JOURNAL_STREAM="1:1"
start_gateway "$(demo "e$TAG")"
unset JOURNAL_STREAM
like "a JOURNAL_STREAM that is not stderr is ignored" "$(head -1 "$T/log")" '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} mcp-supervisord '

# mcpctl says who may use a socket it may not.
if [ "$(id -u)" -eq 0 ]; then
	chmod 755 "$T"
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$MCPCTL" -s "$CTL" status 2>&1) && rc=0 || rc=$?
	like "mcpctl's permission refusal names who may use the socket" "$rc $out" \
	    "^1 mcpctl: $CTL: permission denied: only root and members of group root may use it \\(its socket is mode 0660\\)"
	chmod 700 "$T"
fi
out=$("$MCPCTL" -s "$T/none.sock" status 2>&1) && rc=0 || rc=$?
like "mcpctl with no daemon says so" "$rc $out" '^1 mcpctl: .*none.sock: No such file or directory \(is mcp-supervisord running\? give its control socket with -s\)'

finish

#!/bin/sh
# SPDX-License-Identifier: ISC
#
# t/package/systemd.sh: the .deb under a real systemd.
#
#   sh t/package/systemd.sh mcp-supervisor_VERSION_ARCH.deb
#
# This machine's PID 1 is not systemd, so the package's unit is tried in a
# container: systemd-nspawn boots this machine's own system from an
# overlay (every change lands in a tmpfs and goes with it), with a private
# network.  There the .deb is installed as on a fresh Debian 12 (the user
# does not exist yet, nothing forbids starting services), and the unit is
# checked as an administrator uses it: postinst enables and starts it
# (Type=notify, so "active" means READY=1 came), its status line, one MCP
# call, the control socket's mode and who may use mcpctl, systemctl reload
# of a good and of a bad file, journald priorities, the access log in the
# unit's logs directory and its rotation by the package's logrotate file,
# the sandbox's users, systemctl stop, and dpkg --purge.
#
# Needs root, overlayfs and systemd-container.  Everything it mounts or
# starts is undone on exit, and a run killed outright is cleaned up by the
# next one.
set -eu

DEB=${1:?usage: $0 DEB}
DEB=$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")
USR=mcp-supervisor
UNIT=mcp-supervisord.service
BASE=/var/tmp/mcps-nspawn

say() { printf 'systemd: %s\n' "$*" >&2; }
die() { say "FAILED: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root"
[ -f "$DEB" ] || die "no $DEB"
command -v systemd-nspawn > /dev/null 2>&1 ||
    die "systemd-nspawn not found (apt-get install systemd-container)"

ntests=0
failures=0
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
like() {
	ntests=$((ntests + 1))
	if printf '%s' "$2" | tr '\n' ' ' | grep -Eq -- "$3"; then
		echo "ok $ntests - $1"
	else
		echo "not ok $ntests - $1"
		echo "#   got:  $(printf '%s' "$2" | head -c 600)"
		echo "#   want: /$3/"
		failures=$((failures + 1))
	fi
}

# q COMMAND...: quietly.  not COMMAND...: fails when it succeeds.
q() { "$@" > /dev/null 2>&1; }
not() { ! "$@"; }

# Stop a container and undo the mounts of a directory made by this script.
teardown() {
	dir=$1
	if [ -f "$dir.pid" ]; then
		pid=$(cat "$dir.pid")
		if [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = systemd-nspawn ]; then
			kill -TERM "$pid" 2>/dev/null || true
			for _ in $(seq 100); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			kill -KILL "$pid" 2>/dev/null || true
			for _ in $(seq 50); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
		fi
		rm -f "$dir.pid"
	fi
	if mountpoint -q "$dir/root"; then umount "$dir/root" || umount -l "$dir/root"; fi
	if mountpoint -q "$dir"; then umount "$dir" || umount -l "$dir"; fi
	rmdir "$dir" 2>/dev/null || true
}

D=
cleanup() {
	st=$?
	set +e
	[ -z "$D" ] || teardown "$D"
	exit "$st"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# What a killed run left.
for old in "$BASE".*; do
	case $old in *.pid) continue ;; esac
	[ -d "$old" ] || continue
	say "cleaning up after an earlier run ($old)"
	teardown "$old"
done

D=$(mktemp -d "$BASE.XXXXXX")
mount -t tmpfs -o mode=0755 mcps-nspawn "$D"
mkdir "$D/up" "$D/work" "$D/root"
mount -t overlay mcps-nspawn \
    -o "lowerdir=/,upperdir=$D/up,workdir=$D/work" "$D/root"
R=$D/root

# A fresh Debian 12 as far as the package is concerned: no user, no
# policy-rc.d forbidding starts (a container image's), no earlier install.
if grep -q "^$USR:" "$R/etc/passwd"; then
	chroot "$R" userdel "$USR" > /dev/null 2>&1 || die "userdel in the overlay"
fi
chroot "$R" getent group "$USR" > /dev/null 2>&1 &&
    { chroot "$R" groupdel "$USR" > /dev/null 2>&1 || die "groupdel in the overlay"; }
rm -f "$R/usr/sbin/policy-rc.d"
if chroot "$R" dpkg-query -W mcp-supervisor > /dev/null 2>&1; then
	die "mcp-supervisor is installed on this machine: dpkg --purge it first"
fi
cp "$DEB" "$R/root/"
cat > "$R/root/mcp-call" <<'EOF'
#!/bin/sh
# mcp-call TEXT: initialize, then tools/call demo__echo through the gateway.
set -eu
u=http://127.0.0.1:8931/mcp
a='Accept: application/json, text/event-stream'
c='Content-Type: application/json'
curl -s -D /tmp/h -o /dev/null -H "$c" -H "$a" -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"systemd.sh","version":"1"}}}' $u
sid=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([A-Za-z0-9_.-]*\).*/\1/p' /tmp/h)
curl -s -o /dev/null -H "$c" -H "$a" -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' $u
curl -s -H "$c" -H "$a" -H "Mcp-Session-Id: $sid" -d "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"demo__echo\",\"arguments\":{\"text\":\"$1\"}}}" $u
EOF
chmod +x "$R/root/mcp-call"

# Boot to basic.target: the host's own services stay down; ours is
# started by its postinst.
say "booting this machine's system in a container"
systemd-nspawn --quiet --keep-unit --register=no --private-network \
    -M mcps-pkgtest -D "$R" -b systemd.unit=basic.target \
    > "$D/boot.log" 2>&1 < /dev/null &
echo $! > "$D.pid"
NSPAWN=$!
# ct COMMAND...: run a command in the container, as root.
ct() {
	nsenter -t "$INIT" -m -u -i -n -p -- \
	    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}
# The container's PID 1 is nspawn's child once it has exec'd systemd
# (before that, a child of nspawn may be a helper that goes away).
INIT=
state=
for _ in $(seq 600); do
	kill -0 "$NSPAWN" 2>/dev/null || break
	INIT=$(pgrep -P "$NSPAWN" -x systemd | head -n 1) || true
	if [ -n "$INIT" ]; then
		state=$(ct systemctl is-system-running 2>/dev/null) || true
		case $state in running|degraded) break ;; esac
	fi
	sleep 0.1
done
case $state in
running|degraded) ;;
*) cat "$D/boot.log" >&2; die "the container's systemd is not up (${state:-no answer})" ;;
esac
is "the container runs systemd as PID 1" "$(ct ps -o comm= -p 1)" systemd

say "dpkg -i in the container"
ct dpkg -i "/root/$(basename "$DEB")" > "$D/dpkg.log" 2>&1 ||
    { cat "$D/dpkg.log" >&2; die "dpkg -i in the container"; }
ok "postinst made the user $USR" q ct getent passwd "$USR"
is "the unit is enabled" "$(ct systemctl is-enabled $UNIT 2>&1)" enabled
is "postinst started it, and it told systemd it is ready (Type=notify)" \
    "$(ct systemctl is-active $UNIT 2>&1)" active
like "its status line" "$(ct systemctl show -P StatusText $UNIT)" \
    '^listening on 127\.0\.0\.1:8931; 1 of 1 upstreams ready'
is "it runs as $USR" "$(ct systemctl show -P User $UNIT)" "$USR"
ct ps -e -o unit=,uid=,comm= | awk -v u=$UNIT '$1 == u' > "$D/procs"
is "the service has three processes: daemon, worker, upstream" \
    "$(wc -l < "$D/procs" | tr -d ' ')" 3
is "... all of them $USR's" "$(awk '{ print $2 }' "$D/procs" | sort -u)" \
    "$(ct id -u "$USR")"
is "/run/mcp-supervisord: 0750 $USR:$USR" \
    "$(ct stat -c '%a %U:%G' /run/mcp-supervisord)" "750 $USR:$USR"
is "the control socket: 0660 $USR:$USR" \
    "$(ct stat -c '%a %U:%G' /run/mcp-supervisord/control.sock)" "660 $USR:$USR"
like "one MCP call through it" "$(ct /root/mcp-call 'under systemd')" \
    '"id":2,"result":\{"content":\[\{"type":"text","text":"under systemd"\}\]'

ct useradd -M -s /usr/sbin/nologin -G "$USR" mcps-admin
ct useradd -M -s /usr/sbin/nologin mcps-other
ok "mcpctl status as a member of group $USR" \
    q ct runuser -u mcps-admin -- mcpctl status
ok "mcpctl status as another user is refused" \
    not q ct runuser -u mcps-other -- mcpctl status

ok "systemctl reload of the packaged file" q ct systemctl reload $UNIT
ct cp /etc/mcp-supervisord.conf /root/good.conf
ct sh -c 'echo "this is not a configuration" >> /etc/mcp-supervisord.conf'
ok "systemctl reload of a broken file fails" \
    not q ct systemctl reload $UNIT
is "... and the daemon goes on" "$(ct systemctl is-active $UNIT 2>&1)" active
like "... and journald has why, at priority warning or above" \
    "$(ct journalctl -u $UNIT -p warning -o cat --no-pager)" \
    'mcp-supervisord.conf:[0-9]+: .*nothing changed'
ct cp /root/good.conf /etc/mcp-supervisord.conf
ct journalctl -u $UNIT -o cat --no-pager > "$D/info"
ct journalctl -u $UNIT -p warning -o cat --no-pager > "$D/warning"
ok "info lines are in the journal" grep -q 'listening on' "$D/info"
ok "... at priority info, not warning" not grep -q 'listening on' "$D/warning"

# The access log where the manual's example puts it, in the unit's
# LogsDirectory=; rotated by the package's logrotate file, whose
# postrotate has the daemon reopen it.
ct sh -c 'echo "access_log = \"/var/log/mcp-supervisord/access.log\";" >> /etc/mcp-supervisord.conf'
ok "systemctl reload with access_log in /var/log/mcp-supervisord" q ct systemctl reload $UNIT
is "/var/log/mcp-supervisord: 0750 $USR:$USR (LogsDirectory=)" \
    "$(ct stat -c '%a %U:%G' /var/log/mcp-supervisord 2>&1)" "750 $USR:$USR"
# logged N: until the access log has N tools/call lines (2 s at most).
logged() {
	for _ in $(seq 20); do
		[ "$(ct sh -c 'grep -c "method=\"tools/call\"" /var/log/mcp-supervisord/access.log' 2>/dev/null)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
q ct /root/mcp-call 'to the access log'
ok "a call is in /var/log/mcp-supervisord/access.log" logged 1
if ct sh -c 'command -v logrotate' > /dev/null 2>&1; then
	ok "logrotate -f with the package's file" \
	    q ct logrotate -f /etc/logrotate.d/mcp-supervisor
	ok "... rotated the log" ct test -s /var/log/mcp-supervisord/access.log.1
	q ct /root/mcp-call 'after the rotation'
	ok "... and the daemon writes to the new file" logged 1
	is "... made by logrotate: 0640 $USR:$USR" \
	    "$(ct stat -c '%a %U:%G' /var/log/mcp-supervisord/access.log 2>&1)" "640 $USR:$USR"
else
	echo "# logrotate is not installed: the package's logrotate file is not tried"
fi
score=$(ct systemd-analyze security $UNIT --no-pager 2>&1 |
    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
say "systemd-analyze security (online): $score"
ok "systemd-analyze security: ${score:-?} at most 2.0" \
    awk -v e="${score:-99}" 'BEGIN { exit !(e <= 2.0) }'

ok "systemctl stop" q ct systemctl stop $UNIT
is "... stops every process of the service" \
    "$(ct ps -o pid= -u "$USR" | wc -l | tr -d ' ')" 0
ok "... and removes /run/mcp-supervisord" ct test ! -e /run/mcp-supervisord
ok "systemctl start" q ct systemctl start $UNIT
say "dpkg --purge in the container"
ct dpkg --purge mcp-supervisor > "$D/purge.log" 2>&1 ||
    { cat "$D/purge.log" >&2; die "dpkg --purge in the container"; }
is "the purge stopped the service" "$(ct ps -o pid= -u "$USR" | wc -l | tr -d ' ')" 0
like "the unit is gone" "$(ct systemctl is-enabled $UNIT 2>&1 || true)" 'not-found|No such file'
for f in /etc/mcp-supervisord.conf /var/lib/mcp-supervisor \
    /var/cache/mcp-supervisor /run/mcp-supervisord /var/log/mcp-supervisord \
    /etc/logrotate.d/mcp-supervisor \
    /etc/systemd/system/multi-user.target.wants/$UNIT; do
	ok "no $f" ct test ! -e "$f"
done

echo "1..$ntests"
if [ "$failures" -ne 0 ]; then
	say "$((ntests - failures)) passed, $failures failed"
	sed -n '/mcp-supervisord/p' "$D/boot.log" >&2 || true
	exit 1
fi
say "$ntests passed, 0 failed"

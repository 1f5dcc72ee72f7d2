#!/bin/sh
# SPDX-License-Identifier: ISC
#
# t/package/run.sh: the packages, as an administrator meets them.
#
#   sh t/package/run.sh [-b BUILDDIR]
#
# From the make dist tarball of BUILDDIR (a configured tree, default
# build/): builds the .deb (dpkg-buildpackage) and the .rpm (rpmbuild),
# lints both, checks their versions against configure's and their files
# against a make install of the same tree.  Then the .deb under a real
# systemd, in a container (t/package/systemd.sh).  Then on this machine,
# whose PID 1 is not systemd: dpkg -i, the installed daemon's -n on the
# packaged configuration, that daemon started as the package's user
# (setpriv does what User= and Group= do, a datagram socket stands for
# NOTIFY_SOCKET), one MCP call through it, mcpctl as a member of the group
# and as another user, mcpctl reload as ExecReload runs it; then the
# purge, after which nothing may be left but the user and group, which
# Debian keeps.
#
# Needs root, Debian 12, and dpkg-dev, debhelper, lintian, rpm, rpmlint,
# curl, python3, systemd-container (./bootstrap package installs them).
# Every process it starts is stopped, and the package purged, also when
# it fails; a run that was killed outright leaves a marker in /run that
# the next run finds, and that run purges the package first.
set -eu

top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=$top_srcdir/build
while getopts b: opt; do
	case $opt in
	b) builddir=$(cd "$OPTARG" && pwd) ;;
	*) echo "usage: $0 [-b builddir]" >&2; exit 2 ;;
	esac
done

PKG=mcp-supervisor
USR=mcp-supervisor
UNIT=mcp-supervisord.service
MARKER=/run/mcp-supervisor-package-test
JOBS=$(nproc 2>/dev/null || echo 2)

say() { printf 'package: %s\n' "$*" >&2; }
die() { say "FAILED: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (it installs and purges the .deb)"
for c in dpkg-buildpackage dpkg-parsechangelog lintian rpmbuild rpmlint \
    curl python3 setpriv systemd-analyze systemd-nspawn; do
	command -v "$c" > /dev/null 2>&1 || die "$c not found (./bootstrap package installs it)"
done
[ -f "$builddir/Makefile" ] || die "$builddir is not a configured build tree"

ntests=0
failures=0
# ok DESCRIPTION COMMAND...: one check.
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
		echo "#   got:  $(printf '%s' "$2" | head -c 600)"
		echo "#   want: /$3/"
		failures=$((failures + 1))
	fi
}
# same DESCRIPTION FILE-A FILE-B: two lists, equal.
same() {
	ntests=$((ntests + 1))
	if diff -u "$2" "$3" > "$W/diff"; then
		echo "ok $ntests - $1"
	else
		echo "not ok $ntests - $1"
		sed 's/^/#   /' "$W/diff"
		failures=$((failures + 1))
	fi
}

installed() {
	dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q 'ok installed\|config-files\|half'
}

W=
RUN=
DAEMON_PID=
NOTIFY_PID=
STARTED=
# Stop what this run started; purge what it installed.
cleanup() {
	st=$?
	set +e
	for p in $DAEMON_PID $NOTIFY_PID; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $DAEMON_PID $NOTIFY_PID; do
		for _ in $(seq 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	# Workers and upstreams our daemon left (it should leave none).
	if [ -n "$STARTED" ]; then
		for p in $(ps -o pid= -u "$USR" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
	fi
	if [ -f "$MARKER" ]; then
		if installed; then
			say "purging $PKG"
			dpkg --purge "$PKG" > /dev/null 2>&1 ||
			    say "dpkg --purge $PKG failed: purge it by hand"
		fi
		if grep -qx 'state' "$MARKER"; then
			rm -rf /var/lib/mcp-supervisor /var/cache/mcp-supervisor \
			    /var/log/mcp-supervisord
		fi
	fi
	[ -z "$RUN" ] || rm -rf "$RUN"
	if [ -n "$W" ]; then
		if [ "$st" -ne 0 ] && [ -n "${KEEP_TMP:-}" ]; then
			say "kept $W"
		else
			rm -rf "$W"
		fi
	fi
	rm -f "$MARKER"
	exit "$st"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# A run that was killed before its trap ran: finish its cleanup first.
# The marker lists what such a run made: "pid N" (its daemon and its
# notification listener), "dir PATH" (its temporary directories),
# "state" (the state, cache and log directories it made before the purge);
# and while the marker is there, an installed package is that run's.
if [ -f "$MARKER" ]; then
	say "an earlier run was interrupted; cleaning up after it"
	while read -r what arg; do
		case $what in
		pid)
			case $(ps -o comm= -p "$arg" 2>/dev/null) in
			mcp-supervisord|python3) kill -KILL "$arg" 2>/dev/null || true ;;
			esac
			;;
		dir)
			case $arg in
			*/mcps-package.*|*/mcps-package-run.*) rm -rf "$arg" ;;
			esac
			;;
		state)
			rm -rf /var/lib/mcp-supervisor /var/cache/mcp-supervisor \
			    /var/log/mcp-supervisord
			;;
		esac
	done < "$MARKER"
	for p in $(ps -o pid= -u "$USR" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null || true
	done
	if installed; then
		dpkg --purge "$PKG" > /dev/null
	fi
	rm -f "$MARKER"
fi
if installed; then
	die "$PKG is installed on this machine and this test would purge it: dpkg --purge $PKG first"
fi
if [ -n "$(ps -o pid= -u "$USR" 2>/dev/null)" ]; then
	die "processes of user $USR are running; stop them first"
fi
if [ -e /var/log/mcp-supervisord ]; then
	die "/var/log/mcp-supervisord exists and this test would remove it: move it away first"
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/mcps-package.XXXXXX")
chmod 0755 "$W"
echo "dir $W" > "$MARKER"

# --- The tarball and the version ----------------------------------------
say "make dist"
make -C "$builddir" dist > "$W/dist.log" 2>&1 || { cat "$W/dist.log" >&2; die "make dist"; }
VERSION=$(sed -n 's/^PACKAGE_VERSION = //p' "$builddir/Makefile")
TARBALL=$builddir/$PKG-$VERSION.tar.gz
[ -f "$TARBALL" ] || die "no $TARBALL"
mkdir "$W/deb" "$W/rpm" "$W/inst"
tar -xzf "$TARBALL" -C "$W/deb"
SRC=$W/deb/$PKG-$VERSION

DEBVERSION=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
upstream=$(printf '%s' "$DEBVERSION" | sed -e 's/^[0-9]*://' -e 's/-[^-]*$//')
is "debian/changelog's upstream version is configure's ($VERSION)" "$upstream" "$VERSION"
is "the spec's version is configure's" \
    "$(sed -n 's/^Version: *//p' "$SRC/$PKG.spec")" "$VERSION"

# --- The .deb -------------------------------------------------------------
ARCH=$(dpkg --print-architecture)
say "dpkg-buildpackage -us -uc -b ($PKG $DEBVERSION)"
# The tests ran on this very tarball in make distcheck; nocheck spares
# running them a second time.
(cd "$SRC" && DEB_BUILD_OPTIONS="nocheck parallel=$JOBS" \
    dpkg-buildpackage -us -uc -b) > "$W/deb.log" 2>&1 ||
    { tail -n 60 "$W/deb.log" >&2; die "dpkg-buildpackage"; }
DEB=$W/deb/${PKG}_${DEBVERSION#*:}_$ARCH.deb
CHANGES=$W/deb/${PKG}_${DEBVERSION#*:}_$ARCH.changes
ok "dpkg-buildpackage made $(basename "$DEB")" test -f "$DEB"

say "lintian"
if lintian -I --fail-on error,warning "$CHANGES" > "$W/lintian.log" 2>&1; then
	ok "lintian: no errors or warnings" true
else
	ok "lintian: no errors or warnings" false
fi
sed 's/^/#   /' "$W/lintian.log"

# --- The .rpm -------------------------------------------------------------
say "rpmbuild -tb"
# Debian's rpm: it knows none of the BuildRequires (--nodeps; the Debian
# build dependencies are installed); its brp-compress is a bash script run
# by dash, which compresses no manual page, so it is run with bash here;
# the build system, not the spec, names the packager.  The tests ran on
# this tarball in make distcheck (--nocheck).
os_post=$(rpm --eval '%__os_install_post' | tr '\n' ' ' |
    sed 's|\(/usr/lib/rpm/brp-compress\)|bash \1|')
rpmbuild -tb --nodeps --nocheck --define "_topdir $W/rpm" \
    --define "__os_install_post $os_post" \
    --define "packager $(sed -n 's/^Maintainer: //p' "$SRC/debian/control")" \
    "$TARBALL" > "$W/rpm.log" 2>&1 ||
    { tail -n 60 "$W/rpm.log" >&2; die "rpmbuild"; }
RPM=$(find "$W/rpm/RPMS" -name "$PKG-$VERSION-*.rpm" | head -n 1)
ok "rpmbuild made $(basename "${RPM:-no rpm}")" test -n "$RPM"
is "the rpm's version is configure's" "$(rpm -qp --qf '%{VERSION}' "$RPM")" "$VERSION"

say "rpmlint"
rpmlint -c "$SRC/t/package/rpmlint.toml" "$RPM" "$SRC/$PKG.spec" \
    > "$W/rpmlint.log" 2>&1 && st=0 || st=$?
sed 's/^/#   /' "$W/rpmlint.log"
ok "rpmlint: no errors" test "$(grep -c ': E: ' "$W/rpmlint.log")" -eq 0
ok "rpmlint exits 0" test "$st" -eq 0

# --- Files -------------------------------------------------------------------
# make install of the tree dpkg-buildpackage configured and built.
make -C "$SRC" install DESTDIR="$W/inst" > "$W/install.log" 2>&1 ||
    { tail -n 40 "$W/install.log" >&2; die "make install"; }
# One form for every list: usr-merged, man pages uncompressed, without the
# packages' own documentation, lintian overrides and rpm's build-id links.
norm() {
	sed -e 's|^\./|/|' -e 's|^/lib/|/usr/lib/|' \
	    -e 's|^\(/usr/share/man/.*\)\.gz$|\1|' |
	    grep -v -e '^/usr/share/doc/' -e '^/usr/share/licenses/' \
	        -e '^/usr/lib/\.build-id/' -e '^/usr/share/lintian/' |
	    LC_ALL=C sort
}
(cd "$W/inst" && find . ! -type d) | norm > "$W/files.install"
dpkg-deb --fsys-tarfile "$DEB" | tar -tvf - | awk '$1 !~ /^d/ { print $6 }' |
    norm > "$W/files.deb"
rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$RPM" |
    awk '$1 !~ /^d/ { print $2 }' | norm > "$W/files.rpm"
same "the .deb has the files make install installs" "$W/files.install" "$W/files.deb"
same "the .rpm has the files make install installs" "$W/files.install" "$W/files.rpm"
for f in /usr/sbin/mcp-supervisord /usr/bin/mcpctl /usr/bin/mcp-demo-server \
    /usr/libexec/mcp-supervisor/mcp-worker \
    /usr/libexec/mcp-supervisor/mcp-worker-stdio \
    /usr/libexec/mcp-supervisor/mcp-llm \
    /usr/libexec/mcp-supervisor/mcp-idp \
    /usr/libexec/mcp-supervisor/mcp-otel \
    /etc/mcp-supervisord.conf /usr/lib/systemd/system/$UNIT \
    /usr/lib/sysusers.d/$PKG.conf /usr/share/man/man8/mcp-supervisord.8 \
    /usr/share/man/man5/mcp-supervisord.conf.5 /usr/share/man/man8/mcpctl.8 \
    /usr/share/man/man1/mcp-demo-server.1 \
    /usr/share/bash-completion/completions/mcpctl \
    /etc/logrotate.d/mcp-supervisor; do
	ok "the packages have $f" grep -qx "$f" "$W/files.deb"
done
like "the .deb has the copyright file" "$(dpkg-deb -c "$DEB")" \
    " \./usr/share/doc/$PKG/copyright( |$)"
like "the .rpm has the licence" "$(rpm -qlp "$RPM")" \
    "/usr/share/licenses/$PKG(-$VERSION)?/COPYING( |$)"
is "the .deb's conffiles" "$(dpkg-deb -I "$DEB" conffiles | LC_ALL=C sort | tr '\n' ' ')" \
    "/etc/logrotate.d/mcp-supervisor /etc/mcp-supervisord.conf "
is "the .rpm's configuration and logrotate file are %config(noreplace)" \
    "$(rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$RPM" |
    awk '$2 == "/etc/mcp-supervisord.conf" || $2 == "/etc/logrotate.d/mcp-supervisor" { print $1 }' |
    tr '\n' ' ')" "cn cn "
like "the logrotate file rotates as $USR and reopens with the installed mcpctl" \
    "$(dpkg-deb --fsys-tarfile "$DEB" | tar -xOf - ./etc/logrotate.d/mcp-supervisor)" \
    "^.*/var/log/mcp-supervisord/\*\.log \{.*su $USR $USR.*postrotate.*[[:space:]]/usr/bin/mcpctl -s /run/mcp-supervisord/control.sock reopen"
like "the .deb's postinst makes the user, enables and starts the unit" \
    "$(dpkg-deb -I "$DEB" postinst)" \
    "systemd-sysusers.*$PKG.conf.*deb-systemd-helper.* enable .*$UNIT.*deb-systemd-invoke .*$UNIT"
like "the .deb's prerm stops the unit" "$(dpkg-deb -I "$DEB" prerm)" \
    "deb-systemd-invoke stop.*$UNIT"
like "the .rpm's scriptlets make the user and handle the unit" \
    "$(rpm -qp --scripts "$RPM")" \
    "systemd-sysusers.*$PKG.conf.*$UNIT.*preuninstall.*$UNIT.*postuninstall.*try-restart.*$UNIT"

# --- Under systemd -----------------------------------------------------------
# In a container that boots this machine's system from an overlay: what
# needs systemd as PID 1 (Type=notify, the sandbox, systemctl reload, the
# journal, postinst starting and prerm stopping the service).
say "the .deb under systemd (t/package/systemd.sh)"
sh "$SRC/t/package/systemd.sh" "$DEB" > "$W/systemd.log" 2>&1 && st=0 || st=$?
sed 's/^/#   /' "$W/systemd.log"
ok "the .deb under systemd: $(sed -n 's/^systemd: \([0-9]* passed, [0-9]* failed\)$/\1/p' "$W/systemd.log")" \
    test "$st" -eq 0

# --- Install ---------------------------------------------------------------
# Paths on this machine before the package, to compare after the purge.
# systemd-analyze verify (below, the test's own tool) leaves systemd's
# marker /run/systemd/systemd-units-load the first time it runs on a
# machine: not the package's.
snapshot() {
	find /etc /usr /var/lib /var/cache /var/spool /opt /srv /run -xdev \
	    \( -path /var/lib/dpkg -o -path /var/lib/apt -o \
	       -path /var/cache/apt -o -path /var/cache/debconf -o \
	       -path /var/cache/man -o -path /run/user -o \
	       -path /var/lib/ucf -o -path /run/lock \) \
	    -prune -o -print 2>/dev/null |
	    grep -v -x -e '/etc/passwd-' -e '/etc/group-' -e '/etc/shadow-' \
	        -e '/etc/gshadow-' -e '/etc/.pwd.lock' -e "$MARKER" \
	        -e /run/systemd/systemd-units-load |
	    LC_ALL=C sort
}
snapshot > "$W/before"

say "dpkg -i $(basename "$DEB")"
dpkg -i "$DEB" > "$W/dpkg-i.log" 2>&1 ||
    { cat "$W/dpkg-i.log" >&2; die "dpkg -i"; }
ok "dpkg -i installs it" installed
ok "the user $USR exists" sh -c "getent passwd $USR > /dev/null"
ok "the group $USR exists" sh -c "getent group $USR > /dev/null"
ok "the unit is enabled (multi-user.target.wants)" \
    test -L /etc/systemd/system/multi-user.target.wants/$UNIT
UNITFILE=$(dpkg -L "$PKG" | grep "/systemd/system/$UNIT\$")
ok "systemd-analyze verify: clean" sh -c \
    "systemd-analyze verify '$UNITFILE' > '$W/verify.log' 2>&1 && ! test -s '$W/verify.log'"
sed 's/^/#   /' "$W/verify.log"
exposure=$(systemd-analyze security --offline=true "$UNITFILE" 2>&1 |
    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
say "systemd-analyze security: exposure $exposure"
ok "systemd-analyze security: exposure ${exposure:-?} is at most 2.0" \
    awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }'

out=$(mcp-supervisord -n -f /etc/mcp-supervisord.conf 2>&1) && st=0 || st=$?
is "mcp-supervisord -n on the packaged configuration exits 0" "$st" 0
like "... and says so" "$out" 'configuration OK'
out=$(setpriv --reuid="$USR" --regid="$USR" --init-groups --reset-env \
    /usr/sbin/mcp-supervisord -n -f /etc/mcp-supervisord.conf 2>&1) && st=0 || st=$?
is "... also as $USR, as the unit's ExecStartPre runs it" "$st" 0

# --- Run it as the package's user ------------------------------------------
# RUN stands for the unit's RuntimeDirectory (0750, the user's); the
# configuration is the packaged one on an ephemeral port.
RUN=$(mktemp -d "${TMPDIR:-/tmp}/mcps-package-run.XXXXXX")
echo "dir $RUN" >> "$MARKER"
chown "$USR:$USR" "$RUN"
chmod 0750 "$RUN"
sed -e 's|^\([[:space:]]*listen[[:space:]]*=[[:space:]]*\)"[^"]*"|\1"127.0.0.1:0"|' \
    /etc/mcp-supervisord.conf > "$RUN/mcp-supervisord.conf"
ok "the copy of the configuration listens on port 0" \
    grep -q '^[[:space:]]*listen[[:space:]]*=[[:space:]]*"127.0.0.1:0"' \
    "$RUN/mcp-supervisord.conf"
CTL=$RUN/control.sock

# The notification socket systemd would give it (Type=notify).
python3 - "$RUN/notify.sock" "$RUN/notify.log" "$USR" <<'EOF' &
import os, pwd, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
pw = pwd.getpwnam(sys.argv[3])
os.chown(sys.argv[1], pw.pw_uid, pw.pw_gid)
with open(sys.argv[2], "a") as log:
    while True:
        msg = s.recv(4096).decode("utf-8", "replace")
        log.write(msg.replace("\n", " ") + "\n")
        log.flush()
EOF
NOTIFY_PID=$!
for _ in $(seq 100); do [ -S "$RUN/notify.sock" ] && break; sleep 0.05; done
echo "pid $NOTIFY_PID" >> "$MARKER"

say "starting /usr/sbin/mcp-supervisord as $USR"
STARTED=1
setpriv --reuid="$USR" --regid="$USR" --init-groups --reset-env \
    env NOTIFY_SOCKET="$RUN/notify.sock" \
    /usr/sbin/mcp-supervisord -d -f "$RUN/mcp-supervisord.conf" -s "$CTL" \
    > "$W/daemon.log" 2>&1 &
DAEMON_PID=$!
echo "pid $DAEMON_PID" >> "$MARKER"
for _ in $(seq 200); do
	[ -S "$CTL" ] && mcpctl -s "$CTL" status > "$W/status" 2>/dev/null &&
	    grep -Eq '^demo +stdio +ready' "$W/status" && break
	sleep 0.05
done
ok "the daemon runs" kill -0 "$DAEMON_PID"
like "mcpctl status: the demo upstream is ready" "$(cat "$W/status")" \
    'demo +stdio +ready'
like "READY=1 on NOTIFY_SOCKET" "$(cat "$RUN/notify.log" 2>/dev/null)" 'READY=1'
is "the daemon runs as $USR" "$(ps -o uid= -p "$DAEMON_PID" | tr -d ' ')" \
    "$(id -u "$USR")"
like "its worker and upstream run as $USR too" \
    "$(ps -o comm= -u "$USR" | LC_ALL=C sort | tr '\n' ' ')" \
    'mcp-demo-server .*mcp-worker-stdi'
is "the control socket: mode 0660, $USR:$USR" \
    "$(stat -c '%a %U:%G' "$CTL")" "660 $USR:$USR"

# One MCP call, through the daemon, to the demo upstream.
ADDR=$(sed -n 's/.*listening on \(http:[^,]*\),.*/\1/p' "$W/status")
[ -n "$ADDR" ] || ADDR=$(sed -n 's/.*listening on \(http:[^,]*\),.*/\1/p' "$W/daemon.log")
like "the daemon listens on loopback" "$ADDR" '^http://127\.0\.0\.1:[0-9]+/mcp$'
hdr='Accept: application/json, text/event-stream'
curl -s -D "$W/headers" -o "$W/init" -H 'Content-Type: application/json' \
    -H "$hdr" -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"package-test","version":"1"}}}' \
    "$ADDR" || true
SID=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([^[:space:]]*\).*/\1/p' "$W/headers")
like "initialize: a session (instance.128 bits)" "$SID" '^[A-Za-z0-9_-]+\.[0-9a-f]{32}$'
curl -s -o /dev/null -H 'Content-Type: application/json' -H "$hdr" \
    -H "Mcp-Session-Id: $SID" \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$ADDR" || true
out=$(curl -s -H 'Content-Type: application/json' -H "$hdr" \
    -H "Mcp-Session-Id: $SID" \
    -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"from the package"}}}' \
    "$ADDR" || true)
like "tools/call demo__echo through the installed daemon" "$out" \
    '"id":2,"result":\{"content":\[\{"type":"text","text":"from the package"\}\]'

# mcpctl as an administrator: a member of the group may, others may not.
out=$(setpriv --reuid=nobody --regid=nogroup --groups="$USR" \
    mcpctl -s "$CTL" status 2>&1) && st=0 || st=$?
is "mcpctl status as a member of group $USR" "$st" 0
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
    mcpctl -s "$CTL" status 2>&1) && st=0 || st=$?
ok "mcpctl status as a non-member is refused" test "$st" -ne 0

# mcpctl reload, as the unit's ExecReload runs it.
out=$(setpriv --reuid="$USR" --regid="$USR" --init-groups --reset-env \
    mcpctl -s "$CTL" reload 2>&1) && st=0 || st=$?
is "mcpctl reload (ExecReload) of a good file exits 0" "$st" 0
cp "$RUN/mcp-supervisord.conf" "$W/good.conf"
echo 'this is not a configuration' >> "$RUN/mcp-supervisord.conf"
out=$(setpriv --reuid="$USR" --regid="$USR" --init-groups --reset-env \
    mcpctl -s "$CTL" reload 2>&1) && st=0 || st=$?
ok "mcpctl reload of a file the daemon rejects exits non-zero" test "$st" -ne 0
cp "$W/good.conf" "$RUN/mcp-supervisord.conf"
ok "the daemon still runs" kill -0 "$DAEMON_PID"

# Stop it: nothing of the user's remains.
kill -TERM "$DAEMON_PID"
for _ in $(seq 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
ok "SIGTERM stops the daemon" sh -c "! kill -0 $DAEMON_PID 2>/dev/null"
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=
ok "no process of $USR remains" sh -c "test -z \"\$(ps -o pid= -u $USR)\""
like "STOPPING=1 on NOTIFY_SOCKET" "$(cat "$RUN/notify.log" 2>/dev/null)" 'STOPPING=1'
kill -TERM "$NOTIFY_PID" 2>/dev/null || true
wait "$NOTIFY_PID" 2>/dev/null || true
NOTIFY_PID=
rm -rf "$RUN"
RUN=

# --- Purge -----------------------------------------------------------------
# What systemd would have made for the unit while it ran: the state and
# cache directories, with what npx would leave there, and the logs
# directory with an access log and its rotations.
echo state >> "$MARKER"
for d in /var/lib/mcp-supervisor /var/cache/mcp-supervisor; do
	install -d -o "$USR" -g "$USR" -m 0750 "$d" "$d/npm"
	echo x > "$d/npm/file"
done
install -d -o "$USR" -g "$USR" -m 0750 /var/log/mcp-supervisord
for f in access.log access.log.1 access.log.2.gz; do
	echo x > "/var/log/mcp-supervisord/$f"
done
say "dpkg --purge $PKG"
dpkg --purge "$PKG" > "$W/purge.log" 2>&1 ||
    { cat "$W/purge.log" >&2; die "dpkg --purge"; }
ok "dpkg --purge removes it" sh -c "! dpkg-query -W '$PKG' > /dev/null 2>&1"
snapshot > "$W/after"
same "nothing is left after the purge, and nothing else went" "$W/before" "$W/after"
for f in /etc/mcp-supervisord.conf /usr/sbin/mcp-supervisord \
    /usr/libexec/mcp-supervisor /var/lib/mcp-supervisor \
    /var/cache/mcp-supervisor /var/log/mcp-supervisord \
    /etc/logrotate.d/mcp-supervisor \
    /etc/systemd/system/multi-user.target.wants/$UNIT \
    /lib/systemd/system/$UNIT /usr/lib/sysusers.d/$PKG.conf; do
	ok "no $f" test ! -e "$f" -a ! -L "$f"
done
ok "the user $USR remains, as Debian keeps system users" \
    sh -c "getent passwd $USR > /dev/null"
# A file of someone else's in the logs directory: the purge's postrm
# (run again by hand, the package being gone) removes the access logs and
# leaves that file, and so the directory.
install -d -o "$USR" -g "$USR" -m 0750 /var/log/mcp-supervisord
for f in access.log access.log.1.gz NOTES; do
	echo x > "/var/log/mcp-supervisord/$f"
done
sh "$SRC/debian/postrm" purge > /dev/null 2>&1 && st=0 || st=$?
is "postrm purge keeps another's file in /var/log/mcp-supervisord" \
    "$st $(ls /var/log/mcp-supervisord 2>&1 | tr '\n' ' ')" "0 NOTES "
rm -rf /var/log/mcp-supervisord

echo "1..$ntests"
if [ "$failures" -ne 0 ]; then
	say "$((ntests - failures)) passed, $failures failed"
	exit 1
fi
echo "package: $ntests passed, 0 failed"

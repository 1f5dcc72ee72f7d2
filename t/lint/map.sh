#!/bin/sh
# SPDX-License-Identifier: ISC
# doc/architecture.md's "Map of the source" names every source file of the
# programs, one line each, and nothing that is gone: a .c or .h under
# supervisor/, worker/, llm/, idp/, otel/, common/, mcpctl/ or demo/ must be named in
# its directory's paragraph (`name.c`, or `name.[ch]` for a file and its
# header), and every file named there must exist.
set -u
cd "${top_srcdir:-$(dirname "$0")/../..}" || exit 1
doc=doc/architecture.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcps-map.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The names in the map, as dir/file, from the lines "- `a.c`, `b.h`: ..."
# under a paragraph that begins "**`dir/`**".
awk '
/^## / { inmap = ($0 == "## Map of the source") ; next }
!inmap { next }
/^\*\*`[a-z]+\/`\*\*/ {
	dir = $0; sub(/^\*\*`/, "", dir); sub(/`.*/, "", dir); list = 0; next
}
/^- `/ && dir != "" {
	list = 1
	head = $0; sub(/^- /, "", head); sub(/: .*/, "", head)
	n = split(head, part, /, /)
	for (i = 1; i <= n; i++) {
		f = part[i]; gsub(/`/, "", f)
		if (f ~ /\.\[ch\]$/) {
			sub(/\.\[ch\]$/, "", f)
			print dir f ".c"; print dir f ".h"
		} else
			print dir f
	}
	next
}
/^$/ { next }
list { dir = "" }
' "$doc" | sort > "$tmp/map"

find supervisor worker llm idp otel common mcpctl demo -maxdepth 1 -type f \
    \( -name '*.c' -o -name '*.h' \) | sort > "$tmp/tree"

n=$(wc -l < "$tmp/tree")
bad=0
for f in $(comm -23 "$tmp/tree" "$tmp/map"); do
	echo "not ok - $f is not in $doc's map"
	bad=$((bad + 1))
done
for f in $(comm -13 "$tmp/tree" "$tmp/map"); do
	echo "not ok - $doc's map names $f, which is not in the tree"
	bad=$((bad + 1))
done
echo "# $n source files, $(wc -l < "$tmp/map") named in the map, $bad wrong"
[ "$n" -gt 100 ] || { echo "not ok - only $n source files found"; exit 1; }
[ "$bad" -eq 0 ]

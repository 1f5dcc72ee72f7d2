#!/bin/sh
# SPDX-License-Identifier: ISC
# Every source file says its licence (COPYING) in an SPDX line near its
# top: C, headers, scripts, Node and Python tests and fixtures, build
# files, man pages, fuzz dictionaries, the files under etc/ and the
# packaging.  Data (fuzz corpora, JSON, bench results) is left out.
set -u
cd "${top_srcdir:-$(dirname "$0")/../..}" || exit 1
n=0
bad=0
for f in $(find . \( -path ./t/node_modules -o -path ./t/fuzz/corpus \
    -o -path ./build\* -o -path ./.git -o -path ./build-aux \
    -o -path ./autom4te.cache -o -path ./bench/results -o -path ./debian/.debhelper \
    -o -name node_modules \
    -o -path ./mcp-supervisor-\* -o -path './_*' \) -prune -o -type f \( \
    -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.mjs' \
    -o -name '*.cjs' -o -name '*.py' -o -name '*.dict' -o -name '*.supp' \
    -o -name '*.[158]' -o -name '*.in' -o -name Makefile.am \
    -o -name configure.ac -o -name bootstrap -o -path './etc/*' \
    -o -path ./bench/run -o -path ./.ci/run -o -path ./debian/rules \
    -o -path ./debian/postrm \) -print | sort); do
	case $f in
	./etc/*.json|./config.h.in|./config.h|./Makefile.in) continue ;;
	esac
	n=$((n + 1))
	if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: ISC'; then
		echo "not ok $n - $f has no SPDX line in its first three"
		bad=$((bad + 1))
	fi
done
echo "# $n files, $bad without an SPDX line"
[ "$n" -gt 100 ] || { echo "not ok - only $n files found"; exit 1; }
[ "$bad" -eq 0 ]

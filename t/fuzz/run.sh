#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Build the libFuzzer targets with clang and run each for a while.
#
#	t/fuzz/run.sh [-b builddir] [target ...]
#	t/fuzz/run.sh -s [-b builddir] [target ...]
#
# Targets are frame, jsonrpc, meta, http, sse, config, proxy, mcp_http, llm,
# uri, jose, idp, oauthc, search, traceparent and form (default: all; t/fuzz/README says what each covers).  Each runs for $FUZZ_SECONDS
# seconds (default 10) on a copy of its seed corpus in a temporary
# directory, with its dictionary if there is one.  The common sources are
# compiled here with the same instrumentation, not taken from libcommon.a;
# mcp_http also links the supervisor's sources, all but supervisord.c
# (main), and the in-process harness of t/unit/sup_harness.h; llm the
# LLM mapping (llm/llm_map.c and the vendors' files); idp mcp-idp's
# idp/idp_meta.c, with libcurl; oauthc mcp-worker's worker/oauthc_*.c and
# idp/idp_meta.c.
# config.h comes from the build directory: -b, $BUILDDIR, ./build under
# the source tree, or the source tree itself.
#
# With -s, the targets are instead built with $CC (default cc) and the
# standalone driver and replayed once over their seed corpora: a quick
# regression run that needs no clang.
#
# Exits non-zero if anything fails to build or any target finds a crash;
# crashing inputs are shown as hex and, if $FUZZ_ARTIFACTS names a
# directory, copied there.  Environment: CC, CLANG, FUZZ_SECONDS,
# FUZZ_ARGS (extra libFuzzer options), FUZZ_ARTIFACTS, FUZZ_KEEP (keep the
# temporary directory).

set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
seconds=${FUZZ_SECONDS:-10}
clang=${CLANG:-clang}
standalone=0
builddir=${BUILDDIR:-}

while getopts sb: opt; do
	case $opt in
	s)	standalone=1 ;;
	b)	builddir=$OPTARG ;;
	*)	echo "usage: $0 [-s] [-b builddir] [target ...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
targets=${*:-frame jsonrpc meta http sse config proxy mcp_http llm uri jose idp oauthc search traceparent form}

if [ -z "$builddir" ]; then
	for d in "$top/build" "$top"; do
		if [ -f "$d/config.h" ]; then
			builddir=$d
			break
		fi
	done
fi
if [ -z "$builddir" ] || [ ! -f "$builddir/config.h" ]; then
	echo "$0: no config.h: configure first, or give -b builddir" >&2
	exit 2
fi
builddir=$(cd "$builddir" && pwd)

for t in $targets; do
	if [ ! -f "$here/fuzz_$t.c" ]; then
		echo "$0: no target $t" >&2
		exit 2
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcps-fuzz.XXXXXX") || exit 1
if [ -z "${FUZZ_KEEP:-}" ]; then
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 130' INT TERM
else
	echo "keeping $tmp"
fi

# libcrypto for common/ws_accept.c, compiled with the rest.
libs="-levent -ljansson -lconfig -lcrypto -lm"
LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
if [ "$standalone" = 1 ]; then
	cc=${CC:-cc}
	# As configure's WARN_CFLAGS: callbacks leave parameters unused.
	cflags="-std=c11 -g -O1 -Wall -Wextra -Wno-unused-parameter"
else
	cc=$clang
	cflags="-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined"
	cflags="$cflags -fno-sanitize-recover=all -fno-omit-frame-pointer"
fi
cppflags="-I$top/common -I$top/supervisor -I$top/llm -I$top/idp -I$top/worker"
cppflags="$cppflags -I$top/t/unit"
cppflags="$cppflags -I$builddir"

# Compile the common sources once, and the supervisor's if a target needs
# them.  Not common/curl_event.c or http_fetch.c: the workers' libcurl,
# which no target links.
mkdir -p "$tmp/obj" "$tmp/obj/supervisor" || exit 1
objs=
for src in "$top"/common/*.c; do
	case $(basename "$src") in
	curl_event.c|http_fetch.c) continue ;;
	esac
	obj=$tmp/obj/$(basename "$src" .c).o
	# shellcheck disable=SC2086
	if ! $cc $cflags $cppflags -c "$src" -o "$obj"; then
		echo "$0: cannot compile $src" >&2
		exit 1
	fi
	objs="$objs $obj"
done
supobjs=
case " $targets " in
*" mcp_http "*)
	# And the in-process harness the unit suites share.
	for src in "$top"/supervisor/*.c "$top"/t/unit/sup_harness.c \
	    "$top"/t/unit/sup_client.c; do
		[ "$(basename "$src")" = supervisord.c ] && continue
		obj=$tmp/obj/supervisor/$(basename "$src" .c).o
		# shellcheck disable=SC2086
		if ! $cc $cflags $cppflags -c "$src" -o "$obj"; then
			echo "$0: cannot compile $src" >&2
			exit 1
		fi
		supobjs="$supobjs $obj"
	done
	;;
esac

llmobjs=
case " $targets " in
*" llm "*)
	mkdir -p "$tmp/obj/llm" || exit 1
	for src in "$top"/llm/llm_map.c "$top"/llm/llm_openai.c \
	    "$top"/llm/llm_anthropic.c "$top"/llm/llm_ollama.c; do
		obj=$tmp/obj/llm/$(basename "$src" .c).o
		# shellcheck disable=SC2086
		if ! $cc $cflags $cppflags -c "$src" -o "$obj"; then
			echo "$0: cannot compile $src" >&2
			exit 1
		fi
		llmobjs="$llmobjs $obj"
	done
	;;
esac

# mcp-idp's pure decisions, which read URLs with libcurl's parser.
idpobjs=
case " $targets " in
*" idp "*|*" oauthc "*)
	mkdir -p "$tmp/obj/idp" || exit 1
	obj=$tmp/obj/idp/idp_meta.o
	# shellcheck disable=SC2086
	if ! $cc $cflags $cppflags -c "$top/idp/idp_meta.c" -o "$obj"; then
		echo "$0: cannot compile idp/idp_meta.c" >&2
		exit 1
	fi
	idpobjs=$obj
	;;
esac

# The upstream OAuth client's pure decisions (and idp_meta.c, above).
oauthcobjs=
case " $targets " in
*" oauthc "*)
	for src in "$top"/worker/oauthc_meta.c "$top"/worker/oauthc_pkce.c \
	    "$top"/worker/oauthc_reg.c; do
		obj=$tmp/obj/idp/$(basename "$src" .c).o
		# shellcheck disable=SC2086
		if ! $cc $cflags $cppflags -c "$src" -o "$obj"; then
			echo "$0: cannot compile $src" >&2
			exit 1
		fi
		oauthcobjs="$oauthcobjs $obj"
	done
	;;
esac

failed=
for t in $targets; do
	bin=$tmp/fuzz_$t
	extra=
	[ "$standalone" = 1 ] && extra=$here/standalone.c
	# The supervisor's WebSocket endpoint needs libwslay.
	[ "$t" = mcp_http ] && extra="$extra $supobjs -lwslay"
	[ "$t" = llm ] && extra="$extra $llmobjs"
	[ "$t" = idp ] && extra="$extra $idpobjs -lcurl"
	[ "$t" = oauthc ] && extra="$extra $oauthcobjs $idpobjs -lcurl"
	# shellcheck disable=SC2086
	if ! $cc $cflags $cppflags "$here/fuzz_$t.c" $extra $objs $libs \
	    -o "$bin"; then
		echo "$0: cannot build fuzz_$t" >&2
		failed="$failed $t"
		continue
	fi

	if [ "$standalone" = 1 ]; then
		if ! "$bin" "$here/corpus/$t"; then
			failed="$failed $t"
		fi
		continue
	fi

	mkdir -p "$tmp/corpus/$t" "$tmp/crash/$t"
	if [ -d "$here/corpus/$t" ]; then
		cp "$here/corpus/$t"/* "$tmp/corpus/$t/" 2>/dev/null
	fi
	dict=
	[ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
	echo "== fuzz_$t for ${seconds}s"
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix="$tmp/crash/$t/" $dict \
	    ${FUZZ_ARGS:-} "$tmp/corpus/$t" >"$tmp/$t.log" 2>&1
	rc=$?
	grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done)' \
	    "$tmp/$t.log"
	# Coverage as libFuzzer last reported it (also in -fork mode).
	grep -E '^#[0-9]+.* cov: ' "$tmp/$t.log" | tail -n 1
	if [ $rc -ne 0 ] || [ -n "$(ls "$tmp/crash/$t")" ]; then
		failed="$failed $t"
		tail -n 60 "$tmp/$t.log"
		for f in "$tmp/crash/$t"/*; do
			[ -f "$f" ] || continue
			echo "--- $f"
			od -A d -c "$f" | head -n 40
			if [ -n "${FUZZ_ARTIFACTS:-}" ]; then
				mkdir -p "$FUZZ_ARTIFACTS" && cp "$f" \
				    "$FUZZ_ARTIFACTS/$t-$(basename "$f")"
			fi
		done
	fi
done

if [ -n "$failed" ]; then
	echo "FAILED:$failed" >&2
	exit 1
fi
echo "all passed: $targets"
exit 0

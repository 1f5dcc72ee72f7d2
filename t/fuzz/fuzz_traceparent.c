/* SPDX-License-Identifier: ISC */
/*
 * Fuzz W3C Trace Context (common/traceparent.c).
 *
 * The input's first line is a traceparent, the rest a tracestate, and the
 * whole is also scanned as JSON-RPC for a context in params._meta.  A
 * traceparent taken writes back to the same 55 bytes, with neither id
 * all zero; a tracestate taken is at most 512 bytes of printable ASCII;
 * and the header lines made for an HTTP upstream from a message's _meta
 * are one line each (no CR, LF or NUL: no header injection).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "traceparent.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Is a header line one line of printable ASCII? */
static int
one_line(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s < 0x20 || *s > 0x7e)
			return (0);
	return (1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data, *nl, *why;
	struct tracectx	 ctx;
	struct jrpc	 m;
	char		 out[TP_LEN + 1], ts[TS_MAX + 1];
	char		 tpl[TP_HDR_MAX], tsl[TS_HDR_MAX];
	size_t		 first, i, zero;

	nl = memchr(p, '\n', size);
	first = nl != NULL ? (size_t)(nl - p) : size;
	if (tp_parse(p, first, &ctx) == 0) {
		CHECK(first == TP_LEN);
		tp_format(&ctx, out);
		CHECK(memcmp(out, p, TP_LEN) == 0);
		for (i = zero = 0; i < 16; i++)
			zero += ctx.trace_id[i] == 0;
		CHECK(zero < 16);
		for (i = zero = 0; i < 8; i++)
			zero += ctx.span_id[i] == 0;
		CHECK(zero < 8);
	}
	if (nl != NULL && ts_valid(nl + 1, size - first - 1)) {
		CHECK(size - first - 1 <= TS_MAX);
		for (i = first + 1; i < size; i++)
			CHECK(p[i] >= 0x09 && p[i] <= 0x7e && p[i] != '\n' &&
			    p[i] != '\r');
	}
	if (jrpc_scan(p, size, &m, &why) == 0) {
		if (tp_from_meta(&m, &ctx, ts) == 0)
			CHECK(strlen(ts) <= TS_MAX && ts_valid(ts, strlen(ts)));
		if (tp_header_lines(&m, tpl, tsl) == 0) {
			CHECK(strlen(tpl) == 13 + TP_LEN && one_line(tpl));
			CHECK(one_line(tsl));
		}
	}
	return (0);
}

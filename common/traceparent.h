/* SPDX-License-Identifier: ISC */
/*
 * W3C Trace Context, level 1: the traceparent header read strictly and
 * written, tracestate checked, and both found in a request's
 * params._meta (as the MCP SDKs and agent frameworks carry them).  Pure
 * functions, so they can be fuzzed and tested without a server.
 */
#ifndef MCPS_TRACEPARENT_H
#define MCPS_TRACEPARENT_H

#include <stddef.h>
#include <stdint.h>

#include "jsonrpc.h"

#define TP_LEN		55	/* "00-" 32 "-" 16 "-" 2 */
#define TS_MAX		512	/* the longest tracestate passed on */
#define TS_MEMBERS_MAX	32
#define TP_SAMPLED	0x01	/* trace-flags: sampled */

/* A span's context: who it is and whether it is sampled. */
struct tracectx {
	uint8_t		 trace_id[16];
	uint8_t		 span_id[8];
	uint8_t		 flags;
};

/*
 * Read a traceparent value: version 00 only, exactly 55 characters,
 * lowercase hex, neither id all zero.  0, or -1 (the value is to be
 * ignored, never an error).
 */
int		 tp_parse(const char *, size_t, struct tracectx *);
/* Write one (out holds TP_LEN + 1). */
void		 tp_format(const struct tracectx *, char *out);
/* Lowercase hex of n bytes into out (2n + 1). */
void		 tp_hex(const uint8_t *, size_t n, char *out);
/*
 * Is a tracestate value one to pass on: at most TS_MAX bytes and
 * TS_MEMBERS_MAX list members, each key=value as level 1 defines them?
 * 1 or 0.
 */
int		 ts_valid(const char *, size_t);
/*
 * The context a request's params._meta carries: 0 with *ctx set (and ts,
 * of size TS_MAX + 1, the tracestate or ""), -1 if there is none or it is
 * not valid (a key given twice, not a string, a bad value).
 */
int		 tp_from_meta(const struct jrpc *, struct tracectx *, char *ts);

/*
 * The HTTP header lines that carry a request's _meta context to an HTTP
 * upstream: "traceparent: ..." into tp (TP_HDR_MAX), and "tracestate:
 * ..." into ts (TS_HDR_MAX) or "".  0, or -1 if it has none.
 */
#define TP_HDR_MAX	(sizeof "traceparent: " + TP_LEN)
#define TS_HDR_MAX	(sizeof "tracestate: " + TS_MAX)
int		 tp_header_lines(const struct jrpc *, char *tp, char *ts);

#endif

/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "b64.h"
#include "meta.h"
#include "utf8.h"
#include "xmalloc.h"

#define SENTINEL_HEAD	"=?base64?"
#define SENTINEL_TAIL	"?="

static const char *const levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency", NULL
};

int
meta_log_level(const char *p, size_t len)
{
	int	i;

	for (i = 0; levels[i] != NULL; i++) {
		if (strlen(levels[i]) == len && memcmp(levels[i], p, len) == 0)
			return (i);
	}
	return (-1);
}

const char *
meta_log_level_name(int i)
{
	return (i >= 0 && i < 8 ? levels[i] : "debug");
}

/* Find params._meta, if params is an object holding one. */
static int
meta_find(const struct jrpc *m, struct jspan *meta)
{
	if (m->params.len == 0 || jscan_type(m->p, m->params) != JT_OBJECT)
		return (-1);
	return (jscan_member(m->p, m->params, "_meta", meta) == 0 &&
	    jscan_type(m->p, *meta) == JT_OBJECT ? 0 : -1);
}

int
meta_claim(const struct jrpc *m)
{
	struct jspan	meta, v;

	return (meta_find(m, &meta) == 0 &&
	    jscan_member(m->p, meta, META_VERSION, &v) == 0);
}

int
meta_version_modern(const char *v, size_t len)
{
	static const char	first[] = MCP_VERSION_MODERN;
	size_t			i;

	/* Revisions are ISO dates: compare as text, once well formed. */
	if (len != sizeof first - 1)
		return (0);
	for (i = 0; i < len; i++) {
		if (i == 4 || i == 7 ? v[i] != '-' : v[i] < '0' || v[i] > '9')
			return (0);
	}
	return (memcmp(v, first, len) >= 0);
}

/* Read one optional member of _meta, which may appear only once. */
static int
meta_member(const char *p, struct jspan meta, const char *key,
    struct jspan *value, char *why, size_t whylen)
{
	int	r;

	memset(value, 0, sizeof *value);
	if ((r = jscan_member_unique(p, meta, key, value)) == -2) {
		snprintf(why, whylen, "%s: given more than once", key);
		return (-1);
	}
	return (0);
}

int
meta_parse(const struct jrpc *m, struct meta_envelope *env, char *why,
    size_t whylen)
{
	struct jspan	level, name, version;
	char		text[16];
	ssize_t		n;
	int		r;

	memset(env, 0, sizeof *env);
	env->level = -1;
	if (m->params.len == 0 || jscan_type(m->p, m->params) != JT_OBJECT) {
		snprintf(why, whylen, "_meta: missing (params must be an "
		    "object holding it)");
		return (-1);
	}
	if ((r = jscan_member_unique(m->p, m->params, "_meta",
	    &env->meta)) != 0) {
		snprintf(why, whylen, "_meta: %s", r == -2 ?
		    "given more than once" : "missing");
		return (-1);
	}
	if (jscan_type(m->p, env->meta) != JT_OBJECT) {
		snprintf(why, whylen, "_meta: must be an object");
		return (-1);
	}
	if (meta_member(m->p, env->meta, META_VERSION, &env->version, why,
	    whylen) != 0 || meta_member(m->p, env->meta, META_CAPS,
	    &env->caps, why, whylen) != 0 || meta_member(m->p, env->meta,
	    META_INFO, &env->info, why, whylen) != 0 ||
	    meta_member(m->p, env->meta, META_LOGLEVEL, &level, why,
	    whylen) != 0 || meta_member(m->p, env->meta, "progressToken",
	    &env->progress, why, whylen) != 0)
		return (-1);
	if (env->version.len == 0 || env->caps.len == 0) {
		snprintf(why, whylen, "%s: missing", env->version.len == 0 ?
		    META_VERSION : META_CAPS);
		return (-1);
	}
	if (jscan_type(m->p, env->version) != JT_STRING) {
		snprintf(why, whylen, "%s: must be a string", META_VERSION);
		return (-1);
	}
	if ((n = jscan_string(m->p, env->version, env->version_text,
	    sizeof env->version_text)) < 0 ||
	    memchr(env->version_text, '\0', (size_t)n) != NULL)
		env->version_text[0] = '\0';	/* no version we know */
	if (jscan_type(m->p, env->caps) != JT_OBJECT) {
		snprintf(why, whylen, "%s: must be an object", META_CAPS);
		return (-1);
	}
	if (env->info.len != 0 && (jscan_type(m->p, env->info) != JT_OBJECT ||
	    jscan_member(m->p, env->info, "name", &name) != 0 ||
	    jscan_type(m->p, name) != JT_STRING ||
	    jscan_member(m->p, env->info, "version", &version) != 0 ||
	    jscan_type(m->p, version) != JT_STRING)) {
		snprintf(why, whylen, "%s: must be an object with string name "
		    "and version", META_INFO);
		return (-1);
	}
	if (level.len != 0 && ((n = jscan_string(m->p, level, text,
	    sizeof text)) < 0 || (env->level = meta_log_level(text,
	    (size_t)n)) < 0)) {
		snprintf(why, whylen, "%s: must be one of debug, info, notice, "
		    "warning, error, critical, alert, emergency", META_LOGLEVEL);
		return (-1);
	}
	if (env->progress.len != 0 && !jrpc_id_valid(m->p, env->progress)) {
		snprintf(why, whylen, "progressToken: must be a string or a "
		    "number");
		return (-1);
	}
	return (0);
}

ssize_t
meta_header_decode(const char *v, size_t len, char *out, size_t outlen)
{
	const unsigned char	*b;
	size_t			 hl = sizeof SENTINEL_HEAD - 1,
				 tl = sizeof SENTINEL_TAIL - 1, n, i, o = 0;
	int			 d[4], k, pad;

	if (len < hl + tl || memcmp(v, SENTINEL_HEAD, hl) != 0 ||
	    memcmp(v + len - tl, SENTINEL_TAIL, tl) != 0) {
		if (len > outlen)
			return (-1);
		if (len > 0)
			memcpy(out, v, len);
		return ((ssize_t)len);
	}
	b = (const unsigned char *)v + hl;
	n = len - hl - tl;
	if (n % 4 != 0)
		return (-1);
	for (i = 0; i < n; i += 4) {
		pad = 0;
		for (k = 0; k < 4; k++) {
			if (b[i + k] == '=' && i + 4 == n && k >= 2) {
				d[k] = 0;
				pad++;
			} else if (pad > 0 || (d[k] = b64_digit(b[i + k])) < 0)
				return (-1);
		}
		/* "x=" with a digit after padding was refused above. */
		if ((pad == 2 && (d[1] & 0x0f) != 0) ||
		    (pad == 1 && (d[2] & 0x03) != 0))
			return (-1);	/* not canonical */
		if (o + 3 - (size_t)pad > outlen)
			return (-1);
		out[o++] = (char)((d[0] << 2) | (d[1] >> 4));
		if (pad < 2)
			out[o++] = (char)(((d[1] & 0x0f) << 4) | (d[2] >> 2));
		if (pad < 1)
			out[o++] = (char)(((d[2] & 0x03) << 6) | d[3]);
	}
	if (!utf8_valid((const unsigned char *)out, o))
		return (-1);
	return ((ssize_t)o);
}

void
meta_header_encode(struct evbuffer *out, const char *v, size_t len)
{
	static const char	 digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char	*b = (const unsigned char *)v;
	size_t			 hl = sizeof SENTINEL_HEAD - 1,
				 tl = sizeof SENTINEL_TAIL - 1, i;
	int			 plain = len > 0;
	char			 q[4];

	for (i = 0; i < len && plain; i++) {
		if ((b[i] < 0x21 || b[i] > 0x7e) && b[i] != ' ' && b[i] != '\t')
			plain = 0;
	}
	if (plain && (b[0] == ' ' || b[0] == '\t' || b[len - 1] == ' ' ||
	    b[len - 1] == '\t'))
		plain = 0;
	if (plain && len >= hl + tl && memcmp(v, SENTINEL_HEAD, hl) == 0 &&
	    memcmp(v + len - tl, SENTINEL_TAIL, tl) == 0)
		plain = 0;
	if (plain || len == 0) {
		evbuffer_add(out, v, len);
		return;
	}
	evbuffer_add(out, SENTINEL_HEAD, hl);
	for (i = 0; i < len; i += 3) {
		q[0] = digits[b[i] >> 2];
		q[1] = digits[((b[i] & 0x03) << 4) |
		    (i + 1 < len ? b[i + 1] >> 4 : 0)];
		q[2] = i + 1 < len ? digits[((b[i + 1] & 0x0f) << 2) |
		    (i + 2 < len ? b[i + 2] >> 6 : 0)] : '=';
		q[3] = i + 2 < len ? digits[b[i + 2] & 0x3f] : '=';
		evbuffer_add(out, q, 4);
	}
	evbuffer_add(out, SENTINEL_TAIL, tl);
}

/* Does a header span equal a C string exactly? */
static int
span_is(const char *v, size_t len, const char *s)
{
	return (strlen(s) == len && memcmp(v, s, len) == 0);
}

/* Copy a header value into a log-safe C string. */
static void
quote(char *out, size_t outlen, const char *v, size_t len)
{
	size_t	i, n = 0;

	for (i = 0; i < len && n + 2 < outlen && i < 64; i++)
		out[n++] = v[i] >= 0x20 && v[i] < 0x7f ? v[i] : '?';
	out[n] = '\0';
}

/* Check the Mcp-Name header against the body. */
static int
meta_check_name(const struct meta_headers *h, const struct jrpc *m,
    char *why, size_t whylen)
{
	static char	 hv[META_NAME_MAX], bv[META_NAME_MAX];
	const char	*field;
	struct jspan	 body = { 0, 0 };
	ssize_t		 hn, bn = -1;
	char		 q[80];

	if ((field = mcp_methods[m->method_id].param) == NULL)
		return (0);
	if (jscan_member(m->p, m->params, field, &body) == 0 &&
	    jscan_type(m->p, body) == JT_STRING)
		bn = jscan_string(m->p, body, bv, sizeof bv);
	if (h->name == NULL) {
		if (body.len == 0 || jscan_type(m->p, body) != JT_STRING)
			return (0);	/* params are checked later */
		snprintf(why, whylen, "the body carries params.%s but the "
		    "required Mcp-Name header is absent", field);
		return (-1);
	}
	if ((hn = meta_header_decode(h->name, h->namelen, hv,
	    sizeof hv)) < 0) {
		quote(q, sizeof q, h->name, h->namelen);
		snprintf(why, whylen, "the Mcp-Name header \"%s\" carries an "
		    "invalid Base64 value", q);
		return (-1);
	}
	if (bn >= 0 && (hn != bn || memcmp(hv, bv, (size_t)hn) != 0)) {
		quote(q, sizeof q, h->name, h->namelen);
		snprintf(why, whylen, "the Mcp-Name header \"%s\" does not "
		    "match params.%s", q, field);
		return (-1);
	}
	if (bn < 0 && body.len != 0 && jscan_type(m->p, body) == JT_STRING) {
		snprintf(why, whylen, "params.%s is too long", field);
		return (-1);
	}
	return (0);
}

int
meta_check(const struct meta_headers *h, const struct jrpc *m,
    struct meta_envelope *env, int *status, char *why, size_t whylen)
{
	char	detail[256], q[80];

	*status = 400;
	if (meta_parse(m, env, detail, sizeof detail) != 0) {
		snprintf(why, whylen, "Invalid _meta envelope for protocol "
		    "revision %s: %s", MCP_VERSION_MODERN, detail);
		return (JRPC_INVALID_PARAMS);
	}
	if (h->version != NULL && (env->version_text[0] == '\0' ||
	    !span_is(h->version, h->versionlen, env->version_text))) {
		quote(q, sizeof q, h->version, h->versionlen);
		snprintf(why, whylen, "Header mismatch: MCP-Protocol-Version "
		    "\"%s\" does not match the body's protocol version", q);
		return (MCP_HEADER_MISMATCH);
	}
	if (h->method != NULL && !span_is(h->method, h->methodlen,
	    m->method_name)) {
		quote(q, sizeof q, h->method, h->methodlen);
		snprintf(why, whylen, "Header mismatch: Mcp-Method \"%s\" does "
		    "not match the body's method %s", q, m->method_name);
		return (MCP_HEADER_MISMATCH);
	}
	if (strcmp(env->version_text, MCP_VERSION_MODERN) != 0) {
		snprintf(why, whylen, "Unsupported protocol version");
		return (MCP_UNSUPPORTED_VERSION);
	}
	if (h->version == NULL) {
		snprintf(why, whylen, "Header mismatch: the required "
		    "MCP-Protocol-Version header is absent");
		return (MCP_HEADER_MISMATCH);
	}
	if (h->method == NULL) {
		snprintf(why, whylen, "Header mismatch: the required Mcp-Method "
		    "header is absent");
		return (MCP_HEADER_MISMATCH);
	}
	if (meta_check_name(h, m, detail, sizeof detail) != 0) {
		snprintf(why, whylen, "Header mismatch: %s", detail);
		return (MCP_HEADER_MISMATCH);
	}
	if (!mcp_method_is(m->method_id, MCPM_F_2026)) {
		*status = 404;
		snprintf(why, whylen, "Method not found: %s", m->method_name);
		return (JRPC_METHOD_NOT_FOUND);
	}
	*status = 200;
	return (0);
}

/*
 * Is a JSON string a header name of 1 to 64 tchar (RFC 9110, 5.6.2)?  Its
 * whole length counts: an escaped NUL does not cut it short.
 */
static int
param_name_valid(json_t *v)
{
	const char	*s = json_string_value(v);
	size_t		 n = json_string_length(v);

	return (s != NULL && n > 0 && n <= 64 && strspn(s,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	    "!#$%&'*+-.^_`|~") == n);
}

/* Is a JSON value the string s, whole (an escaped NUL does not cut it)? */
static int
json_text_is(json_t *v, const char *s)
{
	return (json_is_string(v) && json_string_length(v) == strlen(s) &&
	    memcmp(json_string_value(v), s, strlen(s)) == 0);
}

/* The walk of meta_tool_headers_valid: names seen, and the verdict. */
struct header_walk {
	const char	*names[64];
	size_t		 n;
	char		*why;
	size_t		 whylen;
};

/*
 * Check the x-mcp-header marks under v: on_chain is 1 when v is a
 * property's schema reached from the root by properties keys alone, 2
 * for the root itself (whose properties are), 0 otherwise.
 */
static int
header_walk(json_t *v, int on_chain, int depth, struct header_walk *w)
{
	json_t		*h, *props, *child, *type;
	const char	*key, *name;
	size_t		 i;

	if (depth > 32) {
		snprintf(w->why, w->whylen, "its inputSchema is nested more "
		    "than 32 deep");
		return (-1);
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, child)
			if (header_walk(child, 0, depth + 1, w) != 0)
				return (-1);
		return (0);
	}
	if (!json_is_object(v))
		return (0);
	if ((h = json_object_get(v, "x-mcp-header")) != NULL) {
		if (on_chain != 1) {
			snprintf(w->why, w->whylen, "an x-mcp-header not "
			    "reached by properties keys alone");
			return (-1);
		}
		if (!json_is_string(h) || !param_name_valid(h)) {
			snprintf(w->why, w->whylen, "an x-mcp-header that is "
			    "not 1 to 64 token characters");
			return (-1);
		}
		name = json_string_value(h);
		type = json_object_get(v, "type");
		if (!json_text_is(type, "string") &&
		    !json_text_is(type, "integer") &&
		    !json_text_is(type, "boolean")) {
			snprintf(w->why, w->whylen, "x-mcp-header %s marks a "
			    "property whose type is not string, integer or "
			    "boolean", name);
			return (-1);
		}
		for (i = 0; i < w->n; i++)
			if (strcasecmp(w->names[i], name) == 0) {
				snprintf(w->why, w->whylen, "x-mcp-header %s "
				    "appears twice (case aside)", name);
				return (-1);
			}
		if (w->n == sizeof w->names / sizeof w->names[0]) {
			snprintf(w->why, w->whylen, "more than %zu "
			    "x-mcp-header marks", w->n);
			return (-1);
		}
		w->names[w->n++] = name;
	}
	json_object_foreach(v, key, child) {
		if (strcmp(key, "properties") == 0 && json_is_object(child)) {
			props = child;
			json_object_foreach(props, name, child)
				if (header_walk(child, on_chain != 0,
				    depth + 1, w) != 0)
					return (-1);
		} else if (strcmp(key, "x-mcp-header") != 0 &&
		    header_walk(child, 0, depth + 1, w) != 0)
			return (-1);
	}
	return (0);
}

int
meta_tool_headers_valid(json_t *tool, char *why, size_t len)
{
	struct header_walk	 w;

	memset(&w, 0, sizeof w);
	w.why = why;
	w.whylen = len;
	return (header_walk(json_object_get(tool, "inputSchema"), 2, 0,
	    &w) == 0);
}

/* Walk a schema's properties for x-mcp-header marks. */
static int
param_walk(json_t *schema, const struct jrpc *m, struct jspan args,
    const char **path, int depth, void (*fn)(void *, const char *,
    const char *, size_t), void *arg)
{
	json_t		*props, *prop, *h;
	const char	*key, *keys[10];
	struct jspan	 v;
	char		*s;
	ssize_t		 sl;
	int		 i, n = 0;

	if (depth >= 8 || !json_is_object(props = json_object_get(schema,
	    "properties")))
		return (0);
	json_object_foreach(props, key, prop) {
		path[depth] = key;
		h = json_object_get(prop, "x-mcp-header");
		if (!json_is_string(h)) {
			n += param_walk(prop, m, args, path, depth + 1, fn, arg);
			continue;
		}
		if (!param_name_valid(h))
			continue;
		for (i = 0; i <= depth; i++)
			keys[i] = path[i];
		keys[depth + 1] = NULL;
		if (jscan_path(m->p, args, keys, &v) != 0)
			continue;
		switch (jscan_type(m->p, v)) {
		case JT_STRING:
			/* Decoded whole: a U+0000 in it is part of the value
			 * the header must match, not its end. */
			s = xmalloc(v.len + 1);
			if ((sl = jscan_string(m->p, v, s, v.len + 1)) < 0) {
				free(s);
				continue;
			}
			fn(arg, json_string_value(h), s, (size_t)sl);
			free(s);
			break;
		case JT_NUMBER:
			fn(arg, json_string_value(h), m->p + v.off, v.len);
			break;
		case JT_TRUE:
			fn(arg, json_string_value(h), "true", 4);
			break;
		case JT_FALSE:
			fn(arg, json_string_value(h), "false", 5);
			break;
		default:
			continue;	/* null, objects and arrays are not */
		}
		n++;
	}
	return (n);
}

int
meta_param_each(json_t *schema, const struct jrpc *m,
    void (*fn)(void *, const char *, const char *, size_t), void *arg)
{
	struct jspan	 args;
	const char	*path[10];

	if (m->params.len == 0 || jscan_member(m->p, m->params, "arguments",
	    &args) != 0 || jscan_type(m->p, args) != JT_OBJECT)
		return (0);
	return (param_walk(schema, m, args, path, 0, fn, arg));
}

int
meta_param_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	char	x[64], y[64], *e1, *e2;
	double	dx, dy;

	if (alen == blen && memcmp(a, b, alen) == 0)
		return (1);
	/* 42.0 and 42 are the same number. */
	if (alen == 0 || blen == 0 || alen >= sizeof x || blen >= sizeof y)
		return (0);
	memcpy(x, a, alen);
	x[alen] = '\0';
	memcpy(y, b, blen);
	y[blen] = '\0';
	dx = strtod(x, &e1);
	dy = strtod(y, &e2);
	return (*e1 == '\0' && *e2 == '\0' && e1 != x && e2 != y && dx == dy);
}

/* Does a key span begin with one of the prefixes (decoded)? */
static int
key_begins(const char *p, struct jspan key, const char *const *prefixes)
{
	char	small[256], *buf = small;
	ssize_t	n;
	size_t	pl;
	int	found = 0;

	/* A long key is decoded whole too: a prefix is a prefix. */
	if (key.len >= sizeof small)
		buf = xmalloc(key.len + 1);
	n = jscan_string(p, key, buf, key.len >= sizeof small ? key.len + 1 :
	    sizeof small);
	for (; n >= 0 && *prefixes != NULL && !found; prefixes++) {
		pl = strlen(*prefixes);
		found = (size_t)n >= pl && memcmp(buf, *prefixes, pl) == 0;
	}
	if (buf != small)
		free(buf);
	return (found);
}

int
meta_drop_members(const char *p, struct jspan obj,
    const char *const *prefix, struct jedit *edits, size_t max)
{
	struct jiter	it;
	struct jspan	key, value;
	size_t		prev_end = 0, run_start = 0, run_end = 0, n = 0;
	int		have_prev = 0, in_run = 0;

	if (jscan_object(p, obj, &it) != 0)
		return (0);
	for (;;) {
		int	more = jscan_next_member(&it, &key, &value);
		int	drop = more && key_begins(p, key, prefix);

		if (drop) {
			if (!in_run)
				run_start = key.off;
			in_run = 1;
			run_end = value.off + value.len;
			continue;
		}
		if (in_run) {
			if (n == max)
				return (-1);
			/* Delete the run with the comma that joins it. */
			if (have_prev) {
				edits[n].at.off = prev_end;
				edits[n].at.len = run_end - prev_end;
			} else if (more) {
				edits[n].at.off = run_start;
				edits[n].at.len = key.off - run_start;
			} else {
				edits[n].at.off = run_start;
				edits[n].at.len = run_end - run_start;
			}
			edits[n].text = "";
			edits[n++].len = 0;
			in_run = 0;
		}
		if (!more)
			break;
		have_prev = 1;
		prev_end = value.off + value.len;
	}
	return ((int)n);
}

/* SPDX-License-Identifier: ISC */
/*
 * The readers every part of the configuration parser shares: errors
 * reported at a setting's line, one setting's value checked for its type
 * and bounds (strings, integers, booleans, seconds, sizes, string
 * vectors), and strategy lists with their llm: and tool: targets.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "conf.h"
#include "conf_priv.h"
#include "xmalloc.h"

/* Report an error at a setting's line; always returns -1. */
int
conf_error(struct conf_ctx *ctx, const config_setting_t *s, const char *fmt,
    ...)
{
	va_list		 ap;
	char		 msg[512];
	const char	*file = ctx->file;
	int		 line = 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (s != NULL) {
		line = (int)config_setting_source_line(s);
		if (config_setting_source_file(s) != NULL)
			file = config_setting_source_file(s);
	}
	if (line > 0)
		snprintf(ctx->err, ctx->errlen, "%s:%d: %s", file, line, msg);
	else
		snprintf(ctx->err, ctx->errlen, "%s: %s", file, msg);
	return (-1);
}

/* Record where a setting was written, keeping its file's name once. */
struct conf_at
conf_where(struct conf_ctx *ctx, const config_setting_t *s)
{
	struct conf	*conf = ctx->conf;
	struct conf_at	 at = { 0, 0 };
	const char	*file;
	size_t		 i;

	at.line = (int)config_setting_source_line(s);
	file = config_setting_source_file(s);
	if (file == NULL || strcmp(file, ctx->file) == 0)
		return (at);
	for (i = 0; i < conf->nincluded; i++) {
		if (strcmp(conf->included[i], file) == 0) {
			at.file = (int)i + 1;
			return (at);
		}
	}
	conf->included = xreallocarray(conf->included, conf->nincluded + 1,
	    sizeof *conf->included);
	conf->included[conf->nincluded++] = xstrdup(file);
	at.file = (int)conf->nincluded;
	return (at);
}

const char *
conf_at_file(const struct conf *conf, struct conf_at at)
{
	if (at.file > 0 && (size_t)at.file <= conf->nincluded)
		return (conf->included[at.file - 1]);
	return (conf->file);
}

/* Report an error at a place; always returns -1. */
int
conf_error_at(struct conf_ctx *ctx, struct conf_at at, const char *fmt, ...)
{
	va_list		 ap;
	char		 msg[512];
	const char	*file = conf_at_file(ctx->conf, at);

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (at.line > 0)
		snprintf(ctx->err, ctx->errlen, "%s:%d: %s", file, at.line,
		    msg);
	else
		snprintf(ctx->err, ctx->errlen, "%s: %s", file, msg);
	return (-1);
}

const char *
conf_at_text(struct conf_ctx *ctx, struct conf_at there, struct conf_at here,
    char *buf, size_t len)
{
	if (there.file == here.file)
		snprintf(buf, len, "line %d", there.line);
	else
		snprintf(buf, len, "line %d of %s", there.line,
		    conf_at_file(ctx->conf, there));
	return (buf);
}

/* Free a NULL-terminated string vector. */
void
conf_strv_free(char **v)
{
	size_t	i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* Compare two string vectors. */
int
conf_strv_equal(char *const *a, char *const *b)
{
	size_t	i;

	if (a == NULL || b == NULL)
		return (a == b);
	for (i = 0; a[i] != NULL && b[i] != NULL; i++) {
		if (strcmp(a[i], b[i]) != 0)
			return (0);
	}
	return (a[i] == NULL && b[i] == NULL);
}

/*
 * Is s valid UTF-8?  Every string goes to the worker as JSON, where
 * jansson would refuse anything else and the setting would be lost.
 */
int
conf_valid_utf8(const char *s)
{
	json_t	*j;

	if ((j = json_string(s)) == NULL)
		return (0);
	json_decref(j);
	return (1);
}

/* Read a string setting. */
int
conf_get_string(struct conf_ctx *ctx, const config_setting_t *s, char **out,
    int allow_empty)
{
	const char	*v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return (conf_error(ctx, s, "%s must be a string",
		    config_setting_name(s)));
	v = config_setting_get_string(s);
	if (!allow_empty && *v == '\0')
		return (conf_error(ctx, s, "%s must not be empty",
		    config_setting_name(s)));
	if (!conf_valid_utf8(v))
		return (conf_error(ctx, s, "%s must be valid UTF-8",
		    config_setting_name(s)));
	free(*out);
	*out = xstrdup(v);
	return (0);
}

/* Read an integer setting within bounds. */
int
conf_get_int(struct conf_ctx *ctx, const config_setting_t *s, long long min,
    long long max, long long *out)
{
	long long	v;

	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
		v = config_setting_get_int(s);
		break;
	case CONFIG_TYPE_INT64:
		v = config_setting_get_int64(s);
		break;
	default:
		return (conf_error(ctx, s, "%s must be an integer",
		    config_setting_name(s)));
	}
	if (v < min || v > max)
		return (conf_error(ctx, s, "%s must be between %lld and %lld",
		    config_setting_name(s), min, max));
	*out = v;
	return (0);
}

/* Read a boolean setting. */
int
conf_get_bool(struct conf_ctx *ctx, const config_setting_t *s, int *out)
{
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return (conf_error(ctx, s, "%s must be true or false",
		    config_setting_name(s)));
	*out = config_setting_get_bool(s);
	return (0);
}

/* Read a duration in seconds. */
int
conf_get_seconds(struct conf_ctx *ctx, const config_setting_t *s, long long min,
    long long max, unsigned int *out)
{
	long long	v = 0;

	if (conf_get_int(ctx, s, min, max, &v) != 0)
		return (-1);
	*out = (unsigned int)v;
	return (0);
}

/*
 * Read a size in bytes: an integer, or a string with a k, M or G suffix.
 * A maximum past what size_t holds (a 32-bit build) is size_t's.
 */
int
conf_get_size(struct conf_ctx *ctx, const config_setting_t *s,
    unsigned long long min, unsigned long long max, size_t *out)
{
	const char		*v;
	char			*end;
	unsigned long long	 n, unit = 1;

	if (max > SIZE_MAX)
		max = SIZE_MAX;
	if (max > LLONG_MAX)
		max = LLONG_MAX;
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		long long	ll;

		if (conf_get_int(ctx, s, (long long)min, (long long)max, &ll) != 0)
			return (-1);
		*out = (size_t)ll;
		return (0);
	}
	v = config_setting_get_string(s);
	errno = 0;
	n = strtoull(v, &end, 10);
	if (end == v || errno != 0 || *v == '-')
		goto bad;
	switch (*end) {
	case 'k':
	case 'K':
		unit = 1024ULL;
		end++;
		break;
	case 'm':
	case 'M':
		unit = 1024ULL * 1024;
		end++;
		break;
	case 'g':
	case 'G':
		unit = 1024ULL * 1024 * 1024;
		end++;
		break;
	}
	if (*end != '\0')
		goto bad;
	/* Check before multiplying, so a huge number cannot wrap. */
	if (n > max / unit || n * unit < min)
		return (conf_error(ctx, s, "%s must be between %llu and %llu "
		    "bytes", config_setting_name(s), min, max));
	*out = (size_t)(n * unit);
	return (0);
bad:
	return (conf_error(ctx, s, "%s: bad size \"%s\" (bytes, or a number "
	    "with k, M or G)", config_setting_name(s), v));
}

/* Read an array or list of strings into a NULL-terminated vector. */
int
conf_get_strv(struct conf_ctx *ctx, const config_setting_t *s, int nonempty,
    char ***out)
{
	config_setting_t	*e;
	char			**v;
	int			  i, n;

	if (!config_setting_is_array(s) && !config_setting_is_list(s))
		return (conf_error(ctx, s, "%s must be an array of strings",
		    config_setting_name(s)));
	n = config_setting_length(s);
	if (nonempty && n == 0)
		return (conf_error(ctx, s, "%s must not be empty",
		    config_setting_name(s)));
	v = xcalloc((size_t)n + 1, sizeof *v);
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, (unsigned int)i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING) {
			conf_strv_free(v);
			return (conf_error(ctx, e, "%s must contain only "
			    "strings", config_setting_name(s)));
		}
		if (!conf_valid_utf8(config_setting_get_string(e))) {
			conf_strv_free(v);
			return (conf_error(ctx, e, "%s must be valid UTF-8",
			    config_setting_name(s)));
		}
		v[i] = xstrdup(config_setting_get_string(e));
	}
	conf_strv_free(*out);
	*out = v;
	return (0);
}

/* Look a name up in a table; -1 if absent. */
int
conf_lookup_name(const char *const *names, size_t n, const char *s)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (strcmp(names[i], s) == 0)
			return ((int)i);
	}
	return (-1);
}

/* Is s 1 to max characters of A-Z a-z 0-9 _ - ., from a letter or digit? */
int
conf_valid_name(const char *s, size_t max)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++) {
		if (i >= max || !((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    (i > 0 && (s[i] == '_' || s[i] == '-' || s[i] == '.'))))
			return (0);
	}
	return (i > 0);
}

/* Read the name of what (a server, an llm, a rate limit). */
int
conf_get_name(struct conf_ctx *ctx, const config_setting_t *s,
    const char *what, char **out)
{
	if (conf_get_string(ctx, s, out, 0) != 0)
		return (-1);
	if (!conf_valid_name(*out, CONF_NAME_MAX))
		return (conf_error(ctx, s, "%s name \"%s\" must be 1-%d "
		    "characters of A-Z a-z 0-9 _ - . starting with a letter "
		    "or digit", what, *out, CONF_NAME_MAX));
	return (0);
}

/*
 * Is s one secret reference and nothing else: ${env:NAME} or
 * ${file:/path}?  A secret written in the file itself would be printed
 * by -nv (and a key copied into every worker's configuration).
 */
int
conf_secret_reference(const char *s)
{
	size_t	len = strlen(s);

	if (strncmp(s, "${env:", 6) != 0 && strncmp(s, "${file:", 7) != 0)
		return (0);
	if (len < 8 || s[len - 1] != '}')
		return (0);
	return (strchr(s + 2, '$') == NULL && strchr(s, '}') == s + len - 1);
}

/*
 * Check a list of groups: a list (else the error shape, how it is
 * written) of at most max entries (else "more than max plural").  Its
 * length, or -1 (reported).
 */
int
conf_list_length(struct conf_ctx *ctx, const config_setting_t *list,
    const char *shape, int max, const char *plural)
{
	int	n;

	if (!config_setting_is_list(list))
		return (conf_error(ctx, list, "%s", shape));
	n = config_setting_length(list);
	if (n > max)
		return (conf_error(ctx, list, "more than %d %s", max, plural));
	return (n);
}

int
conf_strategies_always(const enum strategy *list, size_t n, int shared)
{
	return ((shared && conf_strategies_have(list, n, STRATEGY_DECLINE)) ||
	    conf_strategies_have(list, n, STRATEGY_LLM) ||
	    conf_strategies_have(list, n, STRATEGY_TOOL));
}

int
conf_strategies_have(const enum strategy *list, size_t n, enum strategy k)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (list[i] == k)
			return (1);
	}
	return (0);
}

void
conf_strategy_text(enum strategy k, const char *target, char *buf,
    size_t len)
{
	if (target != NULL)
		snprintf(buf, len, "%s:%s", conf_strategy_names[k], target);
	else
		snprintf(buf, len, "%s", conf_strategy_names[k]);
}

/* Is s a tool: target, "upstream/tool" with both parts? */
static int
valid_tool_target(const char *s)
{
	const char	*slash = strchr(s, '/');

	return (slash != NULL && slash != s && slash[1] != '\0');
}

/*
 * Read one strategy as written: "client", "defaults", "decline", and for
 * sampling "llm:NAME" and "tool:UPSTREAM/TOOL" (the part after the colon
 * goes to *target, a new string).  -1 if it is none of them.
 */
int
conf_strategy_parse(const char *v, int sampling, enum strategy *k,
    char **target)
{
	int	i;

	*target = NULL;
	if (sampling && strncmp(v, "llm:", 4) == 0 && v[4] != '\0') {
		*k = STRATEGY_LLM;
		*target = xstrdup(v + 4);
		return (0);
	}
	if (sampling && strncmp(v, "tool:", 5) == 0 &&
	    valid_tool_target(v + 5)) {
		*k = STRATEGY_TOOL;
		*target = xstrdup(v + 5);
		return (0);
	}
	i = conf_lookup_name(conf_strategy_names, 3, v);
	if (i < 0 || (sampling && i == STRATEGY_DEFAULTS))
		return (-1);
	*k = (enum strategy)i;
	return (0);
}

/* Free a sampling list's targets. */
void
conf_targets_free(char **targets, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		free(targets[i]);
		targets[i] = NULL;
	}
}

/* Copy a sampling list's targets. */
void
conf_targets_copy(char **to, char *const *from, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		to[i] = from[i] != NULL ? xstrdup(from[i]) : NULL;
}

/* Compare two optional strings. */
static int
target_equal(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (strcmp(a, b) == 0);
}

/*
 * Read a strategy list: [ "client", "defaults" ].  Sampling has no
 * defaults strategy, and llm: and tool: links (their targets go to
 * targets, which elicitation does not have).
 */
int
conf_get_strategies(struct conf_ctx *ctx, const config_setting_t *s,
    enum strategy *out, char **targets, size_t *n)
{
	config_setting_t	*e;
	const char		*v;
	enum strategy		 k;
	char			*target;
	int			 i, len;
	size_t			 j;

	if (!config_setting_is_array(s) && !config_setting_is_list(s))
		return (conf_error(ctx, s, "%s must be an array of strategies",
		    config_setting_name(s)));
	len = config_setting_length(s);
	if (len == 0 || len > CONF_MAX_STRATEGIES)
		return (conf_error(ctx, s, "%s must list 1 to %d strategies",
		    config_setting_name(s), CONF_MAX_STRATEGIES));
	if (targets != NULL)
		conf_targets_free(targets, *n);
	*n = 0;
	for (i = 0; i < len; i++) {
		e = config_setting_get_elem(s, (unsigned int)i);
		v = config_setting_get_string(e);
		if (v != NULL && strlen(v) > CONF_STRATEGY_MAX)
			return (conf_error(ctx, e, "%s: a strategy is at most "
			    "%d bytes", config_setting_name(s),
			    CONF_STRATEGY_MAX));
		if (v == NULL || conf_strategy_parse(v, targets != NULL, &k,
		    &target) != 0)
			return (conf_error(ctx, e, "%s: unknown strategy \"%s\" "
			    "(%s)", config_setting_name(s), v != NULL ? v : "?",
			    targets != NULL ? "client, llm:NAME, "
			    "tool:UPSTREAM/TOOL or decline" :
			    "client, defaults or decline"));
		for (j = 0; j < *n; j++) {
			if (out[j] == k && (targets == NULL ||
			    target_equal(targets[j], target))) {
				free(target);
				return (conf_error(ctx, e, "%s: %s is listed "
				    "twice", config_setting_name(s), v));
			}
		}
		if (targets != NULL)
			targets[*n] = target;
		out[(*n)++] = k;
	}
	return (0);
}

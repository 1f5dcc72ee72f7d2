/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "secret.h"
#include "xmalloc.h"

/*
 * Take an evbuffer's contents as a NUL-terminated string, and free it;
 * the buffer's copy is wiped, as the contents are a secret.
 */
static char *
take_string(struct evbuffer *out, size_t *outlen)
{
	size_t		 len = evbuffer_get_length(out);
	unsigned char	*p = evbuffer_pullup(out, -1);
	char		*res;

	res = xmalloc(len + 1);
	if (len > 0) {
		memcpy(res, p, len);
		explicit_bzero(p, len);
	}
	res[len] = '\0';
	evbuffer_free(out);
	if (outlen != NULL)
		*outlen = len;
	return (res);
}

/* Free a buffer whose contents are a secret, wiped. */
static void
free_wiped(struct evbuffer *out)
{
	size_t	len = evbuffer_get_length(out);

	if (len > 0)
		explicit_bzero(evbuffer_pullup(out, -1), len);
	evbuffer_free(out);
}

/* Expand ${env:NAME} and ${file:PATH} in a value; $$ is a $. */
char *
secret_expand(const char *tmpl, char *err, size_t errlen)
{
	struct evbuffer	*out = evbuffer_new();
	const char	*p = tmpl, *end, *v;
	char		*name, *res, buf[8192];
	size_t		 n;
	FILE		*f;

	while (*p != '\0') {
		if (p[0] == '$' && p[1] == '$') {
			evbuffer_add(out, "$", 1);
			p += 2;
			continue;
		}
		if (p[0] != '$' || p[1] != '{' ||
		    (end = strchr(p, '}')) == NULL) {
			evbuffer_add(out, p, 1);
			p++;
			continue;
		}
		name = xstrndup(p + 2, (size_t)(end - p - 2));
		if (strncmp(name, "env:", 4) == 0) {
			if ((v = getenv(name + 4)) == NULL) {
				snprintf(err, errlen, "environment "
				    "variable %s is not set", name + 4);
				goto fail;
			}
			evbuffer_add(out, v, strlen(v));
		} else if (strncmp(name, "file:", 5) == 0) {
			if ((f = fopen(name + 5, "r")) == NULL) {
				snprintf(err, errlen, "%s: %s",
				    name + 5, strerror(errno));
				goto fail;
			}
			/* The first line, without its end. */
			if (fgets(buf, sizeof buf, f) == NULL)
				buf[0] = '\0';
			fclose(f);
			n = strcspn(buf, "\r\n");
			if (n == sizeof buf - 1) {
				explicit_bzero(buf, sizeof buf);
				snprintf(err, errlen, "%s: the first line is "
				    "longer than %zu bytes", name + 5,
				    sizeof buf - 2);
				goto fail;
			}
			evbuffer_add(out, buf, n);
			explicit_bzero(buf, sizeof buf);
		} else {
			snprintf(err, errlen, "unknown ${%s} (use "
			    "${env:NAME} or ${file:PATH})", name);
			goto fail;
		}
		free(name);
		p = end + 1;
	}
	res = take_string(out, NULL);
	if (strpbrk(res, "\r\n") != NULL) {
		snprintf(err, errlen, "a value contains a line break");
		secret_free(res);
		return (NULL);
	}
	return (res);
fail:
	free(name);
	free_wiped(out);
	return (NULL);
}


char *
secret_expand_env(const char *tmpl)
{
	struct evbuffer	*out = evbuffer_new();
	const char	*p = tmpl, *end, *v;
	char		*name;

	while (*p != '\0') {
		if (p[0] == '$' && p[1] == '$') {
			evbuffer_add(out, "$$", 2);
			p += 2;
			continue;
		}
		if (p[0] != '$' || p[1] != '{' ||
		    (end = strchr(p, '}')) == NULL) {
			evbuffer_add(out, p, 1);
			p++;
			continue;
		}
		name = xstrndup(p + 2, (size_t)(end - p - 2));
		if (strncmp(name, "env:", 4) == 0 &&
		    (v = getenv(name + 4)) != NULL) {
			for (; *v != '\0'; v++)
				evbuffer_add(out, *v == '$' ? "$$" : v,
				    *v == '$' ? 2 : 1);
		} else
			evbuffer_add(out, p, (size_t)(end - p + 1));
		free(name);
		p = end + 1;
	}
	return (take_string(out, NULL));
}

char *
secret_mask(const char *p, size_t len, const char *secret, const char *mask,
    size_t *outlen)
{
	struct evbuffer	*out;
	const char	*at, *end = p + len;
	size_t		 slen = strlen(secret);

	if (slen == 0 || (at = memmem(p, len, secret, slen)) == NULL)
		return (NULL);
	out = evbuffer_new();
	do {
		evbuffer_add(out, p, (size_t)(at - p));
		evbuffer_add(out, mask, strlen(mask));
		p = at + slen;
	} while ((at = memmem(p, (size_t)(end - p), secret, slen)) != NULL);
	evbuffer_add(out, p, (size_t)(end - p));
	return (take_string(out, outlen));
}

void
secret_free(char *s)
{
	if (s != NULL) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void
secret_wipe_tree(json_t *v)
{
	const char	*key;
	json_t		*m;
	void		*tmp;
	size_t		 i;

	if (v == NULL || v->refcount != 1)
		return;
	if (json_is_string(v))
		explicit_bzero((char *)json_string_value(v),
		    json_string_length(v));
	else if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v); i++)
			secret_wipe_tree(json_array_get(v, i));
	} else if (json_is_object(v)) {
		json_object_foreach_safe(v, tmp, key, m)
			secret_wipe_tree(m);
	}
}

void
secret_wipe_json(json_t *o)
{
	const char	*k;
	json_t		*v;

	json_object_foreach(o, k, v) {
		if (json_is_string(v))
			explicit_bzero((char *)json_string_value(v),
			    json_string_length(v));
	}
}

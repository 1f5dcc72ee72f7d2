/*
 * Configured request headers for remote upstreams.  A value may name a
 * secret instead of holding it: ${env:NAME} is an environment variable of
 * the daemon, ${file:PATH} the first line of a file (read when the worker
 * starts, so a rotated token is picked up on restart); $$ is a dollar.
 * Values are never logged.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/buffer.h>

#include "log.h"
#include "worker.h"
#include "xmalloc.h"

/* Expand ${env:NAME} and ${file:PATH} in a header value; $$ is a $. */
static char *
header_expand(const char *tmpl, char *err, size_t errlen)
{
	struct evbuffer	*out = evbuffer_new();
	const char	*p = tmpl, *end, *v;
	char		*name, *res, buf[8192];
	size_t		 len, n;
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
				snprintf(err, errlen, "header: environment "
				    "variable %s is not set", name + 4);
				goto fail;
			}
			evbuffer_add(out, v, strlen(v));
		} else if (strncmp(name, "file:", 5) == 0) {
			if ((f = fopen(name + 5, "r")) == NULL) {
				snprintf(err, errlen, "header: %s: %s",
				    name + 5, strerror(errno));
				goto fail;
			}
			n = fread(buf, 1, sizeof buf, f);
			fclose(f);
			while (n > 0 && (buf[n - 1] == '\n' ||
			    buf[n - 1] == '\r'))
				n--;
			evbuffer_add(out, buf, n);
		} else {
			snprintf(err, errlen, "header: unknown ${%s} (use "
			    "${env:NAME} or ${file:PATH})", name);
			goto fail;
		}
		free(name);
		p = end + 1;
	}
	len = evbuffer_get_length(out);
	res = xmalloc(len + 1);
	evbuffer_remove(out, res, len);
	res[len] = '\0';
	evbuffer_free(out);
	if (strpbrk(res, "\r\n") != NULL) {
		snprintf(err, errlen, "header: a value contains a line break");
		free(res);
		return (NULL);
	}
	return (res);
fail:
	free(name);
	evbuffer_free(out);
	return (NULL);
}

/* Expand every configured header into a curl list. */
int
worker_headers(struct curl_slist **out)
{
	char	 err[512], *v;
	size_t	 i;

	*out = NULL;
	for (i = 0; sc->headers != NULL && sc->headers[i] != NULL; i++) {
		if ((v = header_expand(sc->headers[i], err, sizeof err)) ==
		    NULL) {
			log_warnx("%s", err);
			worker_status("error", err);
			curl_slist_free_all(*out);
			*out = NULL;
			return (-1);
		}
		*out = curl_slist_append(*out, v);
		free(v);
	}
	return (0);
}

/* Copy a header list. */
struct curl_slist *
worker_headers_dup(const struct curl_slist *in)
{
	struct curl_slist	*out = NULL;

	for (; in != NULL; in = in->next)
		out = curl_slist_append(out, in->data);
	return (out);
}

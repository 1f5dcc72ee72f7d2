/* SPDX-License-Identifier: ISC */
/*
 * Who may do what.  A session admitted by a named client's token has that
 * client's rights (clients = ( ... ) in mcp-supervisord.conf(5)): whether
 * it may register tools, and which tools, prompts and resources it sees
 * and may use, by glob patterns on their exposed names and URIs.  What it
 * may not use is absent from its lists and unknown to its calls.  An
 * unnamed session (auth_tokens, the lock file's token, or no token) has
 * every right.
 *
 * A resource URI is matched in its normal form (common/uri.c), and deny
 * patterns also see its path decoded as a file server reads it, so that
 * no spelling of a URI ("..", "%2e", "%2F", "%73ecret", "FILE:") puts it
 * outside the patterns that name it.  A URI that cannot be normalised is
 * refused.  The upstream receives the URI as the client wrote it: a URI
 * is the resource's identity, which answers, subscriptions and updates
 * carry back, and an upstream that looks resources up by their listed
 * URI would not know a rewritten one; what is refused is what a reader
 * could resolve otherwise than its normal form says.
 *
 * A session of a virtual endpoint (vendpoint.c) sees only what both its
 * endpoint selects and its client may see: the endpoint is checked
 * first, the same way, so it can narrow a client's rights, never widen.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "supervisor.h"
#include "uri.h"
#include "xmalloc.h"

/* The configuration of a session's client; NULL if it is unnamed. */
static const struct client_conf *
acl_client(const struct session *s, int *unknown)
{
	size_t	i;

	*unknown = 0;
	if (s->client_name == NULL)
		return (NULL);
	for (i = 0; i < conf->nclients; i++) {
		if (strcmp(conf->clients[i].name, s->client_name) == 0)
			return (&conf->clients[i]);
	}
	/* Removed by a reload: it has no rights left. */
	*unknown = 1;
	return (NULL);
}

/* Does a name match one of the patterns? */
static int
acl_match(char *const *patterns, const char *name)
{
	size_t	i;

	for (i = 0; patterns[i] != NULL; i++) {
		if (fnmatch(patterns[i], name, 0) == 0)
			return (1);
	}
	return (0);
}

int
acl_allows(const struct session *s, enum catalog_kind kind, const char *name)
{
	const struct client_conf	*cl;
	int				 unknown;

	/* An endpoint narrows what the client's rules allow. */
	if (s->vep != NULL && !vendpoint_selects(s->vep, kind, name))
		return (0);
	if ((cl = acl_client(s, &unknown)) == NULL)
		return (!unknown);
	if (cl->allow != NULL && !acl_match(cl->allow, name))
		return (0);
	return (cl->deny == NULL || !acl_match(cl->deny, name));
}

int
acl_allows_uri(const struct session *s, const char *uri, const char **why)
{
	const struct client_conf	*cl;
	size_t				 len;
	char				*norm;
	int				 unknown, r;

	if (s->vep != NULL && (r = vendpoint_selects_uri(s->vep, uri,
	    why)) != 1)
		return (r);
	if ((cl = acl_client(s, &unknown)) == NULL)
		return (!unknown);
	if (cl->allow == NULL && cl->deny == NULL)
		return (1);
	len = strlen(uri);
	norm = xmalloc(len + 1);
	/* Decoded, it is refused whenever the plain form is, and more. */
	if (uri_normalize(uri, len, URI_DECODE, norm, len + 1, why) != 0) {
		free(norm);
		return (-1);
	}
	r = cl->deny == NULL || !acl_match(cl->deny, norm);
	if (r && uri_normalize(uri, len, 0, norm, len + 1, why) != 0)
		r = -1;
	if (r == 1)
		r = (cl->allow == NULL || acl_match(cl->allow, norm)) &&
		    (cl->deny == NULL || !acl_match(cl->deny, norm));
	free(norm);
	return (r);
}

int
acl_filtered(const struct session *s)
{
	const struct client_conf	*cl;
	int				 unknown;

	if (s->vep != NULL)
		return (1);
	if ((cl = acl_client(s, &unknown)) == NULL)
		return (unknown);
	return (cl->allow != NULL || cl->deny != NULL);
}

int
acl_hears_uri(const struct session *s, const struct upstream *up,
    const char *uri)
{
	const char	*why;

	if (!oauth_may_hear(s, up))
		return (0);
	if (!acl_filtered(s) || acl_allows_uri(s, uri, &why) == 1)
		return (1);
	log_debug("session %.8s: update of %s not sent: its client may no "
	    "longer read it", s->id, uri);
	return (0);
}

int
acl_may_register(const struct session *s)
{
	const struct client_conf	*cl;
	int				 unknown;

	if ((cl = acl_client(s, &unknown)) == NULL)
		return (!unknown);
	return (cl->may_register);
}

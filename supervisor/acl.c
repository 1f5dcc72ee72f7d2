/* SPDX-License-Identifier: ISC */
/*
 * Who may do what.  A session admitted by a named client's token has that
 * client's rights (clients = ( ... ) in mcp-supervisord.conf(5)): whether
 * it may register tools, and which tools, prompts and resources it sees
 * and may use, by glob patterns on their exposed names and URIs.  What it
 * may not use is absent from its lists and unknown to its calls.  An
 * unnamed session (auth_tokens, the lock file's token, or no token) has
 * every right.
 */
#include "config.h"

#include <fnmatch.h>
#include <string.h>

#include "supervisor.h"

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
acl_allows(const struct session *s, const char *name)
{
	const struct client_conf	*cl;
	int				 unknown;

	if ((cl = acl_client(s, &unknown)) == NULL)
		return (!unknown);
	if (cl->allow != NULL && !acl_match(cl->allow, name))
		return (0);
	return (cl->deny == NULL || !acl_match(cl->deny, name));
}

int
acl_filtered(const struct session *s)
{
	const struct client_conf	*cl;
	int				 unknown;

	if ((cl = acl_client(s, &unknown)) == NULL)
		return (unknown);
	return (cl->allow != NULL || cl->deny != NULL);
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

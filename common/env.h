/* SPDX-License-Identifier: ISC */
/*
 * The environments of the processes the daemon starts.  The daemon's
 * environment is where ${env:NAME} secrets come from, so neither a worker
 * nor an upstream inherits it: each gets the few variables that say where
 * things are and which locale to use (env_base), and what it needs
 * besides by name.
 */
#ifndef MCPS_ENV_H
#define MCPS_ENV_H

#include <stddef.h>

/*
 * Passed to every worker and stdio upstream when the daemon has them
 * ("LC_*" stands for every name beginning with "LC_").
 */
extern const char *const env_base[];
/* Also to the workers of remote upstreams and LLM providers: libcurl's
 * proxies and OpenSSL's certificate paths. */
extern const char *const env_net[];

/*
 * In a child between fork and execve: every signal's disposition back to
 * its default and none blocked, whatever the daemon was started with
 * (nohup ignores SIGHUP, a shell's & SIGINT and SIGQUIT), which execve
 * would pass on.  Async-signal-safe.
 */
void	env_child_signals(void);

/* Is s a variable name: letters, digits and _, not beginning with a digit? */
int	env_valid_name(const char *s);
/* Does a "NAME=value" entry's name match one of names (NULL-terminated)? */
int	env_match(const char *entry, const char *const *names);

/* A NULL-terminated vector of "NAME=value" entries, borrowed. */
struct envv {
	char	**v;
	size_t	  n;
	size_t	  cap;
};

void	envv_init(struct envv *);
/* Add the entries of from whose names match names. */
void	envv_pick(struct envv *, char *const *from, const char *const *names);
/* Set an entry, replacing the one of the same name if there is one. */
void	envv_set(struct envv *, char *entry);
/* Free the vector (not the entries). */
void	envv_free(struct envv *);

#endif

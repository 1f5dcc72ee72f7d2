/* SPDX-License-Identifier: ISC */
/* The environments of the processes the daemon starts (env.h). */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "xmalloc.h"

/*
 * Where things are (the command's PATH, a home, a temporary directory,
 * the XDG directories and npm's cache, which the packaged service sets
 * for npx), who runs, the locale and time zone, and the sanitizers'
 * settings of a test build.  None of them is a secret.
 */
const char *const env_base[] = {
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_*", "TZ",
	"TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
	"XDG_STATE_HOME", "XDG_RUNTIME_DIR", "npm_config_cache",
	"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", NULL
};

const char *const env_net[] = {
	"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
	"no_proxy", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", NULL
};

void
env_child_signals(void)
{
	struct sigaction	sa;
	sigset_t		none;
	int			sig;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	/* SIGKILL and SIGSTOP refuse it; nothing else is worth a check. */
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int
env_valid_name(const char *s)
{
	size_t	i;

	if (*s == '\0' || (*s >= '0' && *s <= '9'))
		return (0);
	for (i = 0; s[i] != '\0'; i++) {
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return (0);
	}
	return (1);
}

int
env_match(const char *entry, const char *const *names)
{
	size_t	len = strcspn(entry, "="), nlen, i;

	if (entry[len] != '=')
		return (0);
	for (i = 0; names[i] != NULL; i++) {
		nlen = strlen(names[i]);
		if (nlen > 0 && names[i][nlen - 1] == '*') {
			if (len >= nlen - 1 &&
			    strncmp(entry, names[i], nlen - 1) == 0)
				return (1);
		} else if (nlen == len && strncmp(entry, names[i], len) == 0)
			return (1);
	}
	return (0);
}

void
envv_init(struct envv *e)
{
	e->cap = 16;
	e->n = 0;
	e->v = xcalloc(e->cap, sizeof *e->v);
}

/* Append an entry, keeping the vector NULL-terminated. */
static void
envv_add(struct envv *e, char *entry)
{
	if (e->n + 1 >= e->cap) {
		e->v = xreallocarray(e->v, e->cap * 2, sizeof *e->v);
		e->cap *= 2;
	}
	e->v[e->n++] = entry;
	e->v[e->n] = NULL;
}

void
envv_pick(struct envv *e, char *const *from, const char *const *names)
{
	size_t	i;

	for (i = 0; from[i] != NULL; i++) {
		if (env_match(from[i], names))
			envv_set(e, from[i]);
	}
}

void
envv_set(struct envv *e, char *entry)
{
	size_t	len = strcspn(entry, "=") + 1, i;

	for (i = 0; i < e->n; i++) {
		if (strncmp(e->v[i], entry, len) == 0) {
			e->v[i] = entry;
			return;
		}
	}
	envv_add(e, entry);
}

void
envv_free(struct envv *e)
{
	free(e->v);
	e->v = NULL;
	e->n = e->cap = 0;
}

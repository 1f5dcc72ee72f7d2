/* SPDX-License-Identifier: ISC */
/*
 * The supervisor's process-wide state and the small helpers every part of
 * it shares.  Apart from supervisord.c (main, signals, fill_random) so
 * that an in-process test harness can link the real ones.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "supervisor.h"

#ifndef WORKER_PATH
#define WORKER_PATH "/usr/libexec/mcp-supervisor/mcp-worker"
#endif

struct event_base	*base;
struct conf		*conf;
const char		*worker_path = WORKER_PATH;
char			*stdio_worker_path;
char			 listen_bound[128];
char			 metrics_bound[128];
const char		*control_arg;
int			 listen_scope;
time_t			 daemon_started;
void			(*daemon_exit)(const char *);

const char *const mcp_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", NULL
};

/* Is a protocol version one the gateway speaks? */
int
mcp_version_supported(const char *v)
{
	size_t	i;

	for (i = 0; mcp_versions[i] != NULL; i++) {
		if (strcmp(mcp_versions[i], v) == 0)
			return (1);
	}
	return (0);
}

/* Return monotonic milliseconds. */
int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* SPDX-License-Identifier: ISC */
/* Allocation that cannot fail: out of memory is fatal. */
#ifndef MCPS_XMALLOC_H
#define MCPS_XMALLOC_H

#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Set malloc up for a daemon that passes large messages (call first). */
void	 malloc_tune(void);
/* Make libevent and jansson allocate with xmalloc: call first in main,
 * before any of their functions. */
void	 xmalloc_libraries(void);

#endif

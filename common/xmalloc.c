/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

void *
xmalloc(size_t size)
{
	void	*p;

	if (size == 0)
		size = 1;
	if ((p = malloc(size)) == NULL)
		fatal("xmalloc %zu", size);
	return (p);
}

void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if (n == 0 || size == 0)
		n = size = 1;
	if ((p = calloc(n, size)) == NULL)
		fatal("xcalloc %zu*%zu", n, size);
	return (p);
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	void	*p;

	if (size != 0 && n > SIZE_MAX / size) {
		errno = ENOMEM;
		fatal("xreallocarray %zu*%zu", n, size);
	}
	if ((p = realloc(old, n * size == 0 ? 1 : n * size)) == NULL)
		fatal("xreallocarray %zu*%zu", n, size);
	return (p);
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("xstrdup");
	return (p);
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	if ((p = strndup(s, n)) == NULL)
		fatal("xstrndup");
	return (p);
}

int
xasprintf(char **out, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vasprintf(out, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("xasprintf");
	return (n);
}

/*
 * Buffers of a megabyte or more are mapped on their own, so a large
 * message's memory goes back to the system when it is freed, and growing
 * one with realloc remaps it instead of copying.  The heap is not trimmed
 * below 4 MiB of free space at its top: trimming after every message (the
 * default threshold, 128 KiB, is what each message's read buffers take)
 * costs two brk calls, a page fault and a TLB shootdown across CPUs per
 * message.
 */
void
malloc_tune(void)
{
	mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
	mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
}

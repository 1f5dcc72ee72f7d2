/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

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

/* libevent's realloc, which has no count. */
static void *
xrealloc_event(void *old, size_t size)
{
	return (xreallocarray(old, 1, size));
}

/*
 * libevent (event_set_mem_functions) and jansson (json_set_alloc_funcs)
 * allocate through xmalloc from now on, so running out of memory is fatal
 * in one place: their constructors (evbuffer_new, event_new, json_object,
 * ...) then return NULL only for a mistake in their arguments, never for
 * want of memory.  Neither library asks for zero bytes (both return NULL
 * for that themselves), and both free with free.
 */
void
xmalloc_libraries(void)
{
	event_set_mem_functions(xmalloc, xrealloc_event, free);
	json_set_alloc_funcs(xmalloc, free);
}

/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's diagnostics, on standard error since standard output
 * carries the protocol, and formatting into a new string.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

/* Log a message to stderr. */
void __attribute__((format(printf, 1, 2)))
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", DEMO_NAME);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fflush(stderr);
}

/* Log a message and the current errno to stderr. */
void __attribute__((format(printf, 1, 2)))
log_warn(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", DEMO_NAME);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, ": %s\n", strerror(saved));
	va_end(ap);
	fflush(stderr);
}

/* Log a message and exit. */
void __attribute__((format(printf, 1, 2), noreturn))
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", DEMO_NAME);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* Format into a new string. The caller frees it. */
char * __attribute__((format(printf, 1, 0)))
xvasprintf(const char *fmt, va_list ap)
{
	va_list	 ap2;
	char	*s;
	int	 n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return (NULL);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return (s);
}

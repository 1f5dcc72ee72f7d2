#include "config.h"

#include <errno.h>
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

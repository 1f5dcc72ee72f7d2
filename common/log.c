#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

static const char	*log_name = "mcp-supervisor";
static char		 log_tag[128];
static int		 log_foreground = 1;
static int		 log_verbose;

/* Set up logging for a program. */
void
log_init(const char *name, int foreground, int verbose)
{
	log_name = name;
	log_foreground = foreground;
	log_verbose = verbose;
	log_tag[0] = '\0';
	if (!foreground)
		openlog(name, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/* Change the tag logged before each message. */
void
log_settag(const char *tag)
{
	snprintf(log_tag, sizeof log_tag, "%s", tag);
}

int
log_getforeground(void)
{
	return (log_foreground);
}

int
log_getverbose(void)
{
	return (log_verbose);
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

/* Write one log line at a priority, with an optional errno text. */
static void
log_vwrite(int pri, int err, const char *fmt, va_list ap)
{
	char		 msg[2048];
	const char	*level;
	struct timespec	 ts;
	struct tm	 tm;
	char		 when[32];
	int		 n;

	n = vsnprintf(msg, sizeof msg, fmt, ap);
	if (n < 0)
		return;
	if (err != 0 && (size_t)n < sizeof msg)
		snprintf(msg + n, sizeof msg - n, ": %s", strerror(err));

	if (!log_foreground) {
		if (log_tag[0] != '\0')
			syslog(pri, "%s: %s", log_tag, msg);
		else
			syslog(pri, "%s", msg);
		return;
	}
	switch (pri) {
	case LOG_CRIT:
		level = "fatal";
		break;
	case LOG_WARNING:
		level = "warn";
		break;
	case LOG_DEBUG:
		level = "debug";
		break;
	default:
		level = "info";
		break;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof when, "%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ld %s%s%s %s: %s\n", when, ts.tv_nsec / 1000000L,
	    log_name, log_tag[0] != '\0' ? " " : "", log_tag, level, msg);
}

void
log_warn(const char *fmt, ...)
{
	va_list	ap;
	int	err = errno;

	va_start(ap, fmt);
	log_vwrite(LOG_WARNING, err, fmt, ap);
	va_end(ap);
	errno = err;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_WARNING, 0, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_INFO, 0, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	log_vwrite(LOG_DEBUG, 0, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	ap;
	int	err = errno;

	va_start(ap, fmt);
	log_vwrite(LOG_CRIT, err, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_CRIT, 0, fmt, ap);
	va_end(ap);
	exit(1);
}

/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/*
 * Repeated lines are limited per call site (its format string): at most
 * LOG_SITE_LINES in LOG_SITE_WINDOW seconds, then a count of those
 * suppressed, so that a peer or an upstream spewing errors cannot fill the
 * disk.  Debug lines (asked for with -v) are not limited.
 */
#define LOG_SITES		256
#define LOG_SITE_PROBES		8
#define LOG_SITE_LINES		100
#define LOG_SITE_WINDOW		10	/* seconds */

struct log_site {
	const char	*fmt;		/* the call site; NULL: free slot */
	time_t		 start;		/* monotonic seconds */
	unsigned int	 lines;		/* logged in this window */
	unsigned int	 suppressed;	/* and not logged */
};

static struct log_site	 log_sites[LOG_SITES];
static const char	*log_name = "mcp-supervisor";
static char		 log_tag[128];
static int		 log_foreground = 1;
static int		 log_journal;	/* stderr is the journal's stream */
static int		 log_verbose;

/*
 * Is stderr the stream systemd connected to the journal?  It says so in
 * $JOURNAL_STREAM ("device:inode"); a process whose stderr was redirected
 * since (a child writing to a pipe) inherits the variable but not the
 * stream, hence the comparison.
 */
static int
log_stderr_is_journal(void)
{
	const char		*v = getenv("JOURNAL_STREAM");
	struct stat		 st;
	unsigned long long	 dev, ino;
	char			 end;

	if (v == NULL || sscanf(v, "%llu:%llu%c", &dev, &ino, &end) != 2)
		return (0);
	if (fstat(STDERR_FILENO, &st) != 0)
		return (0);
	return ((unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino);
}

/* Set up logging for a program. */
void
log_init(const char *name, int foreground, int verbose)
{
	log_name = name;
	log_foreground = foreground;
	log_verbose = verbose;
	log_tag[0] = '\0';
	log_journal = foreground && log_stderr_is_journal();
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

static void	log_line(int, const char *);
static void	log_sanitize(char *);

/* Monotonic seconds. */
static time_t
log_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec);
}

/* Find or make the slot of a call site; NULL if the table is full. */
static struct log_site *
log_site(const char *fmt)
{
	struct log_site	*ls;
	size_t		 h, i;

	h = (size_t)(((uintptr_t)fmt >> 3) * 2654435761u);
	for (i = 0; i < LOG_SITE_PROBES; i++) {
		ls = &log_sites[(h + i) % LOG_SITES];
		if (ls->fmt == fmt)
			return (ls);
		if (ls->fmt == NULL) {
			ls->fmt = fmt;
			ls->start = log_now();
			return (ls);
		}
	}
	return (NULL);
}

/* Report what a site suppressed in its last window. */
static void
log_site_report(struct log_site *ls, int pri)
{
	char	msg[256];

	if (ls->suppressed == 0)
		return;
	snprintf(msg, sizeof msg, "%u more lines like \"%.60s\" suppressed "
	    "in %d s", ls->suppressed, ls->fmt, LOG_SITE_WINDOW);
	ls->suppressed = 0;
	log_line(pri, msg);
}

/* May a line from this call site be written now? */
static int
log_site_allows(const char *fmt, int pri)
{
	struct log_site	*ls;
	time_t		 now;

	if ((ls = log_site(fmt)) == NULL)
		return (1);
	now = log_now();
	if (now - ls->start >= LOG_SITE_WINDOW) {
		log_site_report(ls, pri);
		ls->start = now;
		ls->lines = 0;
	}
	if (ls->lines >= LOG_SITE_LINES) {
		ls->suppressed++;
		return (0);
	}
	ls->lines++;
	return (1);
}

void
log_flush_suppressed(void)
{
	size_t	i;
	time_t	now = log_now();

	for (i = 0; i < LOG_SITES; i++) {
		if (log_sites[i].fmt != NULL && log_sites[i].suppressed > 0 &&
		    now - log_sites[i].start >= LOG_SITE_WINDOW) {
			log_site_report(&log_sites[i], LOG_WARNING);
			log_sites[i].start = now;
			log_sites[i].lines = 0;
		}
	}
}

/* Write one log line at a priority, with an optional errno text. */
static void
log_vwrite(int pri, int err, const char *fmt, va_list ap)
{
	char		 msg[2048];
	int		 n;

	if ((pri == LOG_INFO || pri == LOG_WARNING) &&
	    !log_site_allows(fmt, pri))
		return;
	n = vsnprintf(msg, sizeof msg, fmt, ap);
	if (n < 0)
		return;
	if (err != 0 && (size_t)n < sizeof msg)
		snprintf(msg + n, sizeof msg - n, ": %s", strerror(err));
	log_sanitize(msg);
	log_line(pri, msg);
}

/*
 * One line stays one line: a control character from a peer (a token's
 * subject, an upstream's stderr) would forge another, so each becomes '?'.
 */
static void
log_sanitize(char *msg)
{
	unsigned char	*p;

	for (p = (unsigned char *)msg; *p != '\0'; p++) {
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			*p = '?';
	}
}

/* Write a formatted line. */
static void
log_line(int pri, const char *msg)
{
	const char	*level;
	struct timespec	 ts;
	struct tm	 tm;
	char		 when[32];

	if (!log_foreground) {
		if (log_tag[0] != '\0')
			syslog(pri, "%s: %s", log_tag, msg);
		else
			syslog(pri, "%s", msg);
		return;
	}
	/* The journal stamps lines itself and reads priorities as <N>. */
	if (log_journal) {
		fprintf(stderr, "<%d>%s%s%s\n", pri, log_tag, log_tag[0] != '\0' ?
		    ": " : "", msg);
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
	case LOG_NOTICE:
		level = "audit";
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
log_libevent(int severity, const char *msg)
{
	/* libevent's severities: 0 debug, 1 message, 2 warning, 3 error. */
	if (severity <= 0)
		log_debug("libevent: %s", msg);
	else if (severity == 1)
		log_info("libevent: %s", msg);
	else
		log_warnx("libevent: %s", msg);
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
log_audit(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_NOTICE, 0, fmt, ap);
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

/* SPDX-License-Identifier: ISC */
/* Logging: stderr when in the foreground, syslog otherwise. */
#ifndef MCPS_LOG_H
#define MCPS_LOG_H

#include <stdarg.h>

/* Set up logging for a program; name is borrowed and must outlive logging. */
void	log_init(const char *name, int foreground, int verbose);
/* Change the tag logged before each message (e.g. "worker demo"). */
void	log_settag(const char *tag);
int	log_getverbose(void);
int	log_getforeground(void);
void	log_setverbose(int verbose);

/*
 * Info and warning lines are limited per call site (100 in 10 s); report
 * the count suppressed at sites that have been quiet since (call it from
 * a periodic timer).
 */
void	log_flush_suppressed(void);
/* Log a line of libevent's (give it to event_set_log_callback), so that
 * its warnings are limited like ours. */
void	log_libevent(int severity, const char *msg);

/* log_warn and fatal append strerror(errno); the x variants do not. */
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
/* An audit line: always written (never limited), at notice priority. */
void	log_audit(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif

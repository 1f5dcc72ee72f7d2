/* SPDX-License-Identifier: ISC */
/*
 * mcpctl: the control CLI (mcpctl.c, ctl.c for the socket, status.c and
 * sessions.c for printing) and the stdio bridge (connect.c).
 */
#ifndef MCPS_MCPCTL_H
#define MCPS_MCPCTL_H

#include <stddef.h>

#include <jansson.h>

/* Exit statuses (mcpctl(8), EXIT STATUS). */
#define MCPCTL_EXIT_OK		0
#define MCPCTL_EXIT_FAILED	1	/* refused, failed, or no daemon */
#define MCPCTL_EXIT_USAGE	2
#define MCPCTL_EXIT_UNHEALTHY	3	/* check, status: something required
					   is not healthy */

/* ctl.c: send a command and return the reply; exits 1 without one. */
json_t		*ctl_command(const char *path, json_t *req);

/* status.c */
void		 fmt_duration(char *, size_t, long long seconds);
/* A time (seconds since the epoch) as UTC, or "-" for none. */
void		 fmt_time(char *, size_t, long long t);
long long	 json_int_or(json_t *, const char *key);
const char	*json_str_or(json_t *, const char *key, const char *def);
void		 print_status(json_t *);
/* 1 if everything required is healthy. */
int		 print_check(json_t *);
void		 print_reload(json_t *);
void		 print_drain(json_t *);
void		 print_refresh(json_t *);

/* sessions.c */
/* A peer's string made printable: control characters as \xNN, cut at
 * max bytes. */
void		 clean(char *out, size_t len, const char *s, size_t max);
void		 print_sessions(json_t *);
void		 print_tools(json_t *, const char *name);

/* mcpctl.c */
/* Read a count (seconds for drain, sessions or pins to list); -1 if it is
 * not one. */
long long	 count_arg(const char *);

/* pins.c: mcpctl tools pins [n], diff, approve and --; NULL or 0 if the
 * command line is not one of them. */
json_t		*pins_request(int argc, char **argv);
int		 pins_print(json_t *, int argc, char **argv);

/* login.c: mcpctl login NAME [--code RESPONSE] (argv[0] is "login"),
 * mcpctl tokens [revoke NAME]. */
int		 mcpctl_login(const char *path, int argc, char **argv, int raw);
json_t		*tokens_request(int argc, char **argv);
void		 print_tokens(json_t *, int argc, char **argv);

/* mcpctl connect [-T token-file] [url]: argv[0] is "connect". */
int		 mcpctl_connect(int argc, char **argv);

#endif

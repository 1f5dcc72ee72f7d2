/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server -- a small Model Context Protocol server on stdio.
 *
 * It speaks newline-delimited JSON-RPC 2.0 on standard input and output,
 * one message per line, and writes diagnostics to standard error only.
 * Everything runs on one libevent loop, so any number of requests (up to
 * MAX_INFLIGHT) may be in progress at once: a sleeping tool call or one
 * waiting for the client's answer never holds up the others.
 *
 * It offers a fixed set of tools, resources and prompts meant for
 * exercising MCP clients and gateways (mcp-supervisord in particular):
 * progress, cancellation, sampling, elicitation, roots, logging,
 * subscriptions, list changes, pagination; and, with --test-tools only,
 * oversized and broken output, hanging and crashing.
 *
 * This file holds main, the options and the stdio transport: reading
 * lines from stdin, queuing output for stdout, and closing down.  The
 * rest is split by concern (demo.h lists what the files share).
 */

#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "demo.h"

struct event_base	*base;
static struct event	*in_ev;		/* stdin readable */
static struct event	*out_ev;	/* stdout writable */
static struct event	*drain_ev;	/* give up flushing at exit */
static struct evbuffer	*inbuf;		/* unparsed input */
struct evbuffer		*outbuf;	/* unwritten output */
static int		 in_flags = -1;	/* original stdin flags */
static int		 out_flags = -1; /* original stdout flags */

static size_t		 scan_off;	/* input searched for newline */
static int		 discarding;	/* skipping an overlong line */
static int		 in_eof;	/* stdin is finished */
static int		 paused;	/* not reading, output too long */
static int		 closing;	/* flushing output, then exit */
int			 out_dead;	/* stdout failed */
int			 exit_code;

const char		*server_name = DEMO_NAME;
size_t			 page_size;	/* 0 is no pagination */
int			 test_tools;	/* --test-tools: crash, hang, ... */

/* Start writing output when stdout is writable. */
void
output_kick(void)
{
	if (out_dead)
		return;
	if (!event_pending(out_ev, EV_WRITE, NULL))
		event_add(out_ev, NULL);
}

/* Free a string handed to an evbuffer by reference. */
static void
output_free(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)(uintptr_t)data);
}

/* Queue one line of raw text for stdout. */
void
output_raw(const char *s)
{
	if (out_dead)
		return;
	evbuffer_add(outbuf, s, strlen(s));
	evbuffer_add(outbuf, "\n", 1);
	output_kick();
}

/* Queue a JSON message for stdout, without its newline; -1 if not. */
int
queue_json(json_t *msg)
{
	char	*s;
	size_t	 len;

	if (msg == NULL) {
		log_warnx("out of memory building a message");
		return (-1);
	}
	s = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (s == NULL) {
		log_warnx("cannot encode a message");
		return (-1);
	}
	if (out_dead) {
		free(s);
		return (-1);
	}

	/* Large messages are handed over rather than copied. */
	len = strlen(s);
	if (len < COPY_LIMIT) {
		evbuffer_add(outbuf, s, len);
		free(s);
	} else if (evbuffer_add_reference(outbuf, s, len, output_free,
	    NULL) != 0) {
		log_warnx("cannot queue a message of %zu bytes", len);
		free(s);
		return (-1);
	}
	return (0);
}

/* Queue a JSON message as one line for stdout. Consumes msg. */
void
send_json(json_t *msg)
{
	if (queue_json(msg) != 0)
		return;
	evbuffer_add(outbuf, "\n", 1);
	output_kick();
}

/* Write what is queued for stdout, waiting at most ms milliseconds. */
void
output_flush(int ms)
{
	struct pollfd	pfd;
	struct timespec	start, now;
	long		left;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!out_dead && evbuffer_get_length(outbuf) != 0) {
		if (evbuffer_write(outbuf, STDOUT_FILENO) != -1)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = ms - ((now.tv_sec - start.tv_sec) * 1000 +
		    (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left <= 0)
			return;
		pfd.fd = STDOUT_FILENO;
		pfd.events = POLLOUT;
		poll(&pfd, 1, (int)left);
	}
}

/* Parse and handle one line of input, not counting the newline. */
static void
handle_line(size_t len)
{
	const char	*line;
	json_t		*msg;
	json_error_t	 error;
	size_t		 i;

	if (len == 0)
		return;
	if ((line = (const char *)evbuffer_pullup(inbuf,
	    (ev_ssize_t)len)) == NULL) {
		log_warnx("out of memory reading a line of %zu bytes", len);
		return;
	}

	/* Blank lines are not messages; skip them quietly. */
	for (i = 0; i < len; i++) {
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			break;
	}
	if (i == len)
		return;

	msg = json_loadb(line, len, JSON_DECODE_ANY|JSON_ALLOW_NUL, &error);
	if (msg == NULL) {
		log_warnx("parse error at line %d column %d: %s", error.line,
		    error.column, error.text);
		send_json(json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc",
		    "2.0", "id", "error", "code", ERR_PARSE, "message",
		    "Parse error"));
		return;
	}
	handle_message(msg);
	json_decref(msg);
}

/* Stop reading input: wait for everything to be written, then exit. */
static void
start_close(void)
{
	struct timeval	 tv = { DRAIN_SECONDS, 0 };
	struct req	*r;

	if (closing)
		return;
	closing = 1;
	event_del(in_ev);

	/* Requests still in progress are abandoned, unanswered. */
	while ((r = TAILQ_FIRST(&reqs)) != NULL)
		req_free(r);

	if (out_dead || evbuffer_get_length(outbuf) == 0)
		event_base_loopbreak(base);
	else
		evtimer_add(drain_ev, &tv);
}

/* Handle every complete line in the input buffer. */
static void
process_input(void)
{
	struct evbuffer_ptr	p;
	size_t			len;

	while (!paused && !closing) {
		len = evbuffer_get_length(inbuf);
		if (len == 0 || scan_off >= len)
			break;

		/* Search only what has not been searched before. */
		evbuffer_ptr_set(inbuf, &p, scan_off, EVBUFFER_PTR_SET);
		p = evbuffer_search(inbuf, "\n", 1, &p);
		if (p.pos == -1) {
			scan_off = len;
			if (discarding) {
				evbuffer_drain(inbuf, len);
				scan_off = 0;
			} else if (len > MAX_LINE) {
				log_warnx("discarding input line longer than "
				    "%lu bytes", MAX_LINE);
				evbuffer_drain(inbuf, len);
				scan_off = 0;
				discarding = 1;
			}
			break;
		}
		scan_off = 0;

		len = (size_t)p.pos;
		if (discarding)
			discarding = 0;
		else if (len > MAX_LINE) {
			log_warnx("discarding input line of %zu bytes", len);
		} else
			handle_line(len);
		evbuffer_drain(inbuf, len + 1);

		/* Stop reading while the client is not reading. */
		if (evbuffer_get_length(outbuf) > OUT_HIGH) {
			paused = 1;
			event_del(in_ev);
		}
	}

	if (in_eof && !paused && !closing) {
		/* The last line may lack its newline. */
		len = evbuffer_get_length(inbuf);
		if (!discarding && len <= MAX_LINE)
			handle_line(len);
		evbuffer_drain(inbuf, len);
		start_close();
	}
}

/* Read what is available on stdin. */
static void
input_cb(evutil_socket_t fd, short events, void *arg)
{
	struct evbuffer_iovec	vec;
	ssize_t			n;

	(void)events;
	(void)arg;

	if (evbuffer_reserve_space(inbuf, READ_CHUNK, &vec, 1) != 1) {
		log_warnx("out of memory reading input");
		exit_code = 1;
		event_base_loopbreak(base);
		return;
	}
	if (vec.iov_len > READ_CHUNK)
		vec.iov_len = READ_CHUNK;
	n = read(fd, vec.iov_base, vec.iov_len);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		log_warn("read");
		n = 0;
	}
	vec.iov_len = (size_t)n;
	evbuffer_commit_space(inbuf, &vec, 1);

	if (n == 0) {
		in_eof = 1;
		event_del(in_ev);
	}
	process_input();
}

/* Write what is queued to stdout. */
static void
output_cb(evutil_socket_t fd, short events, void *arg)
{
	(void)events;
	(void)arg;

	if (evbuffer_write(outbuf, fd) == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		/* A closed pipe means the client has gone: not an error. */
		if (errno == EPIPE)
			log_warnx("stdout closed, exiting");
		else {
			log_warn("write");
			exit_code = 1;
		}
		out_dead = 1;
		evbuffer_drain(outbuf, evbuffer_get_length(outbuf));
		event_del(out_ev);
		closing = 1;
		event_base_loopbreak(base);
		return;
	}

	if (evbuffer_get_length(outbuf) == 0) {
		event_del(out_ev);
		if (closing)
			event_base_loopbreak(base);
	}
	if (paused && evbuffer_get_length(outbuf) < OUT_LOW) {
		paused = 0;
		if (!in_eof)
			event_add(in_ev, NULL);
		process_input();
	}
}

/* Give up flushing output after EOF. */
static void
drain_cb(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	(void)arg;
	log_warnx("client is not reading, exiting with %zu bytes unwritten",
	    evbuffer_get_length(outbuf));
	event_base_loopbreak(base);
}

/* Make a descriptor non-blocking, returning its old flags. */
static int
set_nonblock(int fd)
{
	int	flags;

	if ((flags = fcntl(fd, F_GETFL)) == -1)
		return (-1);
	if (fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		return (-1);
	return (flags);
}

/* Print usage. */
static void
usage(FILE *f)
{
	fprintf(f, "usage: %s [--name name] [--page-size n] [--test-tools] "
	    "[--help] [--version]\n", DEMO_NAME);
}

/* Free everything. */
static void
cleanup(void)
{
	struct req	*r;

	while ((r = TAILQ_FIRST(&reqs)) != NULL)
		req_free(r);
	tools_free();
	json_decref(client_caps);
	json_decref(subscriptions);

	event_free(in_ev);
	event_free(out_ev);
	event_free(drain_ev);
	evbuffer_free(inbuf);
	evbuffer_free(outbuf);
	event_base_free(base);

	if (in_flags != -1)
		fcntl(STDIN_FILENO, F_SETFL, in_flags);
	if (out_flags != -1)
		fcntl(STDOUT_FILENO, F_SETFL, out_flags);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "page-size", required_argument, NULL, 'p' },
		{ "test-tools", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct event_config	*cfg;
	char			*end;
	unsigned long		 n;
	int			 ch;

	while ((ch = getopt_long(argc, argv, "hn:p:tV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'n':
			if (*optarg == '\0' || strlen(optarg) > MAX_NAME) {
				fprintf(stderr, "%s: bad name\n", DEMO_NAME);
				usage(stderr);
				return (2);
			}
			server_name = optarg;
			break;
		case 'p':
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end != '\0' ||
			    errno != 0 || n > MAX_PAGE_SIZE) {
				fprintf(stderr, "%s: bad page size: %s\n",
				    DEMO_NAME, optarg);
				usage(stderr);
				return (2);
			}
			page_size = n;
			break;
		case 't':
			test_tools = 1;
			break;
		case 'h':
			usage(stdout);
			return (0);
		case 'V':
			printf("%s %s\n", DEMO_NAME, DEMO_VERSION);
			return (0);
		default:
			usage(stderr);
			return (2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		return (2);
	}

	signal(SIGPIPE, SIG_IGN);
	tools_init();
	if ((subscriptions = json_object()) == NULL)
		fatalx("out of memory");

	/*
	 * Only two descriptors are watched, so poll(2) costs nothing, and
	 * unlike epoll it also works when stdin or stdout is a regular file
	 * or /dev/null.
	 */
	if ((cfg = event_config_new()) == NULL)
		fatalx("event_config_new failed");
	event_config_avoid_method(cfg, "epoll");
	event_config_avoid_method(cfg, "kqueue");
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base == NULL && (base = event_base_new()) == NULL)
		fatalx("event_base_new failed");

	in_flags = set_nonblock(STDIN_FILENO);
	out_flags = set_nonblock(STDOUT_FILENO);
	if (in_flags == -1 || out_flags == -1)
		fatalx("cannot make stdin and stdout non-blocking");

	inbuf = evbuffer_new();
	outbuf = evbuffer_new();
	in_ev = event_new(base, STDIN_FILENO, EV_READ|EV_PERSIST, input_cb,
	    NULL);
	out_ev = event_new(base, STDOUT_FILENO, EV_WRITE|EV_PERSIST,
	    output_cb, NULL);
	drain_ev = evtimer_new(base, drain_cb, NULL);
	if (inbuf == NULL || outbuf == NULL || in_ev == NULL ||
	    out_ev == NULL || drain_ev == NULL)
		fatalx("out of memory");
	if (event_add(in_ev, NULL) != 0)
		fatalx("cannot watch stdin");

	event_base_dispatch(base);

	cleanup();
	return (exit_code);
}

/* SPDX-License-Identifier: ISC */
/*
 * loadgen_stdio.c -- going direct: the server is a child on stdio, every
 * session's calls go over its one pipe as lines, told apart by id (id %
 * sessions is the session; 0 is initialize).  No HTTP, no gateway: the
 * floor the other systems are measured against.
 */
#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <jansson.h>

#include "loadgen.h"

static struct {
	pid_t			 pid;
	struct bufferevent	*in;	/* to its stdin */
	struct bufferevent	*out;	/* from its stdout */
	size_t			 scan;	/* of out's input, searched for \n */
	int			 ready;
} direct = { .pid = -1 };

static void	direct_line(const char *, size_t);

static void
direct_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr p, from;
	size_t len;
	char *line;

	(void)arg;
	while (direct.out != NULL && (len = evbuffer_get_length(in)) > 0) {
		evbuffer_ptr_set(in, &from, direct.scan, EVBUFFER_PTR_SET);
		p = evbuffer_search(in, "\n", 1, &from);
		if (p.pos < 0) {
			direct.scan = len;
			return;
		}
		direct.scan = 0;
		line = (char *)evbuffer_pullup(in, p.pos + 1);
		direct_line(line, (size_t)p.pos);
		evbuffer_drain(in, (size_t)p.pos + 1);
	}
}

static void
direct_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		if (!st.stopping)
			error_note("direct: the server closed its output");
		if (direct.out != NULL) {
			bufferevent_free(direct.out);
			direct.out = NULL;
		}
	}
}

static void
direct_write(const char *text)
{
	struct evbuffer *out;

	if (direct.in == NULL)
		return;
	out = bufferevent_get_output(direct.in);
	evbuffer_add(out, text, strlen(text));
	evbuffer_add(out, "\n", 1);
}

/* Start the server with its stdin and stdout on pipes, and initialize it. */
int
direct_start(void)
{
	int tochild[2], fromchild[2];
	char *cmd, *argv[64], *tok, *save;
	int argc = 0;

	if ((cmd = strdup(opt.stdio)) == NULL)
		return -1;
	for (tok = strtok_r(cmd, " ", &save); tok != NULL && argc < 63;
	    tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (argc == 0 || pipe(tochild) != 0 || pipe(fromchild) != 0)
		return -1;
	if ((direct.pid = fork()) == -1)
		return -1;
	if (direct.pid == 0) {
		dup2(tochild[0], 0);
		dup2(fromchild[1], 1);
		close(tochild[0]);
		close(tochild[1]);
		close(fromchild[0]);
		close(fromchild[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	free(cmd);
	close(tochild[0]);
	close(fromchild[1]);
	evutil_make_socket_nonblocking(tochild[1]);
	evutil_make_socket_nonblocking(fromchild[0]);
	direct.in = bufferevent_socket_new(base, tochild[1],
	    BEV_OPT_CLOSE_ON_FREE);
	direct.out = bufferevent_socket_new(base, fromchild[0],
	    BEV_OPT_CLOSE_ON_FREE);
	if (direct.in == NULL || direct.out == NULL)
		return -1;
	bufferevent_setcb(direct.out, direct_read_cb, NULL, direct_event_cb,
	    NULL);
	bufferevent_enable(direct.out, EV_READ);
	bufferevent_enable(direct.in, EV_WRITE);
	direct_write("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":"
	    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
	    "{\"name\":\"mcp-supervisor-loadgen\",\"version\":"
	    "\"1.0\"}}}");
	return 0;
}

void
direct_stop(void)
{
	int status;

	if (direct.in != NULL) {
		bufferevent_free(direct.in);	/* EOF on its stdin */
		direct.in = NULL;
	}
	if (direct.out != NULL) {
		bufferevent_free(direct.out);
		direct.out = NULL;
	}
	if (direct.pid > 0) {
		kill(direct.pid, SIGTERM);
		waitpid(direct.pid, &status, 0);
		direct.pid = -1;
	}
}

/* A line from the server on stdio. */
static void
direct_line(const char *text, size_t len)
{
	json_error_t jerr;
	json_t *msg, *id;
	struct session *s;
	json_int_t n;
	unsigned i;

	while (len > 0 && (text[len - 1] == '\r' || text[len - 1] == ' '))
		len--;
	if (len == 0)
		return;
	if ((msg = json_loadb(text, len, 0, &jerr)) == NULL) {
		error_note("direct: bad JSON from the server: %s", jerr.text);
		return;
	}
	id = json_object_get(msg, "id");
	if (json_object_get(msg, "method") != NULL || !json_is_integer(id)) {
		json_decref(msg);	/* a notification or request */
		return;
	}
	n = json_integer_value(id);
	if (!direct.ready) {
		if (n != 0 || !json_is_object(json_object_get(msg, "result"))) {
			error_note("direct: initialize failed");
			json_decref(msg);
			stop_all();
			return;
		}
		json_decref(msg);
		direct.ready = 1;
		direct_write("{\"jsonrpc\":\"2.0\","
		    "\"method\":\"notifications/initialized\"}");
		st.started = opt.sessions;
		for (i = 0; i < opt.sessions; i++) {
			sessions[i].phase = PH_READY;
			on_ready(&sessions[i]);
		}
		return;
	}
	if (n < 1 || (s = &sessions[n % opt.sessions])->phase != PH_CALL ||
	    n != s->want_id) {
		error_note("direct: answer with an unexpected id %lld",
		    (long long)n);
		json_decref(msg);
		return;
	}
	s->answered = 0;
	i = (unsigned)check_answer(s, msg, len);
	json_decref(msg);
	call_answered(s, (int)i > 0);
	s->phase = PH_READY;
	send_call(s);
}


/* ------------------------------------------------------------------ */
/* The sessions' transport: their calls share the pipe. */

static int
stdio_init(struct session *s)
{
	(void)s;
	return 0;
}

static void
stdio_free(struct session *s)
{
	(void)s;
}

static void
stdio_start(struct session *s)
{
	(void)s;	/* direct_start() set up every session at once */
}

static void
stdio_send(struct session *s, const char *body, size_t len)
{
	(void)s;
	(void)len;
	direct_write(body);
}

/* Nothing to end per session: the pipe closes with the child. */
static void
stdio_end(struct session *s)
{
	s->phase = PH_CLOSED;
}

static void
stdio_close(struct session *s)
{
	(void)s;
}

const struct transport stdio_transport = {
	stdio_init, stdio_free, stdio_start, stdio_send, stdio_end,
	stdio_close
};

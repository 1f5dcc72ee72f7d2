/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's tools offered only with --test-tools, which misbehave
 * on purpose: crash, hang, garbage, big and stderr.
 */

#define _GNU_SOURCE

#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "demo.h"

/*
 * Exit at once with the given code, without answering, or with an answer
 * whose line has no newline: the last words of a server that exits.
 */
void
tool_crash(json_t *id, json_t *params, json_t *args)
{
	json_int_t	 code;
	json_t		*answer = NULL;

	(void)params;
	if (arg_int(args, "code", 0, 3, 0, 255, &code) != 0 ||
	    (json_object_get(args, "answer") != NULL &&
	    arg_value(args, "answer", 0, &answer) != 0)) {
		bad_args(id);
		return;
	}
	if (answer != NULL)
		queue_json(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0",
		    "id", id, "result", tool_content(json_copy(answer), 0)));
	/* Earlier answers are still sent, so what the client sees is clear. */
	output_flush(CRASH_FLUSH_MS);
	fprintf(stderr, "crashing\n");
	fflush(stderr);
	_exit((int)code);
}

/* Block the whole process, answering nothing, like a hung server. */
void
tool_hang(json_t *id, json_t *params, json_t *args)
{
	json_int_t	seconds;
	struct timespec	ts;

	(void)params;
	if (arg_int(args, "seconds", 0, 3600, 1, 3600, &seconds) != 0) {
		bad_args(id);
		return;
	}
	fprintf(stderr, "hanging for %lld s\n", (long long)seconds);
	fflush(stderr);
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = 0;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	reply_result(id, tool_ok("woke up"));
}

/* Write a line that is not JSON to stdout, then answer. */
void
tool_garbage(json_t *id, json_t *params, json_t *args)
{
	(void)params;
	(void)args;
	output_raw("this is not json {");
	reply_result(id, tool_ok("garbage sent"));
}

/*
 * Answer with a text of exactly the given number of bytes. The line is
 * built directly in the output buffer: 64 MiB of 'x' need no escaping and
 * are not worth three copies through jansson.
 */
void
tool_big(json_t *id, json_t *params, json_t *args)
{
	struct evbuffer_iovec	 vec[2];
	json_int_t		 bytes;
	size_t			 left, n;
	char			*ids;
	int			 i, nvec;

	(void)params;
	if (arg_int(args, "bytes", 1, 0, 0, MAX_BIG, &bytes) != 0) {
		bad_args(id);
		return;
	}
	if (out_dead)
		return;
	if ((ids = json_dumps(id, JSON_COMPACT|JSON_ENCODE_ANY)) == NULL) {
		reply_error(id, ERR_INTERNAL, NULL,
		    "Internal error: out of memory");
		return;
	}

	evbuffer_add_printf(outbuf, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"", ids);
	free(ids);
	left = (size_t)bytes;
	while (left != 0) {
		nvec = evbuffer_reserve_space(outbuf, (ev_ssize_t)left, vec, 2);
		if (nvec <= 0)
			break;
		for (i = 0; i < nvec && left != 0; i++) {
			n = vec[i].iov_len < left ? vec[i].iov_len : left;
			memset(vec[i].iov_base, 'x', n);
			vec[i].iov_len = n;
			left -= n;
		}
		evbuffer_commit_space(outbuf, vec, i);
	}
	if (left != 0) {
		/* Cannot happen short of memory; the line is broken now. */
		log_warnx("out of memory building big answer");
		out_dead = 1;
		exit_code = 1;
		event_base_loopbreak(base);
		return;
	}
	evbuffer_add(outbuf, "\"}]}}\n", 6);
	output_kick();
}

/* Write text to stderr. */
void
tool_stderr(json_t *id, json_t *params, json_t *args)
{
	json_t	*text;

	(void)params;
	if (arg_value(args, "text", 0, &text) != 0) {
		bad_args(id);
		return;
	}
	fwrite(json_string_value(text), 1, json_string_length(text), stderr);
	fputc('\n', stderr);
	fflush(stderr);
	reply_result(id, tool_ok("written"));
}

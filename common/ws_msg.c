/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ws_msg.h"
#include "xmalloc.h"

#define WS_MSG_MIN_CAP	1024	/* the first buffer of a message */

void
ws_msg_init(struct ws_msg *m, size_t max)
{
	memset(m, 0, sizeof *m);
	m->max = max;
}

void
ws_msg_reset(struct ws_msg *m)
{
	size_t	max = m->max;

	free(m->buf);
	ws_msg_init(m, max);
}

int
ws_msg_start(struct ws_msg *m,
    const struct wslay_event_on_frame_recv_start_arg *f, int64_t now)
{
	m->data = 0;
	/* A control frame: wslay keeps it (125 bytes at most). */
	if (m->failed || (f->opcode & 0x8) != 0)
		return (0);
	/* wslay has checked that a continuation continues something. */
	if (f->opcode != WSLAY_CONTINUATION_FRAME) {
		m->opcode = f->opcode;
		m->len = 0;
		m->frames = 0;
		m->started = now;
	}
	m->frames++;
	if (f->payload_length > m->max - m->len) {
		m->failed = 1;
		return (WSLAY_CODE_MESSAGE_TOO_BIG);
	}
	m->data = 1;
	return (0);
}

void
ws_msg_chunk(struct ws_msg *m, const uint8_t *p, size_t n)
{
	size_t	cap;

	if (!m->data || m->failed || n == 0)
		return;
	/* ws_msg_start() checked the frame's length; this cannot be. */
	if (n > m->max - m->len) {
		m->failed = 1;
		return;
	}
	if (n > m->cap - m->len) {
		/* Double, within the limit: appends cost O(1) each. */
		if (m->cap == 0)
			cap = WS_MSG_MIN_CAP;
		else
			cap = m->cap <= m->max / 2 ? m->cap * 2 : m->max;
		if (cap < m->len + n)
			cap = m->len + n;
		if (cap > m->max)
			cap = m->max;
		m->buf = xreallocarray(m->buf, cap, 1);
		m->cap = cap;
	}
	memcpy(m->buf + m->len, p, n);
	m->len += n;
}

int
ws_msg_pending(const struct ws_msg *m)
{
	return (m->opcode != 0);
}

int64_t
ws_msg_left(const struct ws_msg *m, int64_t now)
{
	int64_t	allowed, elapsed;

	if (!ws_msg_pending(m))
		return (-1);
	allowed = (int64_t)WS_MSG_TIMEOUT * 1000 +
	    (int64_t)(m->len / WS_MSG_RATE) * 1000 +
	    (int64_t)(m->len % WS_MSG_RATE) * 1000 / WS_MSG_RATE;
	elapsed = now - m->started;
	return (elapsed >= allowed ? 0 : allowed - elapsed);
}

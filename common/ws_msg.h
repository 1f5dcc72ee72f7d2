/* SPDX-License-Identifier: ISC */
/*
 * A WebSocket message reassembled from its frames, for a wslay context in
 * no-buffering mode: wslay still parses the frames (masks, opcodes, the
 * order of fragments, control frames, UTF-8 of text) and hands each
 * frame's payload over as it comes; the message's payload is kept here, in
 * one buffer.  wslay's own reassembly keeps each fragment in two heap
 * blocks and a queue cell, about 90 bytes for a fragment of one byte, so a
 * message sent a byte per fragment held some 90 times its size; here a
 * fragment costs its payload and nothing more.  Bounds: the message
 * limit (its payload, all fragments together; the buffer never grows past
 * it), and a deadline: a message must be whole WS_MSG_TIMEOUT seconds
 * after its first frame began, plus a second for every WS_MSG_RATE bytes
 * of it received, as an HTTP request body must.
 */
#ifndef MCPS_WS_MSG_H
#define MCPS_WS_MSG_H

#include <stddef.h>
#include <stdint.h>

#include <wslay/wslay.h>

#define WS_MSG_TIMEOUT	30	/* seconds for a message, plus: */
#define WS_MSG_RATE	65536	/* a second per so many bytes */

/* One message being received; embedded in its connection. */
struct ws_msg {
	uint8_t		*buf;		/* owned: the payload */
	size_t		 len;
	size_t		 cap;
	size_t		 max;		/* its limit */
	int		 opcode;	/* text, binary; 0: none */
	int		 data;		/* the frame is of it */
	int		 failed;	/* over max: the rest ignored */
	unsigned long	 frames;
	int64_t		 started;	/* ms, its first frame */
};

/* Set up for messages of at most max bytes. */
void	ws_msg_init(struct ws_msg *, size_t max);

/* Forget the message, if any, and free its buffer. */
void	ws_msg_reset(struct ws_msg *);

/*
 * A frame begins (wslay's on_frame_recv_start); now is monotonic ms.
 * Returns 0, or WSLAY_CODE_MESSAGE_TOO_BIG if the message would pass its
 * limit: the connection is then to be closed with that code, and what
 * comes after is ignored.
 */
int	ws_msg_start(struct ws_msg *,
	    const struct wslay_event_on_frame_recv_start_arg *, int64_t now);

/* Payload of the frame being read (wslay's on_frame_recv_chunk). */
void	ws_msg_chunk(struct ws_msg *, const uint8_t *, size_t);

/* Is a message begun and not yet whole? */
int	ws_msg_pending(const struct ws_msg *);

/*
 * Milliseconds left before the message in progress is overdue (0 when it
 * is), or -1 when there is none.
 */
int64_t	ws_msg_left(const struct ws_msg *, int64_t now);

#endif

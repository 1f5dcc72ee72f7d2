/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the frame decoder: frame_decode over raw bytes, and frame_peek over
 * an evbuffer fed the same bytes in pieces.  Both must see the same frames
 * and fail at the same frame; every frame seen must satisfy the checks the
 * decoder promises (length within max, known type, no flag but
 * FRAME_F_ERROR on a RESPONSE).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "frame.h"

#define FUZZ_MAX_FRAME	512

/* Die loudly: libFuzzer and the standalone driver both report this. */
#define CHECK(x) do {							\
	if (!(x))							\
		abort();						\
} while (0)

/* One frame as frame_decode saw it. */
struct seen {
	struct frame_hdr	hdr;
	size_t			off;
};

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen		*seen;
	size_t			 nseen = 0, pos = 0, fed = 0, piece, i;
	size_t			 next = 0;
	struct frame_hdr	 hdr, hdr2;
	enum frame_result	 r = FRAME_NEED, r2;
	const char		*why = NULL, *why2 = NULL;
	unsigned char		 raw[FRAME_HDR_LEN];
	struct evbuffer		*eb;
	json_t			*v;

	/* Walk the frames in the bytes; each takes at least a header. */
	seen = malloc((size / FRAME_HDR_LEN + 1) * sizeof *seen);
	CHECK(seen != NULL);
	for (;;) {
		why = NULL;
		r = frame_decode(data + pos, size - pos, FUZZ_MAX_FRAME, &hdr,
		    &why);
		if (r != FRAME_OK)
			break;
		CHECK(hdr.len <= FUZZ_MAX_FRAME);
		CHECK(msg_type_name(hdr.type) != NULL);
		CHECK(hdr.flags == 0 || (hdr.type == MSG_RESPONSE &&
		    hdr.flags == FRAME_F_ERROR));
		CHECK(size - pos >= FRAME_HDR_LEN + hdr.len);
		/* The header encodes back to the same bytes. */
		frame_hdr_encode(&hdr, raw);
		CHECK(memcmp(raw, data + pos, FRAME_HDR_LEN) == 0);
		/* Any shorter prefix of a good frame is incomplete. */
		CHECK(frame_decode(data + pos, FRAME_HDR_LEN - 1,
		    FUZZ_MAX_FRAME, &hdr2, &why2) == FRAME_NEED);
		if (hdr.len > 0)
			CHECK(frame_decode(data + pos, FRAME_HDR_LEN +
			    hdr.len - 1, FUZZ_MAX_FRAME, &hdr2, &why2) ==
			    FRAME_NEED);
		seen[nseen].hdr = hdr;
		seen[nseen].off = pos;
		nseen++;
		pos += FRAME_HDR_LEN + hdr.len;
	}
	if (r == FRAME_BAD) {
		CHECK(why != NULL);
		/* Refused on the header alone, before any payload. */
		CHECK(frame_decode(data + pos, FRAME_HDR_LEN, FUZZ_MAX_FRAME,
		    &hdr2, &why2) == FRAME_BAD);
		CHECK(strcmp(why, why2) == 0);
	}
	if (r == FRAME_NEED)
		CHECK(size - pos < FRAME_HDR_LEN ||
		    size - pos < FRAME_HDR_LEN + hdr.len);

	/*
	 * The same bytes through an evbuffer in pieces whose sizes come from
	 * the data itself; each complete frame is taken out as JSON.
	 */
	eb = evbuffer_new();
	CHECK(eb != NULL);
	i = 0;
	while (fed < size || evbuffer_get_length(eb) > 0) {
		why2 = NULL;
		r2 = frame_peek(eb, FUZZ_MAX_FRAME, &hdr2, &why2);
		if (r2 == FRAME_OK) {
			CHECK(next < nseen);
			CHECK(memcmp(&hdr2, &seen[next].hdr, sizeof hdr2) == 0);
			why2 = NULL;
			v = frame_take_json(eb, &hdr2, &why2);
			if (v == NULL)
				CHECK(why2 != NULL);
			else {
				CHECK(json_is_object(v));
				json_decref(v);
			}
			next++;
			continue;
		}
		if (r2 == FRAME_BAD) {
			/* The same frame frame_decode refused. */
			CHECK(r == FRAME_BAD && next == nseen);
			CHECK(strcmp(why, why2) == 0);
			break;
		}
		if (fed == size)
			break;
		piece = 1 + data[i++ % size] % 23;
		if (piece > size - fed)
			piece = size - fed;
		evbuffer_add(eb, data + fed, piece);
		fed += piece;
	}
	if (r != FRAME_BAD)
		CHECK(next == nseen);
	evbuffer_free(eb);
	free(seen);
	return (0);
}

/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "frame.h"
#include "log.h"
#include "secret.h"
#include "xmalloc.h"

static const char *const msg_names[] = {
	[MSG_HELLO] = "HELLO",
	[MSG_CONFIG] = "CONFIG",
	[MSG_STATUS] = "STATUS",
	[MSG_CATALOG] = "CATALOG",
	[MSG_REQUEST] = "REQUEST",
	[MSG_RESPONSE] = "RESPONSE",
	[MSG_FAIL] = "FAIL",
	[MSG_CANCEL] = "CANCEL",
	[MSG_CLIENT_NOTIFY] = "CLIENT_NOTIFY",
	[MSG_NOTIFY] = "NOTIFY",
	[MSG_UP_REQUEST] = "UP_REQUEST",
	[MSG_UP_RESPONSE] = "UP_RESPONSE",
	[MSG_SESSION_OPEN] = "SESSION_OPEN",
	[MSG_SESSION_CLOSE] = "SESSION_CLOSE",
	[MSG_SESSION_CATALOG] = "SESSION_CATALOG",
	[MSG_SHUTDOWN] = "SHUTDOWN",
	[MSG_UP_NOTIFY] = "UP_NOTIFY",
	[MSG_LLM_REQUEST] = "LLM_REQUEST",
	[MSG_LLM_CANCEL] = "LLM_CANCEL",
	[MSG_LLM_PROGRESS] = "LLM_PROGRESS",
	[MSG_LLM_USAGE] = "LLM_USAGE",
	[MSG_LLM_RESULT] = "LLM_RESULT",
	[MSG_LLM_FAIL] = "LLM_FAIL",
	[MSG_IDP_KEYS] = "IDP_KEYS",
	[MSG_IDP_STATUS] = "IDP_STATUS",
	[MSG_IDP_REFRESH] = "IDP_REFRESH",
	[MSG_IDP_INTROSPECT] = "IDP_INTROSPECT",
	[MSG_IDP_INTROSPECTED] = "IDP_INTROSPECTED",
	[MSG_IDP_EXCHANGE] = "IDP_EXCHANGE",
	[MSG_OAUTH_SAVE] = "OAUTH_SAVE",
	[MSG_OAUTH_LOGIN] = "OAUTH_LOGIN",
	[MSG_OAUTH_PROGRESS] = "OAUTH_PROGRESS",
	[MSG_OAUTH_CODE] = "OAUTH_CODE",
	[MSG_OAUTH_REVOKE] = "OAUTH_REVOKE",
	[MSG_IDP_EXCHANGED] = "IDP_EXCHANGED",
	[MSG_OTEL_SPANS] = "OTEL_SPANS",
	[MSG_OTEL_STATS] = "OTEL_STATS",
	[MSG_CTL_REQUEST] = "CTL_REQUEST",
	[MSG_CTL_REPLY] = "CTL_REPLY",
};

/* Return the name of a message type, or NULL if unknown. */
const char *
msg_type_name(uint16_t type)
{
	if (type >= sizeof msg_names / sizeof msg_names[0])
		return (NULL);
	return (msg_names[type]);
}

/* Encode a header into 16 bytes. */
void
frame_hdr_encode(const struct frame_hdr *hdr, unsigned char *out)
{
	uint32_t	u32;
	uint16_t	u16;

	u32 = htonl(hdr->len);
	memcpy(out, &u32, 4);
	u16 = htons(hdr->type);
	memcpy(out + 4, &u16, 2);
	u16 = htons(hdr->flags);
	memcpy(out + 6, &u16, 2);
	u32 = htonl(hdr->session);
	memcpy(out + 8, &u32, 4);
	u32 = htonl(hdr->tag);
	memcpy(out + 12, &u32, 4);
}

/* Decode 16 bytes into a header. */
void
frame_hdr_decode(const unsigned char *in, struct frame_hdr *hdr)
{
	uint32_t	u32;
	uint16_t	u16;

	memcpy(&u32, in, 4);
	hdr->len = ntohl(u32);
	memcpy(&u16, in + 4, 2);
	hdr->type = ntohs(u16);
	memcpy(&u16, in + 6, 2);
	hdr->flags = ntohs(u16);
	memcpy(&u32, in + 8, 4);
	hdr->session = ntohl(u32);
	memcpy(&u32, in + 12, 4);
	hdr->tag = ntohl(u32);
}

/* Check a decoded header. */
static enum frame_result
frame_check(const struct frame_hdr *hdr, size_t max, const char **why)
{
	if (hdr->len > max) {
		*why = "frame too large";
		return (FRAME_BAD);
	}
	if (msg_type_name(hdr->type) == NULL) {
		*why = "unknown frame type";
		return (FRAME_BAD);
	}
	if ((hdr->flags & ~(hdr->type == MSG_RESPONSE ? FRAME_F_ERROR : 0)) !=
	    0) {
		*why = "reserved frame flags set";
		return (FRAME_BAD);
	}
	return (FRAME_OK);
}

/* Decode the frame at the start of a byte buffer. */
enum frame_result
frame_decode(const void *buf, size_t len, size_t max, struct frame_hdr *hdr,
    const char **why)
{
	if (len < FRAME_HDR_LEN)
		return (FRAME_NEED);
	frame_hdr_decode(buf, hdr);
	if (frame_check(hdr, max, why) != FRAME_OK)
		return (FRAME_BAD);
	if (len - FRAME_HDR_LEN < hdr->len)
		return (FRAME_NEED);
	return (FRAME_OK);
}

/* Decode the frame at the start of an evbuffer without removing it. */
enum frame_result
frame_peek(struct evbuffer *buf, size_t max, struct frame_hdr *hdr,
    const char **why)
{
	unsigned char	raw[FRAME_HDR_LEN];
	size_t		len = evbuffer_get_length(buf);

	if (len < FRAME_HDR_LEN)
		return (FRAME_NEED);
	if (evbuffer_copyout(buf, raw, sizeof raw) != (ev_ssize_t)sizeof raw)
		return (FRAME_NEED);
	frame_hdr_decode(raw, hdr);
	if (frame_check(hdr, max, why) != FRAME_OK)
		return (FRAME_BAD);
	if (len - FRAME_HDR_LEN < hdr->len)
		return (FRAME_NEED);
	return (FRAME_OK);
}

/* Append a header. */
static void
frame_add_hdr(struct evbuffer *out, uint16_t type, uint16_t flags,
    uint32_t session, uint32_t tag, size_t len)
{
	struct frame_hdr	hdr;
	unsigned char		raw[FRAME_HDR_LEN];

	if (len > UINT32_MAX)
		fatalx("frame payload of %zu bytes", len);
	hdr.len = (uint32_t)len;
	hdr.type = type;
	hdr.flags = flags;
	hdr.session = session;
	hdr.tag = tag;
	frame_hdr_encode(&hdr, raw);
	if (evbuffer_add(out, raw, sizeof raw) != 0)
		fatalx("evbuffer_add");
}

/* Append a frame with a copied payload. */
void
frame_add(struct evbuffer *out, uint16_t type, uint32_t session, uint32_t tag,
    const void *data, size_t len)
{
	frame_add_hdr(out, type, 0, session, tag, len);
	if (len != 0 && evbuffer_add(out, data, len) != 0)
		fatalx("evbuffer_add");
}

/* Append a frame whose payload is moved from src. */
void
frame_add_buffer(struct evbuffer *out, uint16_t type, uint32_t session,
    uint32_t tag, struct evbuffer *src)
{
	frame_add_buffer_flags(out, type, 0, session, tag, src);
}

void
frame_add_buffer_flags(struct evbuffer *out, uint16_t type, uint16_t flags,
    uint32_t session, uint32_t tag, struct evbuffer *src)
{
	frame_add_hdr(out, type, flags, session, tag, evbuffer_get_length(src));
	if (evbuffer_add_buffer(out, src) != 0)
		fatalx("evbuffer_add_buffer");
}

/* Append a frame whose payload is a JSON value. */
void
frame_add_json(struct evbuffer *out, uint16_t type, uint32_t session,
    uint32_t tag, const json_t *value)
{
	char	*s;

	s = json_dumps(value, JSON_COMPACT);
	if (s == NULL)
		fatalx("json_dumps");
	frame_add(out, type, session, tag, s, strlen(s));
	free(s);
}

/* Text being dumped: grown without leaving copies behind. */
struct wiped_text {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/* Append a piece of a dump (json_dump_callback's callback). */
static int
wiped_append(const char *piece, size_t size, void *arg)
{
	struct wiped_text	*t = arg;
	char			*grown;
	size_t			 cap;

	if (size > SIZE_MAX / 2 - t->len)
		return (-1);
	if (t->len + size > t->cap) {
		for (cap = t->cap != 0 ? t->cap : 1024; cap < t->len + size;)
			cap *= 2;
		grown = xmalloc(cap);
		if (t->len != 0)
			memcpy(grown, t->p, t->len);
		if (t->p != NULL)
			explicit_bzero(t->p, t->cap);
		free(t->p);
		t->p = grown;
		t->cap = cap;
	}
	memcpy(t->p + t->len, piece, size);
	t->len += size;
	return (0);
}

/* The frame is written (or dropped): wipe its text. */
static void
wiped_cleanup(const void *data, size_t len, void *arg)
{
	size_t	*cap = arg;

	(void)len;
	explicit_bzero((void *)data, *cap);
	free((void *)data);
	free(cap);
}

void
frame_add_json_secret(struct evbuffer *out, uint16_t type, uint32_t session,
    uint32_t tag, json_t *value)
{
	struct wiped_text	 t = { NULL, 0, 0 };
	size_t			*cap;

	if (json_dump_callback(value, wiped_append, &t, JSON_COMPACT) != 0)
		fatalx("json_dump_callback");
	secret_wipe_tree(value);
	frame_add_hdr(out, type, 0, session, tag, t.len);
	if (t.len == 0) {
		free(t.p);
		return;
	}
	cap = xmalloc(sizeof *cap);
	*cap = t.cap;
	if (evbuffer_add_reference(out, t.p, t.len, wiped_cleanup, cap) != 0)
		fatalx("evbuffer_add_reference");
}

/* Remove a whole frame, its text wiped if wipe, and parse its payload. */
static json_t *
frame_take(struct evbuffer *in, const struct frame_hdr *hdr, int wipe,
    const char **why)
{
	json_error_t	 error;
	json_t		*value;
	unsigned char	*p;

	p = evbuffer_pullup(in, FRAME_HDR_LEN + (ev_ssize_t)hdr->len);
	if (p == NULL) {
		*why = "short frame";
		return (NULL);
	}
	value = json_loadb((char *)p + FRAME_HDR_LEN, hdr->len,
	    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &error);
	if (wipe)
		explicit_bzero(p + FRAME_HDR_LEN, hdr->len);
	evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
	if (value == NULL) {
		*why = "frame payload is not JSON";
		return (NULL);
	}
	if (!json_is_object(value)) {
		json_decref(value);
		*why = "frame payload is not a JSON object";
		return (NULL);
	}
	return (value);
}

/* Remove a whole frame and parse its payload as a JSON object. */
json_t *
frame_take_json(struct evbuffer *in, const struct frame_hdr *hdr,
    const char **why)
{
	return (frame_take(in, hdr, 0, why));
}

json_t *
frame_take_json_secret(struct evbuffer *in, const struct frame_hdr *hdr,
    const char **why)
{
	return (frame_take(in, hdr, 1, why));
}

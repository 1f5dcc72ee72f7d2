/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/frame.c: the 16-byte header, strict decoding of
 * byte buffers and evbuffers, and the JSON payload helpers.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>
#include <jansson.h>

#include "frame.h"

/* Build a raw frame into out (header + payload); return its length. */
static size_t
make_frame(unsigned char *out, uint32_t len, uint16_t type, uint16_t flags,
    uint32_t session, uint32_t tag, const char *payload)
{
	struct frame_hdr	hdr = { len, type, flags, session, tag };

	frame_hdr_encode(&hdr, out);
	if (payload != NULL)
		memcpy(out + FRAME_HDR_LEN, payload, len);
	return (FRAME_HDR_LEN + len);
}

START_TEST(test_hdr_round_trip)
{
	struct frame_hdr	in = { 0x01020304, MSG_CTL_REPLY, 0, 0xa0b0c0d0,
				    0xffffffff }, out;
	unsigned char		raw[FRAME_HDR_LEN];

	memset(&out, 0xaa, sizeof out);
	frame_hdr_encode(&in, raw);
	frame_hdr_decode(raw, &out);
	ck_assert_uint_eq(out.len, 0x01020304);
	ck_assert_uint_eq(out.type, MSG_CTL_REPLY);
	ck_assert_uint_eq(out.flags, 0);
	ck_assert_uint_eq(out.session, 0xa0b0c0d0);
	ck_assert_uint_eq(out.tag, 0xffffffff);
}
END_TEST

START_TEST(test_hdr_wire_order)
{
	struct frame_hdr	hdr = { 0x11223344, 0x5566, 0x7788, 0x99aabbcc,
				    0xddeeff01 };
	static const unsigned char want[FRAME_HDR_LEN] = {
		0x11, 0x22, 0x33, 0x44,		/* length */
		0x55, 0x66,			/* type */
		0x77, 0x88,			/* flags */
		0x99, 0xaa, 0xbb, 0xcc,		/* session */
		0xdd, 0xee, 0xff, 0x01		/* tag */
	};
	unsigned char		raw[FRAME_HDR_LEN];
	struct frame_hdr	back;

	frame_hdr_encode(&hdr, raw);
	ck_assert_mem_eq(raw, want, FRAME_HDR_LEN);
	frame_hdr_decode(want, &back);
	ck_assert_uint_eq(back.len, 0x11223344);
	ck_assert_uint_eq(back.type, 0x5566);
	ck_assert_uint_eq(back.flags, 0x7788);
	ck_assert_uint_eq(back.session, 0x99aabbcc);
	ck_assert_uint_eq(back.tag, 0xddeeff01);
}
END_TEST

START_TEST(test_msg_type_name)
{
	ck_assert_str_eq(msg_type_name(MSG_HELLO), "HELLO");
	ck_assert_str_eq(msg_type_name(MSG_SHUTDOWN), "SHUTDOWN");
	ck_assert_str_eq(msg_type_name(MSG_CTL_REQUEST), "CTL_REQUEST");
	ck_assert_str_eq(msg_type_name(MSG_CTL_REPLY), "CTL_REPLY");
	ck_assert_str_eq(msg_type_name(MSG_SESSION_CATALOG),
	    "SESSION_CATALOG");
	ck_assert_str_eq(msg_type_name(MSG_UP_NOTIFY), "UP_NOTIFY");
	ck_assert_str_eq(msg_type_name(MSG_LLM_FAIL), "LLM_FAIL");
	ck_assert_ptr_null(msg_type_name(0));
	ck_assert_str_eq(msg_type_name(MSG_IDP_KEYS), "IDP_KEYS");
	ck_assert_str_eq(msg_type_name(MSG_IDP_INTROSPECTED),
	    "IDP_INTROSPECTED");
	ck_assert_str_eq(msg_type_name(MSG_IDP_EXCHANGE), "IDP_EXCHANGE");
	ck_assert_str_eq(msg_type_name(MSG_IDP_EXCHANGED), "IDP_EXCHANGED");
	ck_assert_ptr_null(msg_type_name(36));
	ck_assert_ptr_null(msg_type_name(63));
	ck_assert_ptr_null(msg_type_name(66));
	ck_assert_ptr_null(msg_type_name(0xffff));
	/* Never renumber. */
	ck_assert_int_eq(MSG_HELLO, 1);
	ck_assert_int_eq(MSG_SHUTDOWN, 15);
	ck_assert_int_eq(MSG_SESSION_CATALOG, 16);
	ck_assert_int_eq(MSG_UP_NOTIFY, 17);
	ck_assert_int_eq(MSG_LLM_REQUEST, 18);
	ck_assert_int_eq(MSG_LLM_FAIL, 23);
	ck_assert_int_eq(MSG_IDP_KEYS, 24);
	ck_assert_int_eq(MSG_IDP_STATUS, 25);
	ck_assert_int_eq(MSG_IDP_REFRESH, 26);
	ck_assert_int_eq(MSG_IDP_INTROSPECT, 27);
	ck_assert_int_eq(MSG_IDP_INTROSPECTED, 28);
	ck_assert_int_eq(MSG_OAUTH_SAVE, 30);
	ck_assert_int_eq(MSG_IDP_EXCHANGE, 29);
	ck_assert_int_eq(MSG_OAUTH_REVOKE, 34);
	ck_assert_int_eq(MSG_IDP_EXCHANGED, 35);
	ck_assert_str_eq(msg_type_name(MSG_OAUTH_PROGRESS), "OAUTH_PROGRESS");
	ck_assert_int_eq(MSG_CTL_REQUEST, 64);
	ck_assert_int_eq(MSG_CTL_REPLY, 65);
}
END_TEST

START_TEST(test_decode_partial)
{
	unsigned char		buf[64];
	const char		*payload = "{\"a\":1}";
	size_t			 total, i;
	struct frame_hdr	 hdr;
	const char		*why;

	total = make_frame(buf, (uint32_t)strlen(payload), MSG_REQUEST, 0, 7,
	    9, payload);
	ck_assert_uint_eq(total, FRAME_HDR_LEN + 7);
	for (i = 0; i < total; i++) {
		why = NULL;
		ck_assert_msg(frame_decode(buf, i, 1024, &hdr, &why) ==
		    FRAME_NEED, "prefix %zu not FRAME_NEED", i);
		ck_assert_ptr_null(why);
	}
	ck_assert_int_eq(frame_decode(buf, total, 1024, &hdr, &why),
	    FRAME_OK);
	ck_assert_uint_eq(hdr.len, 7);
	ck_assert_uint_eq(hdr.type, MSG_REQUEST);
	ck_assert_uint_eq(hdr.session, 7);
	ck_assert_uint_eq(hdr.tag, 9);
	/* Extra bytes after the frame do not matter. */
	ck_assert_int_eq(frame_decode(buf, total + 5, 1024, &hdr, &why),
	    FRAME_OK);
}
END_TEST

START_TEST(test_decode_empty_payload)
{
	unsigned char		buf[FRAME_HDR_LEN];
	struct frame_hdr	hdr;
	const char		*why;

	make_frame(buf, 0, MSG_SHUTDOWN, 0, 0, 0, NULL);
	ck_assert_int_eq(frame_decode(buf, FRAME_HDR_LEN, 0, &hdr, &why),
	    FRAME_OK);
	ck_assert_uint_eq(hdr.len, 0);
	ck_assert_uint_eq(hdr.type, MSG_SHUTDOWN);
}
END_TEST

START_TEST(test_decode_several)
{
	unsigned char		buf[256];
	size_t			off = 0, pos = 0;
	struct frame_hdr	hdr;
	const char		*why;
	int			n = 0;

	off += make_frame(buf + off, 2, MSG_HELLO, 0, 1, 10, "{}");
	off += make_frame(buf + off, 0, MSG_STATUS, 0, 2, 20, NULL);
	off += make_frame(buf + off, 8, MSG_NOTIFY, 0, 3, 30, "{\"x\":[]}");
	while (frame_decode(buf + pos, off - pos, 100, &hdr, &why) ==
	    FRAME_OK) {
		n++;
		ck_assert_uint_eq(hdr.session, (uint32_t)n);
		ck_assert_uint_eq(hdr.tag, (uint32_t)n * 10);
		pos += FRAME_HDR_LEN + hdr.len;
	}
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(pos, off);
	ck_assert_uint_eq(pos, 3 * FRAME_HDR_LEN + 10);
}
END_TEST

START_TEST(test_decode_oversize_early)
{
	unsigned char		buf[FRAME_HDR_LEN];
	struct frame_hdr	hdr;
	const char		*why = NULL;
	size_t			i;

	make_frame(buf, 1025, MSG_RESPONSE, 0, 1, 1, NULL);
	/* Before the header is complete nothing can be said. */
	for (i = 0; i < FRAME_HDR_LEN; i++)
		ck_assert_int_eq(frame_decode(buf, i, 1024, &hdr, &why),
		    FRAME_NEED);
	/* With only the header, the length is already refused. */
	ck_assert_int_eq(frame_decode(buf, FRAME_HDR_LEN, 1024, &hdr, &why),
	    FRAME_BAD);
	ck_assert_str_eq(why, "frame too large");
	/* Exactly max is fine (and needs the payload). */
	make_frame(buf, 1024, MSG_RESPONSE, 0, 1, 1, NULL);
	ck_assert_int_eq(frame_decode(buf, FRAME_HDR_LEN, 1024, &hdr, &why),
	    FRAME_NEED);
	/* The largest length on the wire. */
	make_frame(buf, UINT32_MAX, MSG_RESPONSE, 0, 1, 1, NULL);
	ck_assert_int_eq(frame_decode(buf, FRAME_HDR_LEN, 1024, &hdr, &why),
	    FRAME_BAD);
}
END_TEST

START_TEST(test_decode_bad_type)
{
	unsigned char		buf[FRAME_HDR_LEN + 2];
	struct frame_hdr	hdr;
	const char		*why = NULL;
	static const uint16_t	bad[] = { 0, 36, 63, 66, 0xffff };
	size_t			i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		make_frame(buf, 2, bad[i], 0, 0, 0, "{}");
		ck_assert_int_eq(frame_decode(buf, sizeof buf, 100, &hdr,
		    &why), FRAME_BAD);
		ck_assert_str_eq(why, "unknown frame type");
		/* Refused before the payload, too. */
		ck_assert_int_eq(frame_decode(buf, FRAME_HDR_LEN, 100, &hdr,
		    &why), FRAME_BAD);
	}
}
END_TEST

START_TEST(test_decode_flags)
{
	unsigned char		buf[FRAME_HDR_LEN + 2];
	struct frame_hdr	hdr;
	const char		*why = NULL;

	make_frame(buf, 2, MSG_HELLO, 1, 0, 0, "{}");
	ck_assert_int_eq(frame_decode(buf, sizeof buf, 100, &hdr, &why),
	    FRAME_BAD);
	ck_assert_str_eq(why, "reserved frame flags set");
	make_frame(buf, 2, MSG_HELLO, 0x8000, 0, 0, "{}");
	ck_assert_int_eq(frame_decode(buf, FRAME_HDR_LEN, 100, &hdr, &why),
	    FRAME_BAD);
	/* FRAME_F_ERROR is a RESPONSE's, and only it. */
	make_frame(buf, 2, MSG_RESPONSE, FRAME_F_ERROR, 1, 2, "{}");
	ck_assert_int_eq(frame_decode(buf, sizeof buf, 100, &hdr, &why),
	    FRAME_OK);
	ck_assert_uint_eq(hdr.flags, FRAME_F_ERROR);
	make_frame(buf, 2, MSG_FAIL, FRAME_F_ERROR, 1, 2, "{}");
	ck_assert_int_eq(frame_decode(buf, sizeof buf, 100, &hdr, &why),
	    FRAME_BAD);
	make_frame(buf, 2, MSG_RESPONSE, FRAME_F_ERROR | 2, 1, 2, "{}");
	ck_assert_int_eq(frame_decode(buf, sizeof buf, 100, &hdr, &why),
	    FRAME_BAD);
}
END_TEST

START_TEST(test_decode_truncated)
{
	unsigned char		buf[FRAME_HDR_LEN + 10];
	struct frame_hdr	hdr;
	const char		*why = NULL;

	make_frame(buf, 10, MSG_CATALOG, 0, 0, 0, "0123456789");
	ck_assert_int_eq(frame_decode(buf, sizeof buf - 1, 100, &hdr, &why),
	    FRAME_NEED);
	ck_assert_uint_eq(hdr.len, 10);
	ck_assert_ptr_null(why);
	ck_assert_int_eq(frame_decode(buf, 3, 100, &hdr, &why), FRAME_NEED);
	ck_assert_int_eq(frame_decode(buf, 0, 100, &hdr, &why), FRAME_NEED);
}
END_TEST

START_TEST(test_peek_pieces)
{
	struct evbuffer		*eb = evbuffer_new();
	unsigned char		 buf[64];
	size_t			 total, i;
	struct frame_hdr	 hdr;
	const char		*why = NULL;

	total = make_frame(buf, 9, MSG_FAIL, 0, 42, 43, "{\"c\":\"d\"}");
	for (i = 0; i < total; i++) {
		ck_assert_int_eq(frame_peek(eb, 100, &hdr, &why), FRAME_NEED);
		evbuffer_add(eb, buf + i, 1);
	}
	ck_assert_int_eq(frame_peek(eb, 100, &hdr, &why), FRAME_OK);
	ck_assert_uint_eq(hdr.len, 9);
	ck_assert_uint_eq(hdr.type, MSG_FAIL);
	ck_assert_uint_eq(hdr.session, 42);
	ck_assert_uint_eq(hdr.tag, 43);
	/* Peeking leaves the frame in the buffer. */
	ck_assert_uint_eq(evbuffer_get_length(eb), total);
	ck_assert_int_eq(frame_peek(eb, 8, &hdr, &why), FRAME_BAD);
	ck_assert_str_eq(why, "frame too large");
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_peek_bad)
{
	struct evbuffer		*eb = evbuffer_new();
	unsigned char		 buf[FRAME_HDR_LEN];
	struct frame_hdr	 hdr;
	const char		*why = NULL;

	make_frame(buf, 0, 99, 0, 0, 0, NULL);
	evbuffer_add(eb, buf, sizeof buf);
	ck_assert_int_eq(frame_peek(eb, 100, &hdr, &why), FRAME_BAD);
	ck_assert_str_eq(why, "unknown frame type");
	evbuffer_drain(eb, sizeof buf);
	make_frame(buf, 0, MSG_HELLO, 2, 0, 0, NULL);
	evbuffer_add(eb, buf, sizeof buf);
	ck_assert_int_eq(frame_peek(eb, 100, &hdr, &why), FRAME_BAD);
	ck_assert_str_eq(why, "reserved frame flags set");
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_add)
{
	struct evbuffer		*eb = evbuffer_new();
	static const unsigned char want[] = {
		0, 0, 0, 3, 0, 5, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 'a', 'b', 'c'
	};
	unsigned char		 raw[sizeof want];

	frame_add(eb, MSG_REQUEST, 0x102, 0x304, "abc", 3);
	ck_assert_uint_eq(evbuffer_get_length(eb), sizeof want);
	evbuffer_copyout(eb, raw, sizeof raw);
	ck_assert_mem_eq(raw, want, sizeof want);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_add_empty)
{
	struct evbuffer		*eb = evbuffer_new();
	struct frame_hdr	 hdr;
	const char		*why;

	frame_add(eb, MSG_SHUTDOWN, 0, 0, NULL, 0);
	ck_assert_uint_eq(evbuffer_get_length(eb), FRAME_HDR_LEN);
	ck_assert_int_eq(frame_peek(eb, 0, &hdr, &why), FRAME_OK);
	ck_assert_uint_eq(hdr.len, 0);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_add_buffer)
{
	struct evbuffer		*eb = evbuffer_new(), *src = evbuffer_new();
	struct frame_hdr	 hdr;
	const char		*why = NULL;
	unsigned char		 raw[FRAME_HDR_LEN + 11];

	evbuffer_add(eb, "junk", 4);
	evbuffer_drain(eb, 4);
	evbuffer_add(src, "{\"k\":", 5);
	evbuffer_add(src, "\"v\"}", 4);
	evbuffer_add(src, "  ", 2);
	frame_add_buffer(eb, MSG_NOTIFY, 5, 6, src);
	ck_assert_uint_eq(evbuffer_get_length(src), 0);
	ck_assert_uint_eq(evbuffer_get_length(eb), FRAME_HDR_LEN + 11);
	ck_assert_int_eq(frame_peek(eb, 11, &hdr, &why), FRAME_OK);
	ck_assert_uint_eq(hdr.len, 11);
	ck_assert_uint_eq(hdr.type, MSG_NOTIFY);
	ck_assert_uint_eq(hdr.session, 5);
	ck_assert_uint_eq(hdr.tag, 6);
	evbuffer_copyout(eb, raw, sizeof raw);
	ck_assert_mem_eq(raw + FRAME_HDR_LEN, "{\"k\":\"v\"}  ", 11);
	evbuffer_free(src);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_json_round_trip)
{
	struct evbuffer		*eb = evbuffer_new();
	json_t			*o, *back;
	struct frame_hdr	 hdr;
	const char		*why = NULL;

	o = json_pack("{s:i, s:s, s:[i,i]}", "a", 1, "b", "x\"y", "c", 2, 3);
	frame_add_json(eb, MSG_CONFIG, 1, 2, o);
	frame_add_json(eb, MSG_STATUS, 3, 4, o);
	ck_assert_int_eq(frame_peek(eb, 1024, &hdr, &why), FRAME_OK);
	ck_assert_uint_eq(hdr.type, MSG_CONFIG);
	back = frame_take_json(eb, &hdr, &why);
	ck_assert_ptr_nonnull(back);
	ck_assert(json_equal(o, back));
	json_decref(back);
	/* The first frame is gone, the second is next. */
	ck_assert_int_eq(frame_peek(eb, 1024, &hdr, &why), FRAME_OK);
	ck_assert_uint_eq(hdr.type, MSG_STATUS);
	ck_assert_uint_eq(hdr.session, 3);
	back = frame_take_json(eb, &hdr, &why);
	ck_assert_ptr_nonnull(back);
	ck_assert(json_equal(o, back));
	json_decref(back);
	ck_assert_uint_eq(evbuffer_get_length(eb), 0);
	json_decref(o);
	evbuffer_free(eb);
}
END_TEST

/*
 * A value with secrets: the frame holds its text; the strings only it
 * holds are wiped, shared ones are not; a text past the first buffer
 * grows whole.
 */
START_TEST(test_json_secret)
{
	struct evbuffer		*eb = evbuffer_new();
	json_t			*o, *kept, *copy, *back, *big;
	struct frame_hdr	 hdr;
	const char		*why = NULL;
	char			 filler[5000];

	memset(filler, 'f', sizeof filler - 1);
	filler[sizeof filler - 1] = '\0';
	kept = json_pack("{s:s}", "token", "kept-elsewhere");
	o = json_pack("{s:s, s:[s], s:O, s:s}", "api_key", "sk-secret",
	    "headers", "Authorization: Bearer abc", "record", kept,
	    "filler", filler);
	copy = json_deep_copy(o);
	frame_add_json_secret(eb, MSG_CONFIG, 0, 0, o);
	ck_assert_int_eq(frame_peek(eb, 65536, &hdr, &why), FRAME_OK);
	back = frame_take_json(eb, &hdr, &why);
	ck_assert_ptr_nonnull(back);
	ck_assert(json_equal(copy, back));
	ck_assert_uint_eq(evbuffer_get_length(eb), 0);
	/* Wiped in place, lengths kept. */
	ck_assert_int_eq(json_string_value(json_object_get(o,
	    "api_key"))[0], '\0');
	ck_assert_int_eq(json_string_value(json_array_get(
	    json_object_get(o, "headers"), 0))[0], '\0');
	ck_assert_str_eq(json_string_value(json_object_get(kept, "token")),
	    "kept-elsewhere");
	json_decref(o);
	json_decref(kept);
	json_decref(back);
	json_decref(copy);
	/* Freed with the buffer, unwritten. */
	big = json_pack("{s:s}", "filler", filler);
	frame_add_json_secret(eb, MSG_CONFIG, 0, 0, big);
	json_decref(big);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_json_compact)
{
	struct evbuffer		*eb = evbuffer_new();
	json_t			*o = json_pack("{s:i}", "a", 1);
	unsigned char		 raw[FRAME_HDR_LEN + 7];

	frame_add_json(eb, MSG_HELLO, 0, 0, o);
	ck_assert_uint_eq(evbuffer_get_length(eb), FRAME_HDR_LEN + 7);
	evbuffer_copyout(eb, raw, sizeof raw);
	ck_assert_mem_eq(raw + FRAME_HDR_LEN, "{\"a\":1}", 7);
	json_decref(o);
	evbuffer_free(eb);
}
END_TEST

/* Take the frame built from payload and check that it is refused. */
static void
take_bad(const char *payload, size_t len, const char *want_why)
{
	struct evbuffer		*eb = evbuffer_new();
	struct frame_hdr	 hdr;
	const char		*why = NULL;
	json_t			*v;

	frame_add(eb, MSG_RESPONSE, 0, 0, payload, len);
	frame_add(eb, MSG_RESPONSE, 0, 0, "{}", 2);
	ck_assert_int_eq(frame_peek(eb, 1024, &hdr, &why), FRAME_OK);
	v = frame_take_json(eb, &hdr, &why);
	ck_assert_msg(v == NULL, "payload %s accepted", payload);
	ck_assert_str_eq(why, want_why);
	/* The bad frame is consumed, the next one is intact. */
	ck_assert_uint_eq(evbuffer_get_length(eb), FRAME_HDR_LEN + 2);
	ck_assert_int_eq(frame_peek(eb, 1024, &hdr, &why), FRAME_OK);
	v = frame_take_json(eb, &hdr, &why);
	ck_assert_ptr_nonnull(v);
	json_decref(v);
	evbuffer_free(eb);
}

START_TEST(test_take_bad)
{
	take_bad("[1,2]", 5, "frame payload is not a JSON object");
	take_bad("{\"a\":", 5, "frame payload is not JSON");
	take_bad("{} x", 4, "frame payload is not JSON");
	take_bad("", 0, "frame payload is not JSON");
	take_bad("{\"a\":1,\"a\":2}", 13, "frame payload is not JSON");
	take_bad("\"str\"", 5, "frame payload is not JSON");
	take_bad("{\"a\":\"\xff\"}", 9, "frame payload is not JSON");
}
END_TEST

START_TEST(test_take_nul)
{
	struct evbuffer		*eb = evbuffer_new();
	struct frame_hdr	 hdr;
	const char		*why = NULL;
	json_t			*v;
	static const char	 p[] = "{\"a\":\"x\\u0000y\"}";

	frame_add(eb, MSG_RESPONSE, 0, 0, p, sizeof p - 1);
	ck_assert_int_eq(frame_peek(eb, 1024, &hdr, &why), FRAME_OK);
	v = frame_take_json(eb, &hdr, &why);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(json_string_length(json_object_get(v, "a")), 3);
	json_decref(v);
	evbuffer_free(eb);
}
END_TEST

static Suite *
frame_suite(void)
{
	Suite	*s = suite_create("frame");
	TCase	*tc;

	tc = tcase_create("header");
	tcase_add_test(tc, test_hdr_round_trip);
	tcase_add_test(tc, test_hdr_wire_order);
	tcase_add_test(tc, test_msg_type_name);
	suite_add_tcase(s, tc);

	tc = tcase_create("decode");
	tcase_add_test(tc, test_decode_partial);
	tcase_add_test(tc, test_decode_empty_payload);
	tcase_add_test(tc, test_decode_several);
	tcase_add_test(tc, test_decode_oversize_early);
	tcase_add_test(tc, test_decode_bad_type);
	tcase_add_test(tc, test_decode_flags);
	tcase_add_test(tc, test_decode_truncated);
	suite_add_tcase(s, tc);

	tc = tcase_create("evbuffer");
	tcase_add_test(tc, test_peek_pieces);
	tcase_add_test(tc, test_peek_bad);
	tcase_add_test(tc, test_add);
	tcase_add_test(tc, test_add_empty);
	tcase_add_test(tc, test_add_buffer);
	tcase_add_test(tc, test_json_round_trip);
	tcase_add_test(tc, test_json_compact);
	tcase_add_test(tc, test_json_secret);
	tcase_add_test(tc, test_take_bad);
	tcase_add_test(tc, test_take_nul);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(frame_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}

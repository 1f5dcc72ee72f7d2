/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/proxy_parse.c: addresses and CIDR blocks, the
 * PROXY protocol (versions 1 and 2) and X-Forwarded-For.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "proxy_parse.h"

/* Format an address for comparisons. */
static const char *
fmt(const struct netaddr *a)
{
	static char	buf[NETADDR_TEXT_MAX];

	netaddr_format(a, buf, sizeof buf);
	return (buf);
}

static int
parse(const char *s, struct netaddr *a)
{
	return (netaddr_parse(s, strlen(s), a));
}

START_TEST(test_addresses)
{
	struct netaddr	a;

	ck_assert_int_eq(parse("192.0.2.1", &a), 0);
	ck_assert_int_eq(a.family, AF_INET);
	ck_assert_str_eq(fmt(&a), "192.0.2.1");
	ck_assert_int_eq(parse("2001:db8::1", &a), 0);
	ck_assert_int_eq(a.family, AF_INET6);
	ck_assert_str_eq(fmt(&a), "2001:db8::1");
	ck_assert_int_eq(parse("[::1]", &a), 0);
	ck_assert_str_eq(fmt(&a), "::1");
	/* A mapped address is the IPv4 one. */
	ck_assert_int_eq(parse("::ffff:10.1.2.3", &a), 0);
	ck_assert_int_eq(a.family, AF_INET);
	ck_assert_str_eq(fmt(&a), "10.1.2.3");
	/* Nothing else: ports, zones, short or octal forms, junk. */
	ck_assert_int_eq(parse("192.0.2.1:80", &a), -1);
	ck_assert_int_eq(parse("[::1]:80", &a), -1);
	ck_assert_int_eq(parse("fe80::1%eth0", &a), -1);
	ck_assert_int_eq(parse("10.1", &a), -1);
	ck_assert_int_eq(parse("010.0.0.1", &a), -1);
	ck_assert_int_eq(parse(" 10.0.0.1", &a), -1);
	ck_assert_int_eq(parse("unknown", &a), -1);
	ck_assert_int_eq(parse("", &a), -1);
	ck_assert_int_eq(parse("[]", &a), -1);
	ck_assert_int_eq(parse("[10.0.0.1]", &a), -1);
	ck_assert_int_eq(netaddr_parse("10.0.0.1\0x", 10, &a), -1);
}
END_TEST

static int
block(const char *s, struct netblock *b)
{
	return (netblock_parse(s, strlen(s), b));
}

START_TEST(test_blocks)
{
	struct netblock	b;
	struct netaddr	a;

	ck_assert_int_eq(block("10.0.0.0/8", &b), 0);
	ck_assert_uint_eq(b.bits, 8);
	parse("10.200.3.4", &a);
	ck_assert(netblock_match(&b, &a));
	parse("11.0.0.1", &a);
	ck_assert(!netblock_match(&b, &a));
	/* Bits beyond the prefix are ignored. */
	ck_assert_int_eq(block("10.1.2.3/8", &b), 0);
	parse("10.9.9.9", &a);
	ck_assert(netblock_match(&b, &a));
	/* A bare address is a block of one. */
	ck_assert_int_eq(block("127.0.0.1", &b), 0);
	ck_assert_uint_eq(b.bits, 32);
	parse("127.0.0.1", &a);
	ck_assert(netblock_match(&b, &a));
	parse("127.0.0.2", &a);
	ck_assert(!netblock_match(&b, &a));
	ck_assert_int_eq(block("fd00::/8", &b), 0);
	parse("fd12:3456::1", &a);
	ck_assert(netblock_match(&b, &a));
	parse("fe80::1", &a);
	ck_assert(!netblock_match(&b, &a));
	/* Families do not mix, save a mapped block. */
	parse("10.0.0.1", &a);
	ck_assert(!netblock_match(&b, &a));
	ck_assert_int_eq(block("::ffff:10.0.0.0/104", &b), 0);
	ck_assert(netblock_match(&b, &a));
	ck_assert_int_eq(block("0.0.0.0/0", &b), 0);
	ck_assert(netblock_match(&b, &a));
	/* Odd prefixes. */
	ck_assert_int_eq(block("10.0.0.0/33", &b), -1);
	ck_assert_int_eq(block("::/129", &b), -1);
	ck_assert_int_eq(block("10.0.0.0/", &b), -1);
	ck_assert_int_eq(block("10.0.0.0/08", &b), -1);
	ck_assert_int_eq(block("10.0.0.0/+8", &b), -1);
	ck_assert_int_eq(block("10.0.0.0/8/8", &b), -1);
	ck_assert_int_eq(block("::ffff:10.0.0.0/95", &b), -1);
}
END_TEST

static ssize_t
v1(const char *s, struct proxy_info *pi, const char **why)
{
	return (proxy_parse((const unsigned char *)s, strlen(s), pi, why));
}

START_TEST(test_v1)
{
	struct proxy_info	 pi;
	const char		*why = NULL;
	const char		*line = "PROXY TCP4 192.0.2.7 10.0.0.1 56324 443"
				    "\r\nGET / HTTP/1.1\r\n";

	ck_assert_int_eq(v1(line, &pi, &why), 41);
	ck_assert_int_eq(pi.version, 1);
	ck_assert(pi.has_addr);
	ck_assert_str_eq(fmt(&pi.src), "192.0.2.7");
	ck_assert_uint_eq(pi.sport, 56324);
	ck_assert_int_gt(v1("PROXY TCP6 2001:db8::7 ::1 1 2\r\n", &pi, &why),
	    0);
	ck_assert_str_eq(fmt(&pi.src), "2001:db8::7");
	ck_assert_int_eq(v1("PROXY UNKNOWN\r\n", &pi, &why), 15);
	ck_assert(!pi.has_addr);
	ck_assert_int_eq(v1("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n", &pi,
	    &why), 35);
	ck_assert(!pi.has_addr);
	/* Incomplete: more is needed. */
	ck_assert_int_eq(v1("PROX", &pi, &why), 0);
	ck_assert_int_eq(v1("PROXY TCP4 192.0.2.7 10.0.0.1 5", &pi, &why), 0);
	ck_assert_int_eq(v1("PROXY TCP4 192.0.2.7 10.0.0.1 56324 443\r", &pi,
	    &why), 0);
	/* Malformed. */
	ck_assert_int_eq(v1("PROXY TCP4 192.0.2.7  10.0.0.1 1 2\r\n", &pi,
	    &why), -1);
	ck_assert_int_eq(v1("PROXY TCP4 2001:db8::1 10.0.0.1 1 2\r\n", &pi,
	    &why), -1);
	ck_assert_int_eq(v1("PROXY TCP6 10.0.0.2 10.0.0.1 1 2\r\n", &pi,
	    &why), -1);
	ck_assert_int_eq(v1("PROXY TCP4 10.0.0.2 10.0.0.1 65536 2\r\n", &pi,
	    &why), -1);
	ck_assert_int_eq(v1("PROXY TCP4 10.0.0.2 10.0.0.1 080 2\r\n", &pi,
	    &why), -1);
	ck_assert_int_eq(v1("PROXY TCP4 10.0.0.2 10.0.0.1 1\r\n", &pi,
	    &why), -1);
	ck_assert_int_eq(v1("PROXY UDP4 10.0.0.2 10.0.0.1 1 2\r\n", &pi,
	    &why), -1);
	ck_assert_int_eq(v1("PROXY TCP4 10.0.0.2 10.0.0.1 1 2\n", &pi,
	    &why), -1);
	ck_assert_int_eq(v1("PROXY TCP4 10.0.0.2 10.0.0.1 1 2 3\r\n", &pi,
	    &why), -1);
	ck_assert_ptr_nonnull(why);
	/* No CRLF within 107 bytes. */
	{
		char	long_line[200];

		memset(long_line, 'x', sizeof long_line);
		memcpy(long_line, "PROXY UNKNOWN ", 14);
		long_line[sizeof long_line - 1] = '\0';
		ck_assert_int_eq(v1(long_line, &pi, &why), -1);
	}
	/* Not a PROXY header at all. */
	ck_assert_int_eq(v1("GET / HTTP/1.1\r\n", &pi, &why), -1);
}
END_TEST

static const unsigned char sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};

/* Build a version 2 header: command, family, the address block, tlvs. */
static size_t
v2(unsigned char *out, int cmd, int fam, const unsigned char *addr,
    size_t alen, const unsigned char *tlv, size_t tlen)
{
	size_t	len = alen + tlen;

	memcpy(out, sig, 12);
	out[12] = (unsigned char)(0x20 | cmd);
	out[13] = (unsigned char)fam;
	out[14] = (unsigned char)(len >> 8);
	out[15] = (unsigned char)len;
	if (alen > 0)
		memcpy(out + 16, addr, alen);
	if (tlen > 0)
		memcpy(out + 16 + alen, tlv, tlen);
	return (16 + len);
}

START_TEST(test_v2)
{
	unsigned char		 buf[4096], a4[12], a6[36];
	static const unsigned char tlv[] = { 0x01, 0x00, 0x02, 'h', '2',
	    0x05, 0x00, 0x00 };
	struct proxy_info	 pi;
	const char		*why;
	size_t			 n, i;

	inet_pton(AF_INET, "198.51.100.9", a4);
	inet_pton(AF_INET, "10.0.0.1", a4 + 4);
	a4[8] = 0xc3;
	a4[9] = 0x50;
	a4[10] = 0x01;
	a4[11] = 0xbb;
	n = v2(buf, 1, 0x11, a4, sizeof a4, NULL, 0);
	ck_assert_int_eq(proxy_detect(buf, n), 1);
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), (ssize_t)n);
	ck_assert_int_eq(pi.version, 2);
	ck_assert(pi.has_addr);
	ck_assert_str_eq(fmt(&pi.src), "198.51.100.9");
	ck_assert_uint_eq(pi.sport, 50000);
	/* Every shorter prefix asks for more. */
	for (i = 0; i < n; i++)
		ck_assert_int_eq(proxy_parse(buf, i, &pi, &why), 0);
	/* With TLVs, and what follows left alone. */
	n = v2(buf, 1, 0x11, a4, sizeof a4, tlv, sizeof tlv);
	memcpy(buf + n, "GET", 3);
	ck_assert_int_eq(proxy_parse(buf, n + 3, &pi, &why), (ssize_t)n);
	/* IPv6. */
	memset(a6, 0, sizeof a6);
	inet_pton(AF_INET6, "2001:db8::9", a6);
	inet_pton(AF_INET6, "::1", a6 + 16);
	a6[32] = 0x04;
	a6[33] = 0xd2;
	n = v2(buf, 1, 0x21, a6, sizeof a6, NULL, 0);
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), (ssize_t)n);
	ck_assert_str_eq(fmt(&pi.src), "2001:db8::9");
	ck_assert_uint_eq(pi.sport, 1234);
	/* LOCAL (a health check): no address, the peer stays. */
	n = v2(buf, 0, 0x00, NULL, 0, NULL, 0);
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), 16);
	ck_assert(!pi.has_addr);
	n = v2(buf, 0, 0x11, a4, sizeof a4, NULL, 0);
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), (ssize_t)n);
	ck_assert(!pi.has_addr);
	/* UDP and unix sockets: taken, address ignored. */
	n = v2(buf, 1, 0x12, a4, sizeof a4, NULL, 0);
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), (ssize_t)n);
	ck_assert(!pi.has_addr);
	/* Malformed. */
	n = v2(buf, 2, 0x11, a4, sizeof a4, NULL, 0);
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), -1);
	n = v2(buf, 1, 0x13, a4, sizeof a4, NULL, 0);
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), -1);
	n = v2(buf, 1, 0x21, a4, sizeof a4, NULL, 0);	/* too short */
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), -1);
	n = v2(buf, 1, 0x11, a4, sizeof a4, tlv, 4);	/* a cut TLV */
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), -1);
	n = v2(buf, 1, 0x11, a4, sizeof a4, NULL, 0);
	buf[12] = 0x11;					/* version 1 */
	ck_assert_int_eq(proxy_parse(buf, n, &pi, &why), -1);
	/* Longer than we take. */
	n = v2(buf, 1, 0x11, a4, sizeof a4, NULL, 0);
	buf[14] = 0x10;
	buf[15] = 0x00;
	ck_assert_int_eq(proxy_parse(buf, sizeof buf, &pi, &why), -1);
	/* The signature, cut short: cannot tell yet. */
	ck_assert_int_eq(proxy_detect(sig, 5), -1);
	ck_assert_int_eq(proxy_detect((const unsigned char *)"\r\nX", 3), 0);
	ck_assert_int_eq(proxy_detect((const unsigned char *)"POST", 4), 0);
	ck_assert_int_eq(proxy_detect((const unsigned char *)"PRO", 3), -1);
}
END_TEST

/* A predicate: 10.0.0.0/8 and ::1 are proxies. */
static int
trusted(const struct netaddr *a, void *arg)
{
	struct netblock	b;

	netblock_parse("10.0.0.0/8", 10, &b);
	if (netblock_match(&b, a))
		return (1);
	netblock_parse("::1", 3, &b);
	return (netblock_match(&b, a));
}

/* Walk a list of header values (NULL-terminated). */
static int
xff(const char **v, struct netaddr *client, const char **why)
{
	size_t	lens[8], n;

	for (n = 0; v[n] != NULL; n++)
		lens[n] = strlen(v[n]);
	return (xff_client(v, lens, n, trusted, NULL, client, why));
}

START_TEST(test_xff)
{
	struct netaddr	 c;
	const char	*why;
	const char	*one[] = { "203.0.113.5", NULL };
	const char	*chain[] = { "203.0.113.5, 10.1.1.1,10.2.2.2", NULL };
	const char	*spoof[] = { "6.6.6.6, 203.0.113.5", NULL };
	const char	*two[] = { "6.6.6.6", "203.0.113.5 , 10.0.0.9", NULL };
	const char	*all[] = { "10.0.0.1, ::1", NULL };
	const char	*bad[] = { "203.0.113.5, junk, 10.0.0.1", NULL };
	const char	*badfar[] = { "junk, 203.0.113.5", NULL };
	const char	*empty[] = { "", NULL };
	const char	*trailing[] = { "203.0.113.5,", NULL };
	const char	*port[] = { "203.0.113.5:1234", NULL };
	const char	*v6[] = { "[2001:db8::5], 10.0.0.1", NULL };
	char		 many[40 * 12];
	const char	*hops[] = { many, NULL };
	size_t		 i, n = 0;

	ck_assert_int_eq(xff(one, &c, &why), 0);
	ck_assert_str_eq(fmt(&c), "203.0.113.5");
	ck_assert_int_eq(xff(chain, &c, &why), 0);
	ck_assert_str_eq(fmt(&c), "203.0.113.5");
	/* What the client wrote before the nearest untrusted hop is never
	 * read. */
	ck_assert_int_eq(xff(spoof, &c, &why), 0);
	ck_assert_str_eq(fmt(&c), "203.0.113.5");
	ck_assert_int_eq(xff(badfar, &c, &why), 0);
	ck_assert_str_eq(fmt(&c), "203.0.113.5");
	/* Several headers are one list, in order. */
	ck_assert_int_eq(xff(two, &c, &why), 0);
	ck_assert_str_eq(fmt(&c), "203.0.113.5");
	/* All trusted: the farthest. */
	ck_assert_int_eq(xff(all, &c, &why), 0);
	ck_assert_str_eq(fmt(&c), "10.0.0.1");
	ck_assert_int_eq(xff(v6, &c, &why), 0);
	ck_assert_str_eq(fmt(&c), "2001:db8::5");
	/* Malformed where it is walked. */
	ck_assert_int_eq(xff(bad, &c, &why), -1);
	ck_assert_int_eq(xff(empty, &c, &why), -1);
	ck_assert_int_eq(xff(trailing, &c, &why), -1);
	ck_assert_int_eq(xff(port, &c, &why), -1);
	/* Bounded: 40 trusted hops are too many. */
	for (i = 0; i < 40; i++)
		n += (size_t)snprintf(many + n, sizeof many - n, "%s10.0.0.%zu",
		    i > 0 ? "," : "", i + 1);
	ck_assert_int_eq(xff(hops, &c, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "hops"));
}
END_TEST

static Suite *
proxy_suite(void)
{
	Suite	*s = suite_create("proxy");
	TCase	*tc = tcase_create("parse");

	tcase_add_test(tc, test_addresses);
	tcase_add_test(tc, test_blocks);
	tcase_add_test(tc, test_v1);
	tcase_add_test(tc, test_v2);
	tcase_add_test(tc, test_xff);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(proxy_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}

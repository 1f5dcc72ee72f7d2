/* SPDX-License-Identifier: ISC */
/*
 * Fuzz what a proxy says about the peer (common/proxy_parse.c).
 *
 * The first byte chooses a parser; the rest is its input.
 *
 *	0	proxy_parse: a header it takes (n > 0) is taken the same from
 *		exactly its n bytes, and every shorter prefix of those is
 *		only incomplete (0); what it says of the client is an
 *		address that formats and parses back to itself.  proxy_detect
 *		agrees with it on whether a header begins the input.
 *	1	X-Forwarded-For: the input split at NUL bytes into at most 8
 *		header values, proxies being the addresses whose last byte is
 *		odd; a client found formats and parses back to itself, no
 *		entry is walked twice, and the client is a proxy only if
 *		every entry was walked (all were proxies).
 *	2	netblock_parse and netaddr_parse: a block that parses holds its
 *		own address, and formats to an address that parses back.
 */
#include "config.h"

#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_parse.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

#define MAX_INPUT	(PROXY_V2_MAX + 64)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* An address formats to text that parses back to the same address. */
static void
check_roundtrip(const struct netaddr *a)
{
	char		text[NETADDR_TEXT_MAX];
	struct netaddr	b;

	CHECK(a->family == AF_INET || a->family == AF_INET6);
	netaddr_format(a, text, sizeof text);
	CHECK(netaddr_parse(text, strlen(text), &b) == 0);
	CHECK(b.family == a->family);
	CHECK(memcmp(a->a, b.a, a->family == AF_INET ? 4 : 16) == 0);
}

static void
fuzz_header(const uint8_t *p, size_t len)
{
	struct proxy_info	 pi, again;
	const char		*why = NULL;
	ssize_t			 n, m;
	size_t			 i;
	int			 d;

	n = proxy_parse(p, len, &pi, &why);
	CHECK(n <= (ssize_t)len);
	d = proxy_detect(p, len);
	if (d == 0)
		CHECK(n == -1);
	if (d == -1)
		CHECK(n == 0);
	if (n < 0)
		CHECK(why != NULL && why[0] != '\0');
	if (n <= 0)
		return;
	CHECK(d == 1);
	CHECK(pi.version == 1 || pi.version == 2);
	CHECK(pi.version == 1 ? n <= PROXY_V1_MAX : n <= PROXY_V2_MAX);
	if (pi.has_addr)
		check_roundtrip(&pi.src);
	m = proxy_parse(p, (size_t)n, &again, &why);
	CHECK(m == n);
	CHECK(again.has_addr == pi.has_addr);
	if (pi.has_addr)
		CHECK(memcmp(&again.src, &pi.src, sizeof pi.src) == 0 &&
		    again.sport == pi.sport);
	for (i = 0; i < (size_t)n; i++)
		CHECK(proxy_parse(p, i, &again, &why) == 0);
}

/* A proxy: an address whose last byte is odd. */
static int
odd(const struct netaddr *a, void *arg)
{
	int	*walked = arg;

	(*walked)++;
	return (a->a[a->family == AF_INET ? 3 : 15] & 1);
}

static void
fuzz_xff(const uint8_t *p, size_t len)
{
	const char	*values[8], *why = NULL;
	size_t		 lens[8], n = 0, start = 0, i, k, entries;
	struct netaddr	 client;
	int		 walked = 0, trusted, r;

	for (i = 0; i <= len && n < 8; i++) {
		if (i == len || p[i] == '\0') {
			values[n] = (const char *)p + start;
			lens[n++] = i - start;
			start = i + 1;
		}
	}
	r = xff_client(values, lens, n, odd, &walked, &client, &why);
	CHECK(walked <= XFF_MAX_HOPS);
	if (r != 0) {
		CHECK(r == -1 && why != NULL);
		return;
	}
	check_roundtrip(&client);
	/* Every entry walked at most once; a trusted client only when every
	 * entry was walked (all of them are proxies: the farthest is it). */
	for (i = 0, entries = 0; i < n; i++) {
		entries++;
		for (k = 0; k < lens[i]; k++)
			entries += values[i][k] == ',';
	}
	CHECK((size_t)walked <= entries);
	trusted = 0;
	if (odd(&client, &trusted))
		CHECK((size_t)walked == entries);
}

static void
fuzz_block(const uint8_t *p, size_t len)
{
	struct netblock	 b;
	struct netaddr	 a;

	if (netaddr_parse((const char *)p, len, &a) == 0)
		check_roundtrip(&a);
	if (netblock_parse((const char *)p, len, &b) != 0)
		return;
	CHECK(b.bits <= (b.addr.family == AF_INET ? 32u : 128u));
	check_roundtrip(&b.addr);
	CHECK(netblock_match(&b, &b.addr));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return (0);
	if (size > MAX_INPUT)
		size = MAX_INPUT;
	switch (data[0] % 3) {
	case 0:
		fuzz_header(data + 1, size - 1);
		break;
	case 1:
		fuzz_xff(data + 1, size - 1);
		break;
	default:
		fuzz_block(data + 1, size - 1);
		break;
	}
	return (0);
}

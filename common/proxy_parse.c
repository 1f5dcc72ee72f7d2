/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <string.h>

#include "proxy_parse.h"

static const unsigned char v2_sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};
static const unsigned char v4_mapped[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

/* Make an IPv4-mapped IPv6 address an IPv4 one. */
static void
netaddr_unmap(struct netaddr *a)
{
	if (a->family == AF_INET6 && memcmp(a->a, v4_mapped, 12) == 0) {
		memmove(a->a, a->a + 12, 4);
		memset(a->a + 4, 0, 12);
		a->family = AF_INET;
	}
}

int
netaddr_parse(const char *s, size_t len, struct netaddr *out)
{
	char	buf[INET6_ADDRSTRLEN + 2];

	memset(out, 0, sizeof *out);
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
		if (len == 0 || len >= sizeof buf ||
		    memchr(s, ':', len) == NULL)
			return (-1);
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (inet_pton(AF_INET6, buf, out->a) != 1)
			return (-1);
		out->family = AF_INET6;
		netaddr_unmap(out);
		return (0);
	}
	if (len == 0 || len >= sizeof buf || memchr(s, '\0', len) != NULL)
		return (-1);
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET, buf, out->a) == 1) {
		out->family = AF_INET;
		return (0);
	}
	if (inet_pton(AF_INET6, buf, out->a) == 1) {
		out->family = AF_INET6;
		netaddr_unmap(out);
		return (0);
	}
	return (-1);
}

int
netaddr_from_sockaddr(const struct sockaddr *sa, struct netaddr *out)
{
	const struct sockaddr_in	*s4 = (const void *)sa;
	const struct sockaddr_in6	*s6 = (const void *)sa;

	memset(out, 0, sizeof *out);
	if (sa->sa_family == AF_INET) {
		out->family = AF_INET;
		memcpy(out->a, &s4->sin_addr, 4);
		return (0);
	}
	if (sa->sa_family == AF_INET6) {
		out->family = AF_INET6;
		memcpy(out->a, &s6->sin6_addr, 16);
		netaddr_unmap(out);
		return (0);
	}
	return (-1);
}

void
netaddr_format(const struct netaddr *a, char *buf, size_t len)
{
	if (len == 0)
		return;
	if (inet_ntop(a->family == AF_INET ? AF_INET : AF_INET6, a->a, buf,
	    (socklen_t)len) == NULL)
		buf[0] = '\0';
}

/* Clear the bits of an address beyond a prefix. */
static void
netaddr_mask(unsigned char *a, size_t n, unsigned int bits)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (bits >= 8)
			bits -= 8;
		else {
			a[i] &= (unsigned char)(0xff << (8 - bits));
			bits = 0;
		}
	}
}

int
netblock_parse(const char *s, size_t len, struct netblock *out)
{
	const char	*slash = memchr(s, '/', len);
	size_t		 alen = slash != NULL ? (size_t)(slash - s) : len;
	size_t		 i, max;
	unsigned int	 bits = 0;
	int		 v6form;

	memset(out, 0, sizeof *out);
	if (netaddr_parse(s, alen, &out->addr) != 0)
		return (-1);
	/* An IPv6 form (a mapped address too) counts IPv6 bits. */
	v6form = memchr(s, ':', alen) != NULL;
	max = v6form ? 128 : 32;
	if (slash == NULL) {
		out->bits = out->addr.family == AF_INET ? 32 : 128;
		return (0);
	}
	/* 1 to 3 digits, no leading zero (but "0"), at most max. */
	if (len - alen < 2 || len - alen > 4 ||
	    (s[alen + 1] == '0' && len - alen > 2))
		return (-1);
	for (i = alen + 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		bits = bits * 10 + (unsigned int)(s[i] - '0');
	}
	if (bits > max)
		return (-1);
	if (out->addr.family == AF_INET && v6form) {
		if (bits < 96)
			return (-1);
		bits -= 96;
	}
	out->bits = bits;
	netaddr_mask(out->addr.a, out->addr.family == AF_INET ? 4 : 16, bits);
	return (0);
}

int
netblock_match(const struct netblock *b, const struct netaddr *a)
{
	unsigned char	 x[16];
	size_t		 n;

	if (a->family != b->addr.family)
		return (0);
	n = a->family == AF_INET ? 4 : 16;
	memcpy(x, a->a, n);
	netaddr_mask(x, n, b->bits);
	return (memcmp(x, b->addr.a, n) == 0);
}

int
proxy_detect(const unsigned char *p, size_t len)
{
	static const char	v1[] = "PROXY ";
	size_t			n;

	n = len < sizeof v2_sig ? len : sizeof v2_sig;
	if (memcmp(p, v2_sig, n) == 0)
		return (n == sizeof v2_sig ? 1 : -1);
	n = len < sizeof v1 - 1 ? len : sizeof v1 - 1;
	if (memcmp(p, v1, n) == 0)
		return (n == sizeof v1 - 1 ? 1 : -1);
	return (0);
}

/* Read a decimal port, "0" to "65535" without a leading zero. */
static int
proxy_port(const char *s, size_t len, uint16_t *port)
{
	unsigned long	v = 0;
	size_t		i;

	if (len == 0 || len > 5 || (s[0] == '0' && len > 1))
		return (-1);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > 65535)
		return (-1);
	*port = (uint16_t)v;
	return (0);
}

/*
 * Version 1: "PROXY TCP4 src dst sport dport\r\n", or "PROXY UNKNOWN"
 * and anything up to CRLF, at most 107 bytes; single spaces.
 */
static ssize_t
proxy_v1(const char *p, size_t len, struct proxy_info *pi, const char **why)
{
	const char	*f[6], *end;
	size_t		 fl[6], i, n, linelen;
	struct netaddr	 dst;
	uint16_t	 dport;
	int		 fam;

	end = NULL;
	for (i = 0; i < len && i + 2 <= PROXY_V1_MAX; i++) {
		if (p[i] == '\r' && i + 1 < len && p[i + 1] == '\n') {
			end = p + i;
			break;
		}
		if (p[i] == '\n' || p[i] == '\0' ||
		    (p[i] == '\r' && i + 1 < len)) {
			*why = "PROXY v1: a control character before CRLF";
			return (-1);
		}
	}
	if (end == NULL) {
		if (len >= PROXY_V1_MAX) {
			*why = "PROXY v1: no CRLF within 107 bytes";
			return (-1);
		}
		return (0);
	}
	linelen = (size_t)(end - p);
	/* Split on single spaces into at most six fields. */
	n = 0;
	f[0] = p;
	for (i = 0; i < linelen; i++) {
		if (p[i] != ' ')
			continue;
		if (n == 5) {
			*why = "PROXY v1: too many fields";
			return (-1);
		}
		fl[n] = (size_t)(p + i - f[n]);
		f[++n] = p + i + 1;
	}
	fl[n] = (size_t)(end - f[n]);
	n++;
	memset(pi, 0, sizeof *pi);
	pi->version = 1;
	if (n >= 2 && fl[1] == 7 && memcmp(f[1], "UNKNOWN", 7) == 0)
		return ((ssize_t)linelen + 2);
	if (n != 6) {
		*why = "PROXY v1: expected PROXY TCP4|TCP6 src dst sport dport";
		return (-1);
	}
	for (i = 0; i < 6; i++) {
		if (fl[i] == 0) {
			*why = "PROXY v1: an empty field";
			return (-1);
		}
	}
	if (fl[1] == 4 && memcmp(f[1], "TCP4", 4) == 0)
		fam = AF_INET;
	else if (fl[1] == 4 && memcmp(f[1], "TCP6", 4) == 0)
		fam = AF_INET6;
	else {
		*why = "PROXY v1: unknown protocol (TCP4, TCP6 or UNKNOWN)";
		return (-1);
	}
	/* The address must be of the family named: no brackets, no mapping
	 * across. */
	if (f[2][0] == '[' || f[3][0] == '[' ||
	    netaddr_parse(f[2], fl[2], &pi->src) != 0 ||
	    netaddr_parse(f[3], fl[3], &dst) != 0 ||
	    (fam == AF_INET) != (memchr(f[2], ':', fl[2]) == NULL) ||
	    (fam == AF_INET) != (memchr(f[3], ':', fl[3]) == NULL)) {
		*why = "PROXY v1: bad address";
		return (-1);
	}
	if (proxy_port(f[4], fl[4], &pi->sport) != 0 ||
	    proxy_port(f[5], fl[5], &dport) != 0) {
		*why = "PROXY v1: bad port";
		return (-1);
	}
	pi->has_addr = 1;
	return ((ssize_t)linelen + 2);
}

/* Check that TLVs exactly fill p[0..len). */
static int
proxy_tlvs(const unsigned char *p, size_t len)
{
	size_t	i = 0, vl;

	while (i < len) {
		if (len - i < 3)
			return (-1);
		vl = ((size_t)p[i + 1] << 8) | p[i + 2];
		if (len - i - 3 < vl)
			return (-1);
		i += 3 + vl;
	}
	return (0);
}

/* Version 2: a binary header. */
static ssize_t
proxy_v2(const unsigned char *p, size_t len, struct proxy_info *pi,
    const char **why)
{
	size_t		total, alen;
	unsigned int	cmd, fam;

	if (len < 16)
		return (0);
	if ((p[12] >> 4) != 2) {
		*why = "PROXY v2: unknown version";
		return (-1);
	}
	cmd = p[12] & 0x0f;
	if (cmd > 1) {
		*why = "PROXY v2: unknown command";
		return (-1);
	}
	total = 16 + (((size_t)p[14] << 8) | p[15]);
	if (total > PROXY_V2_MAX) {
		*why = "PROXY v2: header too long";
		return (-1);
	}
	if (len < total)
		return (0);
	memset(pi, 0, sizeof *pi);
	pi->version = 2;
	fam = p[13];
	switch (fam) {
	case 0x11:		/* TCP over IPv4 */
	case 0x12:		/* UDP over IPv4 */
		alen = 12;
		break;
	case 0x21:		/* over IPv6 */
	case 0x22:
		alen = 36;
		break;
	case 0x31:		/* unix sockets */
	case 0x32:
		alen = 216;
		break;
	case 0x00:		/* unspecified */
		alen = 0;
		break;
	default:
		*why = "PROXY v2: unknown address family";
		return (-1);
	}
	if (total - 16 < alen) {
		*why = "PROXY v2: address block too short";
		return (-1);
	}
	if (proxy_tlvs(p + 16 + alen, total - 16 - alen) != 0) {
		*why = "PROXY v2: malformed TLV";
		return (-1);
	}
	/* LOCAL (a health check of the proxy's own): the real peer. */
	if (cmd == 0 || (fam != 0x11 && fam != 0x21))
		return ((ssize_t)total);
	if (fam == 0x11) {
		pi->src.family = AF_INET;
		memcpy(pi->src.a, p + 16, 4);
		pi->sport = (uint16_t)((p[24] << 8) | p[25]);
	} else {
		pi->src.family = AF_INET6;
		memcpy(pi->src.a, p + 16, 16);
		pi->sport = (uint16_t)((p[48] << 8) | p[49]);
		netaddr_unmap(&pi->src);
	}
	pi->has_addr = 1;
	return ((ssize_t)total);
}

ssize_t
proxy_parse(const unsigned char *p, size_t len, struct proxy_info *pi,
    const char **why)
{
	switch (proxy_detect(p, len)) {
	case -1:
		return (0);
	case 0:
		*why = "not a PROXY protocol header";
		return (-1);
	}
	if (p[0] == 'P')
		return (proxy_v1((const char *)p, len, pi, why));
	return (proxy_v2(p, len, pi, why));
}

/* Is c optional white space? */
static int
xff_ows(char c)
{
	return (c == ' ' || c == '\t');
}

int
xff_client(const char *const *values, const size_t *lens, size_t n,
    int (*trusted)(const struct netaddr *, void *), void *arg,
    struct netaddr *client, const char **why)
{
	const char	*v;
	size_t		 end, start, a, b, hops = 0, k;
	int		 have = 0;

	/* From the last header's last entry back to the first's first. */
	for (k = n; k-- > 0;) {
		v = values[k];
		end = lens[k];
		for (;;) {
			start = end;
			while (start > 0 && v[start - 1] != ',')
				start--;
			/* Trim optional white space around the entry. */
			a = start;
			b = end;
			while (a < b && xff_ows(v[a]))
				a++;
			while (b > a && xff_ows(v[b - 1]))
				b--;
			if (++hops > XFF_MAX_HOPS) {
				*why = "X-Forwarded-For: more than 32 hops";
				return (-1);
			}
			if (netaddr_parse(v + a, b - a, client) != 0) {
				*why = "X-Forwarded-For: an entry is not an "
				    "IP address";
				return (-1);
			}
			have = 1;
			if (!trusted(client, arg))
				return (0);
			if (start == 0)
				break;
			end = start - 1;
		}
	}
	if (!have) {
		*why = "X-Forwarded-For: empty";
		return (-1);
	}
	return (0);
}

/* SPDX-License-Identifier: ISC */
/*
 * What a proxy in front of the gateway says about the peer: network
 * addresses and blocks (trusted_proxies), the PROXY protocol header
 * (versions 1 and 2) that HAProxy and others send before the request, and
 * the X-Forwarded-For header.  Pure functions over bounded byte spans,
 * strict, fuzzed (t/fuzz/fuzz_proxy.c).
 */
#ifndef MCPS_PROXY_PARSE_H
#define MCPS_PROXY_PARSE_H

#include <sys/types.h>
#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>

/* An IPv4 or IPv6 address; an IPv4-mapped IPv6 address is IPv4. */
struct netaddr {
	int		family;		/* AF_INET or AF_INET6 */
	unsigned char	a[16];		/* network order; IPv4 in a[0..3] */
};

/* An address block: "10.0.0.0/8", "::1", "fd00::/8". */
struct netblock {
	struct netaddr	addr;		/* bits beyond the prefix are zero */
	unsigned int	bits;		/* prefix length */
};

#define NETADDR_TEXT_MAX	48	/* formatted, with the NUL */

/*
 * Parse an address: dotted IPv4, or IPv6 (in brackets or not), nothing
 * else (no port, no zone).  -1 if s[0..len) is not exactly one.
 */
int	netaddr_parse(const char *s, size_t len, struct netaddr *);
/* The address of a socket; -1 for another family. */
int	netaddr_from_sockaddr(const struct sockaddr *, struct netaddr *);
/* Format as text (no brackets). */
void	netaddr_format(const struct netaddr *, char *buf, size_t len);
/* Parse "address" or "address/bits"; -1 if s[0..len) is not one. */
int	netblock_parse(const char *s, size_t len, struct netblock *);
/* Is an address in a block? */
int	netblock_match(const struct netblock *, const struct netaddr *);

/* PROXY protocol. */
#define PROXY_V1_MAX	107		/* the longest version 1 line */
#define PROXY_V2_MAX	(16 + 2048)	/* the longest version 2 header we
					   take (addresses and TLVs) */

struct proxy_info {
	int		version;	/* 1 or 2 */
	int		has_addr;	/* 0: LOCAL or UNKNOWN, keep the peer */
	struct netaddr	src;		/* the client, when has_addr */
	uint16_t	sport;
};

/*
 * Does the input begin with a PROXY header?  1 if it does (either
 * version), 0 if it cannot, -1 if it is too short to tell yet.
 */
int	proxy_detect(const unsigned char *p, size_t len);
/*
 * Parse a PROXY header at the start of p[0..len): the bytes it takes
 * (> 0), 0 if more are needed, -1 if it is malformed (*why says how).
 */
ssize_t	proxy_parse(const unsigned char *p, size_t len, struct proxy_info *,
	    const char **why);

/* X-Forwarded-For. */
#define XFF_MAX_HOPS	32		/* entries walked at most */

/*
 * Find the client in X-Forwarded-For values (each header's value, in the
 * order the headers came; a value is a comma-separated list, the nearest
 * hop last).  Walking from the nearest hop, entries that trusted() accepts
 * are proxies and skipped; the first other one is the client.  If every
 * entry is trusted, the farthest is the client.  0 with *client set; -1
 * (*why says why) if an entry walked is not an address, or more than
 * XFF_MAX_HOPS would be walked.
 */
int	xff_client(const char *const *values, const size_t *lens, size_t n,
	    int (*trusted)(const struct netaddr *, void *), void *arg,
	    struct netaddr *client, const char **why);

#endif

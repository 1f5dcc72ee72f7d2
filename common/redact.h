/* SPDX-License-Identifier: ISC */
/*
 * URLs fit to show.  An upstream's or a provider's URL may carry
 * credentials (https://user:pass@host/, ?api_key=...); wherever the
 * gateway shows one (its log, mcpctl, an error a client gets) it shows
 * this form instead: user information, and the values of query and
 * fragment parameters whose names look secret, replaced by "***".  The
 * rest (scheme, host, port, path, other parameters) is kept, so the URL
 * can still be recognised.
 */
#ifndef MCPS_REDACT_H
#define MCPS_REDACT_H

#include <stddef.h>

#define REDACT_MASK	"***"

/*
 * Write url, redacted, into buf (len bytes, NUL-terminated, "..." at the
 * end if it did not fit) and return buf.  Whatever is cut off is cut
 * after redaction, so no part of a secret is ever shown.  Malformed URLs
 * are redacted too: an '@' before the host ends user information, and
 * one after an authority that is no host and port (a password with an
 * unencoded '/', '?' or '#') does as well.
 */
const char	*url_redact(const char *url, char *buf, size_t len);

/* Does a query parameter's name (percent-encoded, len bytes) look secret? */
int		 redact_secret_name(const char *name, size_t len);

#endif

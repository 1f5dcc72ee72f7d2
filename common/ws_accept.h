/* SPDX-License-Identifier: ISC */
/*
 * The Sec-WebSocket-Accept value of the WebSocket opening handshake (RFC
 * 6455, sections 1.3 and 4.2.2): base64 of the SHA-1 digest of the
 * client's Sec-WebSocket-Key followed by the protocol's GUID.  A client
 * checks the server's answer against it; a server sends it.  It links
 * libcrypto, so it is built into libcommon_ws.a, which mcp-worker-stdio
 * does not link.
 */
#ifndef MCPS_WS_ACCEPT_H
#define MCPS_WS_ACCEPT_H

#include <stddef.h>

#define WS_ACCEPT_LEN	28	/* base64 of a 20-byte SHA-1 digest */
#define WS_KEY_MAX	64	/* longest key taken; a valid one has 24 */

/*
 * Write the Sec-WebSocket-Accept value for the keylen bytes of key (not
 * NUL-terminated) into out, which has WS_ACCEPT_LEN + 1 bytes.  Returns 0,
 * or -1 with out empty if the key is longer than WS_KEY_MAX or the digest
 * cannot be computed.
 */
int	ws_accept(const char *key, size_t keylen, char *out);

#endif

/* SPDX-License-Identifier: ISC */
/*
 * OAuth tokens of upstreams, encrypted at rest (token_store.h).  The
 * cryptography is OpenSSL's (EVP AES-256-GCM, RAND_bytes, SHA-256); files
 * are small and written rarely (a login, a refresh), so they are written
 * on the loop, as the pins are.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "log.h"
#include "token_store.h"
#include "xmalloc.h"

#define TS_AAD_PREFIX	"mcp-supervisor oauth token v1"
#define TS_KEY_FILE	"key"

struct token_store {
	char		*dir;
	unsigned char	 key[TS_KEY_LEN];
};

int
token_seal(const unsigned char key[TS_KEY_LEN], const void *aad,
    size_t aadlen, const void *data, size_t len, unsigned char **out,
    size_t *outlen)
{
	EVP_CIPHER_CTX	*ctx;
	unsigned char	*buf, *nonce, *ct;
	int		 n, f, ok;

	*out = NULL;
	if (len > TS_MAX || aadlen > INT_MAX)
		return (-1);
	buf = xmalloc(TS_MAGIC_LEN + TS_NONCE_LEN + len + TS_TAG_LEN);
	memcpy(buf, TS_MAGIC, TS_MAGIC_LEN);
	nonce = buf + TS_MAGIC_LEN;
	ct = nonce + TS_NONCE_LEN;
	if (RAND_bytes(nonce, TS_NONCE_LEN) != 1)
		fatalx("token store: RAND_bytes failed");
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		fatalx("EVP_CIPHER_CTX_new");
	ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) ==
	    1 && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN,
	    TS_NONCE_LEN, NULL) == 1 &&
	    EVP_EncryptInit_ex(ctx, NULL, NULL, key, nonce) == 1 &&
	    EVP_EncryptUpdate(ctx, NULL, &n, aad, (int)aadlen) == 1 &&
	    EVP_EncryptUpdate(ctx, ct, &n, data, (int)len) == 1 &&
	    EVP_EncryptFinal_ex(ctx, ct + n, &f) == 1 &&
	    (size_t)(n + f) == len &&
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TS_TAG_LEN,
	    ct + len) == 1;
	EVP_CIPHER_CTX_free(ctx);
	if (!ok) {
		free(buf);
		return (-1);
	}
	*out = buf;
	*outlen = TS_MAGIC_LEN + TS_NONCE_LEN + len + TS_TAG_LEN;
	return (0);
}

int
token_unseal(const unsigned char key[TS_KEY_LEN], const void *aad,
    size_t aadlen, const unsigned char *in, size_t inlen, unsigned char **out,
    size_t *outlen)
{
	EVP_CIPHER_CTX	*ctx;
	const unsigned char *nonce, *ct;
	unsigned char	*pt, tag[TS_TAG_LEN];
	size_t		 len;
	int		 n, f, ok;

	*out = NULL;
	if (inlen < TS_MAGIC_LEN + TS_NONCE_LEN + TS_TAG_LEN ||
	    inlen - (TS_MAGIC_LEN + TS_NONCE_LEN + TS_TAG_LEN) > TS_MAX ||
	    memcmp(in, TS_MAGIC, TS_MAGIC_LEN) != 0 || aadlen > INT_MAX)
		return (-1);
	len = inlen - (TS_MAGIC_LEN + TS_NONCE_LEN + TS_TAG_LEN);
	nonce = in + TS_MAGIC_LEN;
	ct = nonce + TS_NONCE_LEN;
	memcpy(tag, ct + len, TS_TAG_LEN);
	pt = xmalloc(len + 1);
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		fatalx("EVP_CIPHER_CTX_new");
	ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) ==
	    1 && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN,
	    TS_NONCE_LEN, NULL) == 1 &&
	    EVP_DecryptInit_ex(ctx, NULL, NULL, key, nonce) == 1 &&
	    EVP_DecryptUpdate(ctx, NULL, &n, aad, (int)aadlen) == 1 &&
	    EVP_DecryptUpdate(ctx, pt, &n, ct, (int)len) == 1 &&
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TS_TAG_LEN,
	    tag) == 1 &&
	    EVP_DecryptFinal_ex(ctx, pt + n, &f) == 1 &&
	    (size_t)(n + f) == len;
	EVP_CIPHER_CTX_free(ctx);
	if (!ok) {
		OPENSSL_cleanse(pt, len + 1);
		free(pt);
		return (-1);
	}
	pt[len] = '\0';
	*out = pt;
	*outlen = len;
	return (0);
}

/* Read or make the key; 0, or -1 with err set. */
static int
key_load(struct token_store *ts, char *err, size_t errlen)
{
	struct stat	 st;
	unsigned char	 buf[TS_KEY_LEN + 1];
	char		*path;
	ssize_t		 n;
	int		 fd, dfd, rc = -1;

	xasprintf(&path, "%s/" TS_KEY_FILE, ts->dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* A new key: only this user may ever read it. */
		if (RAND_bytes(ts->key, TS_KEY_LEN) != 1)
			fatalx("token store: RAND_bytes failed");
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, ts->key, TS_KEY_LEN) != TS_KEY_LEN ||
		    fsync(fd) != 0) {
			snprintf(err, errlen, "cannot make %s: %s", path,
			    strerror(errno));
			if (fd >= 0) {
				close(fd);
				unlink(path);
			}
			goto out;
		}
		close(fd);
		if ((dfd = open(ts->dir, O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC)) >= 0) {
			fsync(dfd);
			close(dfd);
		}
		log_info("token store: a new key in %s", path);
		rc = 0;
		goto out;
	}
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		goto out;
	}
	if ((st.st_mode & 077) != 0 || st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: readable by others than its owner, "
		    "or not ours (mode %04o): it must be 0600", path,
		    (unsigned int)(st.st_mode & 07777));
		close(fd);
		goto out;
	}
	/* One byte more than a key: a longer file is no key either. */
	n = read(fd, buf, sizeof buf);
	close(fd);
	if (n != TS_KEY_LEN) {
		snprintf(err, errlen, "%s: not a key (%d bytes expected)",
		    path, TS_KEY_LEN);
		OPENSSL_cleanse(buf, sizeof buf);
		goto out;
	}
	memcpy(ts->key, buf, TS_KEY_LEN);
	OPENSSL_cleanse(buf, sizeof buf);
	rc = 0;
out:
	free(path);
	return (rc);
}

struct token_store *
token_store_open(const char *dir, char *err, size_t errlen)
{
	struct token_store	*ts;
	struct stat		 st;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make %s: %s", dir,
		    strerror(errno));
		return (NULL);
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", dir);
		return (NULL);
	}
	if ((st.st_mode & 077) != 0) {
		snprintf(err, errlen, "%s: open to others than its owner (mode "
		    "%04o): it must be 0700", dir,
		    (unsigned int)(st.st_mode & 07777));
		return (NULL);
	}
	ts = xcalloc(1, sizeof *ts);
	ts->dir = xstrdup(dir);
	if (key_load(ts, err, errlen) != 0) {
		token_store_close(ts);
		return (NULL);
	}
	return (ts);
}

void
token_store_close(struct token_store *ts)
{
	if (ts == NULL)
		return;
	OPENSSL_cleanse(ts->key, sizeof ts->key);
	free(ts->dir);
	free(ts);
}

/* The additional data of a record: what it is, and whose. */
static size_t
record_aad(const char *upstream, const char *identity, char *out, size_t len)
{
	int	n;

	n = snprintf(out, len, TS_AAD_PREFIX "%c%s%c%s", '\0', upstream, '\0',
	    identity);
	return (n < 0 || (size_t)n >= len ? 0 : (size_t)n);
}

/* The file of a record: a digest of its names, so that none is in a path. */
static char *
record_path(struct token_store *ts, const char *aad, size_t aadlen)
{
	unsigned char	 md[SHA256_DIGEST_LENGTH];
	char		 hex[2 * 16 + 1], *path;
	int		 i;

	SHA256((const unsigned char *)aad, aadlen, md);
	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	xasprintf(&path, "%s/%s.tok", ts->dir, hex);
	return (path);
}

/* Are names fit for a record? */
static int
names_ok(const char *upstream, const char *identity, char *err, size_t len)
{
	if (upstream[0] == '\0' || strlen(upstream) > TS_NAME_MAX ||
	    strlen(identity) > TS_NAME_MAX) {
		snprintf(err, len, "token store: a name is empty or too long");
		return (0);
	}
	return (1);
}

int
token_store_put(struct token_store *ts, const char *upstream,
    const char *identity, const void *data, size_t len, char *err,
    size_t errlen)
{
	char		 aad[sizeof TS_AAD_PREFIX + 2 * TS_NAME_MAX + 4];
	char		*path, *tmp;
	unsigned char	*sealed;
	size_t		 aadlen, n;
	int		 fd, dfd, saved;

	if (!names_ok(upstream, identity, err, errlen))
		return (-1);
	aadlen = record_aad(upstream, identity, aad, sizeof aad);
	if (token_seal(ts->key, aad, aadlen, data, len, &sealed, &n) != 0) {
		snprintf(err, errlen, "token store: a record over %d bytes",
		    TS_MAX);
		return (-1);
	}
	path = record_path(ts, aad, aadlen);
	xasprintf(&tmp, "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0 || write(fd, sealed, n) != (ssize_t)n || fsync(fd) != 0 ||
	    close(fd) != 0 || (fd = -1, rename(tmp, path) != 0)) {
		saved = errno;
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		snprintf(err, errlen, "token store: cannot write %s: %s", path,
		    strerror(saved));
		free(sealed);
		free(tmp);
		free(path);
		return (-1);
	}
	if ((dfd = open(ts->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(sealed);
	free(tmp);
	free(path);
	return (0);
}

unsigned char *
token_store_get(struct token_store *ts, const char *upstream,
    const char *identity, size_t *len, char *err, size_t errlen)
{
	char		 aad[sizeof TS_AAD_PREFIX + 2 * TS_NAME_MAX + 4];
	char		*path;
	unsigned char	*buf, *out = NULL;
	size_t		 aadlen, max = TS_MAGIC_LEN + TS_NONCE_LEN + TS_MAX +
			    TS_TAG_LEN;
	ssize_t		 n;
	int		 fd;

	err[0] = '\0';
	*len = 0;
	if (!names_ok(upstream, identity, err, errlen))
		return (NULL);
	aadlen = record_aad(upstream, identity, aad, sizeof aad);
	path = record_path(ts, aad, aadlen);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			snprintf(err, errlen, "token store: %s: %s", path,
			    strerror(errno));
		free(path);
		return (NULL);
	}
	buf = xmalloc(max + 1);
	n = read(fd, buf, max + 1);
	close(fd);
	if (n < 0 || (size_t)n > max ||
	    token_unseal(ts->key, aad, aadlen, buf, (size_t)n, &out, len) != 0)
		snprintf(err, errlen, "token store: %s does not open (changed, "
		    "truncated, or of another key or upstream)", path);
	free(buf);
	free(path);
	return (out);
}

int
token_store_delete(struct token_store *ts, const char *upstream,
    const char *identity, char *err, size_t errlen)
{
	char	 aad[sizeof TS_AAD_PREFIX + 2 * TS_NAME_MAX + 4];
	char	*path;
	int	 rc = 0;

	if (!names_ok(upstream, identity, err, errlen))
		return (-1);
	path = record_path(ts, aad, record_aad(upstream, identity, aad,
	    sizeof aad));
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, errlen, "token store: cannot remove %s: %s", path,
		    strerror(errno));
		rc = -1;
	}
	free(path);
	return (rc);
}

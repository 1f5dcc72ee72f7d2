/* SPDX-License-Identifier: ISC */
/*
 * OAuth tokens of upstreams, encrypted at rest (token_store.h).  The
 * cryptography is OpenSSL's (EVP AES-256-GCM, RAND_bytes, SHA-256).
 *
 * A record is sealed on the loop and written by a thread of the store's:
 * each write costs two fsyncs, milliseconds on a quiet disk and far more
 * on a busy one, and with per-user tokens a refresh comes for every user
 * every token lifetime; the loop must not wait for them.  The writer takes
 * the records in the order they were put, one write per file waiting (a
 * newer record of a file replaces the one not yet begun), and a read sees
 * what waits before what is on disk.  It touches nothing but its queue
 * and the file system: failures are handed back to the loop (a pipe)
 * and logged there.  Closing the store writes what waits.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <event2/event.h>

#include "log.h"
#include "token_store.h"
#include "xmalloc.h"

#define TS_AAD_PREFIX	"mcp-supervisor oauth token v1"
#define TS_KEY_FILE	"key"

/* A write or removal for the writer; owned by the queue it is on. */
struct ts_op {
	char			*path;		/* the record's file */
	char			*upstream;	/* for the log */
	unsigned char		*sealed;	/* to write; NULL: remove */
	size_t			 len;
	int			 error;		/* errno of a failure */
	const char		*step;		/* what failed */
	TAILQ_ENTRY(ts_op)	 entry;
};
TAILQ_HEAD(ts_ops, ts_op);

struct token_store {
	char		*dir;
	unsigned char	 key[TS_KEY_LEN];
	/* The writer, started at the first write; its state under mu. */
	pthread_t	 writer;
	int		 writer_on;
	pthread_mutex_t	 mu;
	pthread_cond_t	 work;		/* something waits, or stop */
	pthread_cond_t	 idle;		/* nothing waits nor is written */
	struct ts_ops	 todo;
	struct ts_op	*busy;		/* being written, not on a list */
	struct ts_ops	 failed;	/* for the loop to log */
	int		 stop;
	int		 paused;	/* token_store_pause */
	/* The loop's side: woken when something failed (or NULL). */
	struct event_base *base;
	int		 wake[2];
	struct event	*wake_ev;
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

static int	writer_report(struct token_store *);

/* Free an operation. */
static void
op_free(struct ts_op *op)
{
	if (op == NULL)
		return;
	free(op->path);
	free(op->upstream);
	free(op->sealed);
	free(op);
}

/* The loop is told that writes failed: log them. */
static void
writer_wake_cb(evutil_socket_t fd, short events, void *arg)
{
	char	buf[64];

	while (read(fd, buf, sizeof buf) > 0)
		;
	writer_report(arg);
}

struct token_store *
token_store_open(const char *dir, struct event_base *base, char *err,
    size_t errlen)
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
	ts->wake[0] = ts->wake[1] = -1;
	TAILQ_INIT(&ts->todo);
	TAILQ_INIT(&ts->failed);
	if (pthread_mutex_init(&ts->mu, NULL) != 0 ||
	    pthread_cond_init(&ts->work, NULL) != 0 ||
	    pthread_cond_init(&ts->idle, NULL) != 0)
		fatalx("token store: pthread_mutex_init");
	if (key_load(ts, err, errlen) != 0) {
		token_store_close(ts);
		return (NULL);
	}
	if (base != NULL) {
		if (pipe2(ts->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
			snprintf(err, errlen, "token store: pipe2: %s",
			    strerror(errno));
			ts->wake[0] = ts->wake[1] = -1;
			token_store_close(ts);
			return (NULL);
		}
		ts->base = base;
		if ((ts->wake_ev = event_new(base, ts->wake[0], EV_READ |
		    EV_PERSIST, writer_wake_cb, ts)) == NULL ||
		    event_add(ts->wake_ev, NULL) != 0) {
			snprintf(err, errlen, "token store: cannot watch its "
			    "pipe");
			token_store_close(ts);
			return (NULL);
		}
	}
	return (ts);
}

void
token_store_close(struct token_store *ts)
{
	if (ts == NULL)
		return;
	if (ts->writer_on) {
		pthread_mutex_lock(&ts->mu);
		ts->stop = 1;
		ts->paused = 0;
		pthread_cond_signal(&ts->work);
		pthread_mutex_unlock(&ts->mu);
		if (pthread_join(ts->writer, NULL) != 0)
			fatalx("token store: pthread_join");
	}
	writer_report(ts);
	if (ts->wake_ev != NULL)
		event_free(ts->wake_ev);
	if (ts->wake[0] != -1) {
		close(ts->wake[0]);
		close(ts->wake[1]);
	}
	pthread_cond_destroy(&ts->work);
	pthread_cond_destroy(&ts->idle);
	pthread_mutex_destroy(&ts->mu);
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

/* Write a record's file, or remove it; errno and the step if it failed. */
static void
writer_do(struct token_store *ts, struct ts_op *op)
{
	char	*tmp;
	int	 fd = -1, dfd;

	op->error = 0;
	errno = 0;
	if (op->sealed == NULL) {
		if (unlink(op->path) != 0 && errno != ENOENT) {
			op->error = errno;
			op->step = "cannot remove";
		}
		return;
	}
	xasprintf(&tmp, "%s.tmp", op->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0 || write(fd, op->sealed, op->len) != (ssize_t)op->len ||
	    fsync(fd) != 0 || close(fd) != 0 || (fd = -1,
	    rename(tmp, op->path) != 0)) {
		op->error = errno != 0 ? errno : EIO;
		op->step = "cannot write";
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		free(tmp);
		return;
	}
	free(tmp);
	if ((dfd = open(ts->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
}

/* The writer: what waits, in order, until told to stop and none waits. */
static void *
writer_main(void *arg)
{
	struct token_store	*ts = arg;
	struct ts_op		*op;

	pthread_mutex_lock(&ts->mu);
	for (;;) {
		if ((TAILQ_EMPTY(&ts->todo) || ts->paused) && !ts->stop) {
			pthread_cond_broadcast(&ts->idle);
			pthread_cond_wait(&ts->work, &ts->mu);
			continue;
		}
		if ((op = TAILQ_FIRST(&ts->todo)) == NULL)
			break;
		TAILQ_REMOVE(&ts->todo, op, entry);
		ts->busy = op;
		pthread_mutex_unlock(&ts->mu);
		writer_do(ts, op);
		pthread_mutex_lock(&ts->mu);
		ts->busy = NULL;
		if (op->error == 0) {
			op_free(op);
			continue;
		}
		TAILQ_INSERT_TAIL(&ts->failed, op, entry);
		if (ts->wake[1] != -1 && write(ts->wake[1], "", 1) != 1) {
			/* Full: the loop has yet to read it. */
		}
	}
	pthread_cond_broadcast(&ts->idle);
	pthread_mutex_unlock(&ts->mu);
	return (NULL);
}

/*
 * Start the writer, its signals blocked: they are the loop's.  -1 if no
 * thread can be made (a limit reached): writes are then made at once.
 */
static int
writer_start(struct token_store *ts)
{
	sigset_t	all, old;
	int		error;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	error = pthread_create(&ts->writer, NULL, writer_main, ts);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (error != 0) {
		log_warnx("token store: no writer thread (%s): this write is "
		    "made on the event loop", strerror(error));
		return (-1);
	}
	ts->writer_on = 1;
	return (0);
}

/* Log a write or removal that failed. */
static void
op_log(const struct ts_op *op)
{
	if (op->sealed != NULL)
		log_warnx("upstream %s: OAuth tokens not stored (kept in "
		    "memory only): token store: %s %s: %s", op->upstream,
		    op->step, op->path, strerror(op->error));
	else
		log_warnx("upstream %s: OAuth tokens forgotten, but not "
		    "removed from the disk (they are read again at the next "
		    "start): token store: %s %s: %s", op->upstream, op->step,
		    op->path, strerror(op->error));
}

/* Log the writer's failures (on the loop); how many. */
static int
writer_report(struct token_store *ts)
{
	struct ts_ops	 failed;
	struct ts_op	*op;
	int		 n = 0;

	TAILQ_INIT(&failed);
	pthread_mutex_lock(&ts->mu);
	TAILQ_CONCAT(&failed, &ts->failed, entry);
	pthread_mutex_unlock(&ts->mu);
	while ((op = TAILQ_FIRST(&failed)) != NULL) {
		TAILQ_REMOVE(&failed, op, entry);
		op_log(op);
		op_free(op);
		n++;
	}
	return (n);
}

/* Queue a write (sealed, taken) or removal (NULL) of a record's file. */
static void
writer_queue(struct token_store *ts, const char *upstream, char *path,
    unsigned char *sealed, size_t len)
{
	struct ts_op	*op;

	if (!ts->writer_on && writer_start(ts) != 0) {
		op = xcalloc(1, sizeof *op);
		op->path = path;
		op->upstream = xstrdup(upstream);
		op->sealed = sealed;
		op->len = len;
		writer_do(ts, op);
		if (op->error != 0)
			op_log(op);
		op_free(op);
		return;
	}
	pthread_mutex_lock(&ts->mu);
	TAILQ_FOREACH(op, &ts->todo, entry) {
		if (strcmp(op->path, path) == 0)
			break;
	}
	if (op != NULL) {
		/* Not begun: the newer record is the one to write. */
		free(op->sealed);
		free(path);
	} else {
		op = xcalloc(1, sizeof *op);
		op->path = path;
		op->upstream = xstrdup(upstream);
		TAILQ_INSERT_TAIL(&ts->todo, op, entry);
	}
	op->sealed = sealed;
	op->len = len;
	pthread_cond_signal(&ts->work);
	pthread_mutex_unlock(&ts->mu);
}

/*
 * What waits to be written to a file: 1 with a copy of the record (new;
 * NULL if it is to be removed), or 0 if nothing waits.
 */
static int
writer_pending(struct token_store *ts, const char *path,
    unsigned char **copy, size_t *len)
{
	struct ts_op	*op, *found = NULL;

	pthread_mutex_lock(&ts->mu);
	TAILQ_FOREACH(op, &ts->todo, entry) {
		if (strcmp(op->path, path) == 0)
			found = op;
	}
	if (found == NULL && ts->busy != NULL &&
	    strcmp(ts->busy->path, path) == 0)
		found = ts->busy;
	if (found != NULL) {
		*copy = NULL;
		*len = found->len;
		if (found->sealed != NULL) {
			*copy = xmalloc(found->len);
			memcpy(*copy, found->sealed, found->len);
		}
	}
	pthread_mutex_unlock(&ts->mu);
	return (found != NULL);
}

int
token_store_flush(struct token_store *ts)
{
	if (ts->writer_on) {
		pthread_mutex_lock(&ts->mu);
		/* Paused (tests), the writer would never empty it. */
		ts->paused = 0;
		pthread_cond_signal(&ts->work);
		while (!TAILQ_EMPTY(&ts->todo) || ts->busy != NULL)
			pthread_cond_wait(&ts->idle, &ts->mu);
		pthread_mutex_unlock(&ts->mu);
	}
	return (writer_report(ts));
}

void
token_store_pause(struct token_store *ts, int on)
{
	pthread_mutex_lock(&ts->mu);
	ts->paused = on;
	pthread_cond_signal(&ts->work);
	pthread_mutex_unlock(&ts->mu);
}

int
token_store_put(struct token_store *ts, const char *upstream,
    const char *identity, const void *data, size_t len, char *err,
    size_t errlen)
{
	char		 aad[sizeof TS_AAD_PREFIX + 2 * TS_NAME_MAX + 4];
	unsigned char	*sealed;
	size_t		 aadlen, n;

	if (!names_ok(upstream, identity, err, errlen))
		return (-1);
	aadlen = record_aad(upstream, identity, aad, sizeof aad);
	if (token_seal(ts->key, aad, aadlen, data, len, &sealed, &n) != 0) {
		snprintf(err, errlen, "token store: a record over %d bytes",
		    TS_MAX);
		return (-1);
	}
	writer_queue(ts, upstream, record_path(ts, aad, aadlen), sealed, n);
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
			    TS_TAG_LEN, blen;
	ssize_t		 n;
	int		 fd;

	err[0] = '\0';
	*len = 0;
	if (!names_ok(upstream, identity, err, errlen))
		return (NULL);
	aadlen = record_aad(upstream, identity, aad, sizeof aad);
	path = record_path(ts, aad, aadlen);
	/* What waits to be written is newer than the file. */
	if (writer_pending(ts, path, &buf, &blen)) {
		if (buf != NULL && token_unseal(ts->key, aad, aadlen, buf,
		    blen, &out, len) != 0)
			fatalx("token store: a record sealed here does not "
			    "open");
		free(buf);
		free(path);
		return (out);
	}
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

	if (!names_ok(upstream, identity, err, errlen))
		return (-1);
	writer_queue(ts, upstream, record_path(ts, aad, record_aad(upstream,
	    identity, aad, sizeof aad)), NULL, 0);
	return (0);
}

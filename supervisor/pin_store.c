/* SPDX-License-Identifier: ISC */
/*
 * Where pins are kept: state_dir/pins.json, one JSON object
 *
 *	{"version":1,"pins":[{"upstream":"gh","tool":"search",
 *	  "sha256":"<64 hex>","pinned_at":1795000000,
 *	  "definition":{...canonical...}|null}, ...]}
 *
 * read once at start, and written whole, atomically (a temporary file,
 * fsync, rename, fsync of the directory), when pins were added (a second
 * later, so that a catalog of a thousand new tools is one write), when one
 * is approved (at once), and at exit.  Never on a call or a list.  Its
 * size is bounded: PIN_MAX pins, definitions kept up to PIN_DEF_MAX each
 * and PIN_STORE_MAX in all (beyond, the digest alone).  A file that is
 * there but cannot be read stops the daemon at start: running on without
 * it would trust every changed tool anew.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "pin.h"
#include "supervisor.h"
#include "xmalloc.h"

#define PIN_WRITE_DELAY_S	1
#define PIN_RETRY_S		10	/* after a write failed */

static char		*store_dir;	/* NULL: in memory only */
static char		*store_path;
static struct event	*store_timer;
static int		 store_failing;	/* the last write failed */
static int		 store_dirty;	/* pins not written yet */

const char *
pin_store_path(void)
{
	return (store_path);
}

/* Read the hex of a digest; -1 if it is not 64 hex digits. */
static int
unhex(const char *s, unsigned char *out)
{
	size_t	i;
	int	hi, lo;

	if (strlen(s) != 2 * PIN_DIGEST_LEN)
		return (-1);
	for (i = 0; i < PIN_DIGEST_LEN; i++) {
		hi = s[2 * i];
		lo = s[2 * i + 1];
		hi = hi >= '0' && hi <= '9' ? hi - '0' : hi >= 'a' &&
		    hi <= 'f' ? hi - 'a' + 10 : -1;
		lo = lo >= '0' && lo <= '9' ? lo - '0' : lo >= 'a' &&
		    lo <= 'f' ? lo - 'a' + 10 : -1;
		if (hi < 0 || lo < 0)
			return (-1);
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return (0);
}

/* Take one entry of the file; -1 with err set if it is not one. */
static int
load_one(json_t *o, size_t i, char *err, size_t errlen)
{
	const char	*up, *tool, *hex;
	size_t		 toollen, len;
	json_int_t	 at = 0;
	json_t		*def = NULL;
	unsigned char	 d[PIN_DIGEST_LEN], check[PIN_DIGEST_LEN];
	char		*text = NULL;

	if (json_unpack(o, "{s:s, s:s%, s:s, s?I, s?o}", "upstream", &up,
	    "tool", &tool, &toollen, "sha256", &hex, "pinned_at", &at,
	    "definition", &def) != 0 || unhex(hex, d) != 0) {
		snprintf(err, errlen, "pin %zu is not {upstream, tool, sha256 "
		    "(64 hex digits), pinned_at, definition}", i);
		return (-1);
	}
	if (json_is_object(def)) {
		text = pin_canonical(def, &len);
		pin_digest(text, len, check);
		if (memcmp(check, d, PIN_DIGEST_LEN) != 0) {
			snprintf(err, errlen, "pin %zu (upstream %s, tool "
			    "%.100s): its definition does not have its sha256",
			    i, up, tool);
			free(text);
			return (-1);
		}
	} else if (def != NULL && !json_is_null(def)) {
		snprintf(err, errlen, "pin %zu: definition is not an object",
		    i);
		return (-1);
	}
	if (pin_find(up, tool, toollen) != NULL) {
		snprintf(err, errlen, "pin %zu: upstream %s, tool %.100s is "
		    "pinned twice", i, up, tool);
		free(text);
		return (-1);
	}
	pin_add(up, tool, toollen, d, text, (time_t)at);
	return (0);
}

/* Read the file if there is one; -1 with err set if it is bad. */
static int
load(char *err, size_t errlen)
{
	struct stat	 st;
	json_error_t	 je;
	json_t		*root, *a, *o;
	size_t		 i;
	char		 why[256];

	if (stat(store_path, &st) != 0) {
		if (errno == ENOENT)
			return (0);
		snprintf(err, errlen, "%s: %s", store_path, strerror(errno));
		return (-1);
	}
	if (!S_ISREG(st.st_mode) || st.st_size > PIN_FILE_MAX) {
		snprintf(err, errlen, "%s: not a file of at most %d bytes",
		    store_path, PIN_FILE_MAX);
		return (-1);
	}
	/* A definition may hold U+0000 (catalogs are read with it). */
	if ((root = json_load_file(store_path, JSON_REJECT_DUPLICATES |
	    JSON_ALLOW_NUL, &je)) == NULL) {
		snprintf(err, errlen, "%s:%d: %s (move it away to start with "
		    "no pins)", store_path, je.line, je.text);
		return (-1);
	}
	a = json_object_get(root, "pins");
	if (json_integer_value(json_object_get(root, "version")) != 1 ||
	    !json_is_array(a) || json_array_size(a) > PIN_MAX) {
		snprintf(err, errlen, "%s: not version 1 with at most %d pins "
		    "(move it away to start with no pins)", store_path,
		    PIN_MAX);
		json_decref(root);
		return (-1);
	}
	json_array_foreach(a, i, o) {
		if (load_one(o, i, why, sizeof why) != 0) {
			snprintf(err, errlen, "%s: %s (move it away to start "
			    "with no pins)", store_path, why);
			json_decref(root);
			return (-1);
		}
	}
	json_decref(root);
	return (0);
}

int
pin_open(const char *dir, int configured, char *err, size_t errlen)
{
	struct stat	st;

	if (stat(dir, &st) != 0) {
		if (errno == ENOENT && !configured) {
			log_warnx("state_dir %s does not exist: tool pins are "
			    "kept in memory only, and lost when the daemon "
			    "stops", dir);
			return (0);
		}
		snprintf(err, errlen, "state_dir %s: %s", dir,
		    strerror(errno));
		return (-1);
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "state_dir %s: not a directory", dir);
		return (-1);
	}
	store_dir = xstrdup(dir);
	xasprintf(&store_path, "%s/%s", dir, PIN_FILE);
	if (load(err, errlen) != 0) {
		pin_store_close();
		return (-1);
	}
	log_info("pin: %zu tool pins in %s", pins.n, store_path);
	return (0);
}

/* Write all of a buffer to a descriptor. */
static int
write_all(int fd, struct evbuffer *b)
{
	while (evbuffer_get_length(b) > 0) {
		if (evbuffer_write(b, fd) < 0) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
	}
	return (0);
}

/* Append one pin as an entry of the file. */
static void
add_entry(struct evbuffer *b, const struct pin *p, int first)
{
	json_t	*o;
	char	*text, hex[2 * PIN_DIGEST_LEN + 1];

	pin_hex(p->digest, hex);
	o = json_pack("{s:s, s:s%, s:s, s:I}", "upstream", p->upstream,
	    "tool", p->tool, p->toollen, "sha256", hex, "pinned_at",
	    (json_int_t)p->pinned_at);
	if (o == NULL || (text = json_dumps(o, JSON_COMPACT)) == NULL)
		fatalx("pin: json_dumps");
	json_decref(o);
	/* The definition goes in as its canonical text, as hashed. */
	text[strlen(text) - 1] = '\0';
	evbuffer_add_printf(b, "%s\n%s,\"definition\":%s}", first ? "" : ",",
	    text, p->def != NULL ? p->def : "null");
	free(text);
}

static void	store_arm(int);

int
pin_store_write(void)
{
	struct evbuffer	*b;
	struct pin	*p;
	char		*tmp;
	int		 fd, dfd, first = 1, saved;

	if (store_timer != NULL)
		evtimer_del(store_timer);
	if (store_path == NULL)
		return (0);
	b = evbuffer_new();
	evbuffer_add_printf(b, "{\"version\":1,\"pins\":[");
	TAILQ_FOREACH(p, &pins.list, entry) {
		add_entry(b, p, first);
		first = 0;
	}
	evbuffer_add_printf(b, "\n]}\n");
	xasprintf(&tmp, "%s.tmp", store_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0 || write_all(fd, b) != 0 || fsync(fd) != 0 ||
	    close(fd) != 0 || (fd = -1, rename(tmp, store_path) != 0)) {
		saved = errno;
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		errno = saved;
		if (!store_failing++)
			log_warn("pin: cannot write %s (tried again every %d s "
			    "and at exit)", store_path, PIN_RETRY_S);
		free(tmp);
		evbuffer_free(b);
		store_dirty = 1;
		store_arm(PIN_RETRY_S);
		return (-1);
	}
	/* The rename itself is durable once the directory is. */
	if ((dfd = open(store_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	if (store_failing)
		log_info("pin: %s written again", store_path);
	store_failing = 0;
	store_dirty = 0;
	if (pins.added > 0)
		log_info("pin: %zu new tool pins written to %s", pins.added,
		    store_path);
	pins.added = 0;
	free(tmp);
	evbuffer_free(b);
	return (0);
}

static void
store_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	(void)arg;
	pin_store_write();
}

/* Write the pins in that many seconds, unless a write is due sooner. */
static void
store_arm(int seconds)
{
	struct timeval	tv = { seconds, 0 };

	if (store_path == NULL || base == NULL)
		return;
	if (store_timer == NULL)
		store_timer = evtimer_new(base, store_timer_cb, NULL);
	if (!evtimer_pending(store_timer, NULL))
		evtimer_add(store_timer, &tv);
}

void
pin_store_dirty(void)
{
	store_dirty = 1;
	store_arm(PIN_WRITE_DELAY_S);
}

void
pin_store_close(void)
{
	if (store_dirty)
		pin_store_write();
	if (store_timer != NULL)
		event_free(store_timer);
	store_timer = NULL;
	free(store_dir);
	free(store_path);
	store_dir = store_path = NULL;
	store_failing = 0;
	store_dirty = 0;
}

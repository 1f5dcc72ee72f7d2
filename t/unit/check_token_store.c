/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for supervisor/token_store.c: records sealed with AES-256-GCM
 * open back; every changed byte, a truncation, another key and another
 * upstream's name are refused; the key file is made 0600 and refused when
 * others may read it; the directory is made 0700; a record is replaced
 * whole and leaves no temporary file; the plaintext is not in the file.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "token_store.h"

static char	 tmpl[64];
static char	 dir[96];

static void
setup(void)
{
	snprintf(tmpl, sizeof tmpl, "/tmp/check_token_store.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	snprintf(dir, sizeof dir, "%s/oauth", tmpl);
}

/* Remove one entry of the tree, deepest first (nftw). */
static int
remove_entry(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	return (remove(path));
}

static void
teardown(void)
{
	ck_assert_int_eq(nftw(tmpl, remove_entry, 8, FTW_DEPTH | FTW_PHYS),
	    0);
}

/* The one .tok file in dir, read whole; its path in path. */
static unsigned char *
read_record(size_t *len, char *path, size_t plen)
{
	DIR		*d = opendir(dir);
	struct dirent	*e;
	unsigned char	*buf = NULL;
	FILE		*f;
	int		 n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		if (strstr(e->d_name, ".tok") == NULL)
			continue;
		ck_assert_ptr_null(strstr(e->d_name, ".tmp"));
		snprintf(path, plen, "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	ck_assert_int_eq(n, 1);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	buf = malloc(TS_MAX + 64);
	*len = fread(buf, 1, TS_MAX + 64, f);
	fclose(f);
	return (buf);
}

static void
write_file(const char *path, const unsigned char *p, size_t len)
{
	FILE	*f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, len, f), len);
	fclose(f);
}

START_TEST(test_seal_round_trip)
{
	unsigned char	 key[TS_KEY_LEN], other[TS_KEY_LEN], *s, *o;
	size_t		 n, m, i;
	const char	*msg = "{\"access_token\":\"secret-token\"}";

	memset(key, 7, sizeof key);
	memset(other, 8, sizeof other);
	ck_assert_int_eq(token_seal(key, "a", 1, msg, strlen(msg), &s, &n), 0);
	ck_assert_uint_eq(n, TS_MAGIC_LEN + TS_NONCE_LEN + strlen(msg) +
	    TS_TAG_LEN);
	ck_assert_ptr_null(memmem(s, n, "secret-token", 12));
	ck_assert_int_eq(token_unseal(key, "a", 1, s, n, &o, &m), 0);
	ck_assert_uint_eq(m, strlen(msg));
	ck_assert_mem_eq(o, msg, m);
	free(o);
	/* Every byte flipped, in turn, is refused. */
	for (i = 0; i < n; i++) {
		s[i] ^= 0x01;
		ck_assert_int_eq(token_unseal(key, "a", 1, s, n, &o, &m), -1);
		ck_assert_ptr_null(o);
		s[i] ^= 0x01;
	}
	/* Truncated, another key, other additional data. */
	ck_assert_int_eq(token_unseal(key, "a", 1, s, n - 1, &o, &m), -1);
	ck_assert_int_eq(token_unseal(key, "a", 1, s, 10, &o, &m), -1);
	ck_assert_int_eq(token_unseal(other, "a", 1, s, n, &o, &m), -1);
	ck_assert_int_eq(token_unseal(key, "b", 1, s, n, &o, &m), -1);
	ck_assert_int_eq(token_unseal(key, "a", 0, s, n, &o, &m), -1);
	free(s);
	/* Two seals of the same text differ (a nonce each). */
	ck_assert_int_eq(token_seal(key, "a", 1, msg, strlen(msg), &s, &n), 0);
	ck_assert_int_eq(token_seal(key, "a", 1, msg, strlen(msg), &o, &m), 0);
	ck_assert_mem_ne(s, o, n);
	free(s);
	free(o);
	/* Bounded. */
	o = calloc(1, TS_MAX + 1);
	ck_assert_int_eq(token_seal(key, "a", 1, o, TS_MAX + 1, &s, &n), -1);
	free(o);
}
END_TEST

START_TEST(test_store)
{
	struct token_store	*ts;
	struct stat		 st;
	char			 err[512], path[600], key[256];
	unsigned char		*r, *file;
	size_t			 len, flen;

	ts = token_store_open(dir, NULL, err, sizeof err);
	ck_assert_msg(ts != NULL, "%s", err);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	snprintf(key, sizeof key, "%s/key", dir);
	ck_assert_int_eq(stat(key, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(st.st_size, TS_KEY_LEN);

	/* None yet. */
	ck_assert_ptr_null(token_store_get(ts, "gh", "gateway", &len, err,
	    sizeof err));
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(token_store_put(ts, "gh", "gateway", "first", 5, err,
	    sizeof err), 0);
	ck_assert_int_eq(token_store_put(ts, "gh", "gateway", "second-token",
	    12, err, sizeof err), 0);
	r = token_store_get(ts, "gh", "gateway", &len, err, sizeof err);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(len, 12);
	ck_assert_mem_eq(r, "second-token", 12);
	free(r);
	/* Another identity, another upstream: none. */
	ck_assert_ptr_null(token_store_get(ts, "gh", "alice", &len, err,
	    sizeof err));
	ck_assert_ptr_null(token_store_get(ts, "gl", "gateway", &len, err,
	    sizeof err));
	ck_assert_str_eq(err, "");

	/* On disk: one file, 0600, no plaintext, no name. */
	ck_assert_int_eq(token_store_flush(ts), 0);
	file = read_record(&flen, path, sizeof path);
	ck_assert_ptr_null(memmem(file, flen, "second-token", 12));
	/* The record's own name, not the random directory's. */
	ck_assert_ptr_null(strstr(strrchr(path, '/'), "gh"));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);

	/* A changed byte, a truncation: refused, said. */
	file[flen - 1] ^= 0x80;
	write_file(path, file, flen);
	ck_assert_ptr_null(token_store_get(ts, "gh", "gateway", &len, err,
	    sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "does not open"));
	file[flen - 1] ^= 0x80;
	write_file(path, file, flen - 3);
	ck_assert_ptr_null(token_store_get(ts, "gh", "gateway", &len, err,
	    sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "does not open"));
	write_file(path, file, flen);
	r = token_store_get(ts, "gh", "gateway", &len, err, sizeof err);
	ck_assert_ptr_nonnull(r);
	free(r);

	/* Moved to another upstream's name: does not open. */
	ck_assert_int_eq(token_store_put(ts, "gl", "gateway", "x", 1, err,
	    sizeof err), 0);
	ck_assert_int_eq(token_store_flush(ts), 0);
	{
		char		 glpath[600];
		unsigned char	 rec[TS_MAX + 64];
		size_t		 rlen;
		FILE		*f;
		DIR		*d = opendir(dir);
		struct dirent	*e;

		glpath[0] = '\0';
		while ((e = readdir(d)) != NULL)
			if (strstr(e->d_name, ".tok") != NULL &&
			    strcmp(strrchr(path, '/') + 1, e->d_name) != 0)
				snprintf(glpath, sizeof glpath, "%s/%s", dir,
				    e->d_name);
		closedir(d);
		ck_assert_str_ne(glpath, "");
		/* gh's record copied over gl's. */
		ck_assert_ptr_nonnull(f = fopen(path, "rb"));
		rlen = fread(rec, 1, sizeof rec, f);
		fclose(f);
		write_file(glpath, rec, rlen);
	}
	ck_assert_ptr_null(token_store_get(ts, "gl", "gateway", &len, err,
	    sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "does not open"));

	/* Deleted; deleting again is fine. */
	ck_assert_int_eq(token_store_delete(ts, "gh", "gateway", err,
	    sizeof err), 0);
	ck_assert_int_eq(token_store_delete(ts, "gh", "gateway", err,
	    sizeof err), 0);
	ck_assert_ptr_null(token_store_get(ts, "gh", "gateway", &len, err,
	    sizeof err));
	ck_assert_str_eq(err, "");
	token_store_close(ts);
	free(file);

	/* Opened again: the same key, the record of gl still there. */
	ts = token_store_open(dir, NULL, err, sizeof err);
	ck_assert_ptr_nonnull(ts);
	ck_assert_int_eq(token_store_put(ts, "gh", "gateway", "kept", 4, err,
	    sizeof err), 0);
	token_store_close(ts);
	ts = token_store_open(dir, NULL, err, sizeof err);
	r = token_store_get(ts, "gh", "gateway", &len, err, sizeof err);
	ck_assert_ptr_nonnull(r);
	ck_assert_mem_eq(r, "kept", 4);
	free(r);
	token_store_close(ts);
}
END_TEST

/* The number of record files in dir, temporary ones too. */
static int
nfiles(void)
{
	DIR		*d = opendir(dir);
	struct dirent	*e;
	int		 n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		n += strstr(e->d_name, ".tok") != NULL;
	closedir(d);
	return (n);
}

/* A record, which must be there: its text compared with want. */
static void
ck_record(struct token_store *ts, const char *want)
{
	unsigned char	*r;
	size_t		 len;
	char		 err[512];

	r = token_store_get(ts, "gh", "alice", &len, err, sizeof err);
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_uint_eq(len, strlen(want));
	ck_assert_mem_eq(r, want, len);
	free(r);
}

/*
 * Writes are the writer's, in order, and not waited for: while it is
 * held nothing is on disk, and a read sees what waits (a newer record
 * replacing one not begun, a removal); a write that fails is handed back
 * and logged, through the loop when there is one.
 */
START_TEST(test_writer)
{
	struct event_base	*base = event_base_new();
	struct token_store	*ts;
	char			 err[512], path[600];
	unsigned char		*file;
	size_t			 len, flen;

	ts = token_store_open(dir, base, err, sizeof err);
	ck_assert_msg(ts != NULL, "%s", err);
	token_store_pause(ts, 1);
	ck_assert_int_eq(token_store_put(ts, "gh", "alice", "one", 3, err,
	    sizeof err), 0);
	ck_record(ts, "one");
	ck_assert_int_eq(token_store_delete(ts, "gh", "alice", err,
	    sizeof err), 0);
	ck_assert_ptr_null(token_store_get(ts, "gh", "alice", &len, err,
	    sizeof err));
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(token_store_put(ts, "gh", "alice", "two", 3, err,
	    sizeof err), 0);
	ck_assert_int_eq(token_store_put(ts, "gh", "alice", "three", 5, err,
	    sizeof err), 0);
	ck_record(ts, "three");
	ck_assert_int_eq(nfiles(), 0);
	token_store_pause(ts, 0);
	ck_assert_int_eq(token_store_flush(ts), 0);
	ck_record(ts, "three");
	file = read_record(&flen, path, sizeof path);
	free(file);
	/* Its file made a directory: the next write fails, and is said. */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(token_store_put(ts, "gh", "alice", "four", 4, err,
	    sizeof err), 0);
	ck_assert_int_eq(token_store_flush(ts), 1);
	/* Through the loop: reported there, not again at the flush. */
	/* (The first failure's wakeup is still there: taken first.) */
	ck_assert_int_eq(event_base_loop(base, EVLOOP_NONBLOCK), 0);
	ck_assert_int_eq(token_store_put(ts, "gh", "alice", "five", 4, err,
	    sizeof err), 0);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_int_eq(token_store_flush(ts), 0);
	ck_assert_int_eq(rmdir(path), 0);
	/* Closing writes what waits. */
	token_store_pause(ts, 1);
	ck_assert_int_eq(token_store_put(ts, "gh", "alice", "six", 3, err,
	    sizeof err), 0);
	token_store_close(ts);
	ts = token_store_open(dir, NULL, err, sizeof err);
	ck_assert_ptr_nonnull(ts);
	ck_record(ts, "six");
	token_store_close(ts);
	event_base_free(base);
}
END_TEST

/*
 * Out of descriptors (a gateway holding many connections), opening the
 * store is refused with the reason, not fatal (it once exited); a flush
 * while the writer is held lets it go rather than wait for ever.
 */
START_TEST(test_limits)
{
	struct event_base	*base = event_base_new();
	struct token_store	*ts;
	struct rlimit		 old, low;
	char			 err[512];
	int			 fd;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* One descriptor left: enough for the key, not for the pipe. */
	low = old;
	low.rlim_cur = (rlim_t)fd + 1;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	ts = token_store_open(dir, base, err, sizeof err);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	ck_assert_ptr_null(ts);
	ck_assert_msg(strstr(err, "pipe2") != NULL, "%s", err);

	ts = token_store_open(dir, base, err, sizeof err);
	ck_assert_msg(ts != NULL, "%s", err);
	token_store_pause(ts, 1);
	ck_assert_int_eq(token_store_put(ts, "gh", "alice", "held", 4, err,
	    sizeof err), 0);
	ck_assert_int_eq(token_store_flush(ts), 0);
	ck_assert_int_eq(nfiles(), 1);
	token_store_close(ts);
	event_base_free(base);
}
END_TEST

START_TEST(test_refused)
{
	struct token_store	*ts;
	char			 err[512], key[256];

	ts = token_store_open(dir, NULL, err, sizeof err);
	ck_assert_ptr_nonnull(ts);
	token_store_close(ts);
	snprintf(key, sizeof key, "%s/key", dir);
	/* A key others may read. */
	ck_assert_int_eq(chmod(key, 0640), 0);
	ck_assert_ptr_null(token_store_open(dir, NULL, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "it must be 0600"));
	/* Not a key. */
	ck_assert_int_eq(chmod(key, 0600), 0);
	write_file(key, (const unsigned char *)"short", 5);
	ck_assert_ptr_null(token_store_open(dir, NULL, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "not a key"));
	write_file(key, (const unsigned char *)
	    "0123456789abcdef0123456789abcdefX", TS_KEY_LEN + 1);
	ck_assert_ptr_null(token_store_open(dir, NULL, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "not a key"));
	/* A directory open to others. */
	unlink(key);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_ptr_null(token_store_open(dir, NULL, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "it must be 0700"));
	/* Names. */
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ts = token_store_open(dir, NULL, err, sizeof err);
	ck_assert_ptr_nonnull(ts);
	ck_assert_int_eq(token_store_put(ts, "", "gateway", "x", 1, err,
	    sizeof err), -1);
	token_store_close(ts);
}
END_TEST

static Suite *
token_store_suite(void)
{
	Suite	*s = suite_create("token_store");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_seal_round_trip);
	tcase_add_test(tc, test_store);
	tcase_add_test(tc, test_writer);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(token_store_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}

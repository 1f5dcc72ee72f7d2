/* SPDX-License-Identifier: ISC */
/*
 * The access log (supervisor/access_log.c), driven in-process: a file
 * whose writes fail (its descriptor turned to /dev/full: ENOSPC) has
 * its lines held, said once, and written again every second until it
 * works, whether or not more lines come (past 1 MiB held none comes:
 * every later line is dropped, and the log stayed silent for good).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor.h"

#include "sup_check.h"

static char	path[64];

static void
setup(void)
{
	char	conf_text[512];
	int	fd;

	snprintf(path, sizeof path, "/tmp/check_access_log.XXXXXX");
	ck_assert_int_ge(fd = mkstemp(path), 0);
	close(fd);
	snprintf(conf_text, sizeof conf_text, SUP_BASE
	    "access_log = \"%s\";\n"
	    "servers = ( { name = \"a\"; transport = \"stdio\";\n"
	    "    command = [ \"true\" ]; } );\n", path);
	sup_start(conf_text);
}

static void
teardown(void)
{
	sup_stop();
	unlink(path);
}

/* The file's size. */
static off_t
size(void)
{
	struct stat	st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (st.st_size);
}

/* The access log's descriptor: the one open on path. */
static int
log_fd(void)
{
	DIR		*d = opendir("/proc/self/fd");
	struct dirent	*e;
	char		 link[300], to[128];
	ssize_t		 n;
	int		 fd = -1;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
		if ((n = readlink(link, to, sizeof to - 1)) <= 0)
			continue;
		to[n] = '\0';
		if (strcmp(to, path) == 0)
			fd = atoi(e->d_name);
	}
	closedir(d);
	ck_assert_int_ge(fd, 0);
	return (fd);
}

/* The disk is full (writes fail, ENOSPC), or has room again. */
static void
limit(int on)
{
	static int	fd = -1;
	int		to;

	if (on)
		fd = log_fd();
	to = open(on ? "/dev/full" : path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(to, 0);
	ck_assert_int_eq(dup2(to, fd), fd);
	close(to);
}

/* A request, and its access log line. */
static void
ping(struct sup_client *cl)
{
	sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
}

/* The lines counted written and dropped. */
static uint64_t
counted(int dropped)
{
	uint64_t	lines, lost;

	access_log_counts(&lines, &lost);
	return (dropped ? lost : lines);
}

START_TEST(test_retry)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	off_t			 before;

	ping(cl);
	ck_assert_int_gt(before = size(), 0);
	limit(1);
	ping(cl);
	ping(cl);
	ck_assert_int_eq(size(), before);
	/* Writing works again: within a second the lines are there, with
	 * no new line to make it try. */
	limit(0);
	sup_advance(1);
	ck_assert_int_gt(size(), before);
	ck_assert_uint_eq(counted(1), 0);
}
END_TEST

/*
 * A descriptor made non-blocking by whoever shares it (a process manager's
 * pipe as stderr) and full: not a failure (no warning, nothing held for a
 * second); what waits goes as soon as the reader drains it.
 */
START_TEST(test_full_pipe)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	char			 buf[65536], *nl;
	int			 p[2], fd = log_fd(), lines = 0;
	ssize_t			 n;

	ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
	memset(buf, 'x', sizeof buf);
	while (write(p[1], buf, sizeof buf) > 0)
		continue;
	ck_assert_int_eq(dup2(p[1], fd), fd);
	ping(cl);
	ping(cl);
	while (read(p[0], buf, sizeof buf) > 0)
		continue;
	sup_turn();
	while ((n = read(p[0], buf, sizeof buf - 1)) > 0) {
		buf[n] = '\0';
		for (nl = buf; (nl = strstr(nl, "method=\"ping\"")) != NULL;
		    nl++)
			lines++;
	}
	ck_assert_int_eq(lines, 2);
	ck_assert_uint_eq(counted(1), 0);
	ck_assert_int_eq(dup2(n = open(path, O_WRONLY | O_APPEND), fd), fd);
	close((int)n);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* The configuration with this access_log line. */
static void
reload_to(const char *line)
{
	char	conf_text[512];

	snprintf(conf_text, sizeof conf_text, SUP_BASE "%s\n"
	    "servers = ( { name = \"a\"; transport = \"stdio\";\n"
	    "    command = [ \"true\" ]; } );\n", line);
	json_decref(sup_reload(conf_text));
}

/*
 * Lines a full disk (/dev/full) held, when a reload points the access log
 * at syslog:
 * they are sent there, and counted written once (they were counted as
 * they were queued for the file).  Turned off instead, they are lost and
 * counted so.
 */
START_TEST(test_held_to_syslog)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sockaddr_un	 sun;
	char			 dir[64], buf[2048];
	int			 s, got = 0;
	uint64_t		 before;

	sup_tmpdir(dir, sizeof dir, "access_log");
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s/log", dir);
	ck_assert_int_ge(s = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0),
	    0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof sun), 0);
	setenv("MCP_SUPERVISOR_SYSLOG", sun.sun_path, 1);
	reload_to("access_log = \"/dev/full\";");
	before = counted(0);
	ping(cl);
	ping(cl);
	ck_assert_uint_eq(counted(0), before + 2);
	reload_to("access_log = \"syslog\";");
	while (recv(s, buf, sizeof buf, 0) > 0)
		got++;
	ck_assert_int_eq(got, 2);
	ck_assert_uint_eq(counted(0), before + 2);
	ck_assert_uint_eq(counted(1), 0);
	ping(cl);
	sup_turn();
	ck_assert_int_eq(recv(s, buf, sizeof buf, 0) > 0, 1);
	ck_assert_uint_eq(counted(0), before + 3);

	/* Back to the full file, then off: what it held is lost. */
	reload_to("access_log = \"/dev/full\";");
	ping(cl);
	ping(cl);
	ck_assert_uint_eq(counted(0), before + 5);
	reload_to("");
	ck_assert_uint_eq(counted(0), before + 3);
	ck_assert_uint_eq(counted(1), 2);
	unsetenv("MCP_SUPERVISOR_SYSLOG");
	close(s);
	sup_rmtree(dir);
}
END_TEST

static Suite *
access_log_suite(void)
{
	Suite	*s = suite_create("access_log");
	TCase	*tc = tcase_create("file");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_retry);
	tcase_add_test(tc, test_full_pipe);
	tcase_add_test(tc, test_held_to_syslog);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(access_log_suite()));
}

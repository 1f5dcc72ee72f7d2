/* SPDX-License-Identifier: ISC */
/*
 * wakeup: what one round trip between two processes costs on this machine,
 * the floor under every process crossing a gateway adds.
 *
 * Two processes bounce one byte over a socketpair, back to back ("busy")
 * and with 1 ms of sleep before each round trip ("idle", so the CPUs go
 * idle between round trips, as they do at a moderate request rate), both
 * processes on one CPU and on two different CPUs.  Prints one JSON line:
 * the median and 99th percentile round-trip times in microseconds of each
 * (null where the machine has one CPU only).  The argument, if any, is
 * the number of round trips per figure (2000 by default).
 *
 *	cc -O2 -std=c11 -Wall -Wextra -o bench/wakeup bench/wakeup.c
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS	100000

static int	rounds = 2000;	/* measured round trips per figure */

/* Return the monotonic time in nanoseconds. */
static long long
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

/* Pin the calling process to one CPU. */
static void
pin(int cpu)
{
	cpu_set_t	set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static int
cmp_ll(const void *a, const void *b)
{
	long long	x = *(const long long *)a, y = *(const long long *)b;

	return ((x > y) - (x < y));
}

/* Measure round trips: p[0] the median, p[1] the 99th percentile (in
 * microseconds); 0 on success, -1 on failure. */
static int
round_trip(int cpu_a, int cpu_b, int gap_us, double p[2])
{
	static long long	 t[MAX_ROUNDS];
	struct timespec		 gap = { 0, gap_us * 1000L };
	int			 sv[2], i, status;
	pid_t			 pid;
	char			 c = 'x';

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("socketpair");
		return (-1);
	}
	if ((pid = fork()) == -1) {
		perror("fork");
		return (-1);
	}
	if (pid == 0) {
		close(sv[0]);
		pin(cpu_b);
		while (read(sv[1], &c, 1) == 1)
			if (write(sv[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	close(sv[1]);
	pin(cpu_a);
	for (i = 0; i < rounds + 100; i++) {
		long long	t0;

		if (gap_us > 0)
			nanosleep(&gap, NULL);
		t0 = now_ns();
		if (write(sv[0], &c, 1) != 1 || read(sv[0], &c, 1) != 1)
			break;
		if (i >= 100)	/* the first hundred warm up */
			t[i - 100] = now_ns() - t0;
	}
	close(sv[0]);
	waitpid(pid, &status, 0);
	if (i < rounds + 100)
		return (-1);
	qsort(t, rounds, sizeof t[0], cmp_ll);
	p[0] = t[rounds / 2] / 1000.0;
	p[1] = t[(size_t)rounds * 99 / 100] / 1000.0;
	return (0);
}

/* Measure and print one figure, or null. */
static void
field(const char *name, int run, int cpu_a, int cpu_b, int gap_us, int last)
{
	double	p[2];

	if (run && round_trip(cpu_a, cpu_b, gap_us, p) == 0)
		printf("\"%s\":{\"p50_us\":%.1f,\"p99_us\":%.1f}", name, p[0],
		    p[1]);
	else
		printf("\"%s\":null", name);
	printf("%s", last ? "}\n" : ",");
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	int	two = sysconf(_SC_NPROCESSORS_ONLN) > 1;

	if (argc > 1) {
		rounds = atoi(argv[1]);
		if (rounds < 1 || rounds > MAX_ROUNDS) {
			fprintf(stderr, "usage: wakeup [rounds, 1 to %d]\n",
			    MAX_ROUNDS);
			return (2);
		}
	}

	printf("{");
	field("one_cpu_busy", 1, 0, 0, 0, 0);
	field("one_cpu_idle", 1, 0, 0, 1000, 0);
	field("two_cpus_busy", two, 0, 1, 0, 0);
	field("two_cpus_idle", two, 0, 1, 1000, 1);
	return (0);
}

/* SPDX-License-Identifier: ISC */
/*
 * What every worker program (mcp-worker, mcp-llm, mcp-idp, mcp-otel)
 * does the same way: its options and log, the guards before any secret
 * arrives, the supervisor's channel on FRAME_CHANNEL_FD and the loop
 * reading its frames, and giving up the supervisor's user.  Each program
 * keeps what differs: its name, its frames, its exit.  Plain libc and
 * libevent: the network-free mcp-worker-stdio links it too.
 */
#ifndef MCPS_WORKER_START_H
#define MCPS_WORKER_START_H

#include <sys/types.h>

#include <stddef.h>

struct event_base;
struct evbuffer;
struct frame_hdr;
struct iochan;
struct passwd;

/* Handle one frame from the supervisor; -1 if it is bad. */
typedef int	(*worker_frame_fn)(const struct frame_hdr *, struct evbuffer *);
/* The largest frame the supervisor may send now. */
typedef size_t	(*worker_max_fn)(void);
/* Exit with a WORKER_EXIT_* code; does not return. */
typedef void	(*worker_exit_fn)(int);
/* Some of what was queued for the supervisor has been written. */
typedef void	(*worker_written_fn)(void);

/*
 * Read the options (-d, -v) and the one operand (a name, in the usage
 * line as operand), or exit WORKER_EXIT_CONFIG; start the log as program,
 * tagged with the operand.
 */
void		 worker_options(int argc, char **argv, const char *program,
		    const char *operand);
/*
 * Not dumpable, dying with the supervisor, SIGPIPE ignored; exit at once
 * if the supervisor is already gone.  Returns the supervisor's pid.
 */
pid_t		 worker_guard(void);
/*
 * A worker program's channel to the supervisor: every whole frame, each
 * at most max() long, goes to frame(); a bad one, or one frame()
 * refuses, exits through fail(WORKER_EXIT_FAILED).  When the channel
 * closes it is freed, chan is NULL, and closed(WORKER_EXIT_OK) is called.
 * written(), if set, is called whenever a write took some of the output.
 */
struct worker_chan {
	struct iochan	*chan;		/* NULL until open and once closed */
	worker_max_fn	 max;
	worker_frame_fn	 frame;
	worker_exit_fn	 fail;
	worker_exit_fn	 closed;
	worker_written_fn written;	/* optional */
};

/* Open the supervisor's channel on base and say hello; fatal if none. */
void		 worker_channel_open(struct event_base *, struct worker_chan *);

/*
 * Become user (pw, from getpwnam): groups, gid, uid; then what the change
 * cleared again (the parent-death signal, not dumpable), exiting through
 * gone(WORKER_EXIT_OK) if the supervisor (parent) went meanwhile.  -1
 * with err set.
 */
int		 worker_become(const char *user, const struct passwd *pw,
		    pid_t parent, worker_exit_fn gone, char *err, size_t len);
/*
 * Give up root once the secrets are read: become user if one is set and
 * we are root, then never gain privileges again.  -1 with err set.
 */
int		 worker_drop_root(const char *user, pid_t parent,
		    worker_exit_fn gone, char *err, size_t len);
/* Never gain privileges through exec again; -1 with err set. */
int		 worker_no_new_privs(char *err, size_t len);

#endif

/* SPDX-License-Identifier: ISC */
/*
 * What every worker program (mcp-worker, mcp-llm, mcp-idp) does the same
 * way: its options and log, the guards before any secret arrives, the
 * supervisor's channel on FRAME_CHANNEL_FD and the loop reading its
 * frames, and giving up the supervisor's user.  Each program keeps what
 * differs: its name, its frames, its exit.  Plain libc and libevent: the
 * network-free mcp-worker-stdio links it too.
 */
#ifndef MCPS_WORKER_START_H
#define MCPS_WORKER_START_H

#include <sys/types.h>

#include <stddef.h>

#include "iochan.h"

struct event_base;
struct evbuffer;
struct frame_hdr;
struct passwd;

/* Handle one frame from the supervisor; -1 if it is bad. */
typedef int	(*worker_frame_fn)(const struct frame_hdr *, struct evbuffer *);
/* The largest frame the supervisor may send now. */
typedef size_t	(*worker_max_fn)(void);
/* Exit with a WORKER_EXIT_* code; does not return. */
typedef void	(*worker_exit_fn)(int);

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
 * Open the supervisor's channel on base and say hello; fatal if there is
 * none.  The callbacks get arg.
 */
struct iochan	*worker_channel_open(struct event_base *, iochan_read_cb,
		    iochan_event_cb, void *arg);
/*
 * Handle every whole frame in the channel's input, each at most max()
 * long, with frame(); a bad one, or one frame() refuses, exits through
 * fail(WORKER_EXIT_FAILED).
 */
void		 worker_channel_read(struct iochan *, worker_max_fn,
		    worker_frame_fn, worker_exit_fn fail);
/* The channel closed: log it, free it, and NULL *chanp. */
void		 worker_channel_closed(struct iochan **chanp);

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

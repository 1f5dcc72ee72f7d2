/* SPDX-License-Identifier: ISC */
/*
 * A non-blocking descriptor with an input and an output buffer, for the
 * paths every message takes (client connections, worker channels, stdio
 * pipes).  Unlike a libevent bufferevent, output is written eagerly: what
 * is queued during one turn of the event loop goes out in one write at the
 * end of that turn, and write interest is registered with epoll only when
 * the kernel cannot take everything.  Input is read into reserved buffer
 * space without asking the kernel how much is there first.  Per message
 * that saves the epoll_ctl calls around every write and an ioctl before
 * every read.  A socket is written with send(2) and read with recv(2),
 * past the file layer of writev(2) and readv(2).
 */
#ifndef MCPS_IOCHAN_H
#define MCPS_IOCHAN_H

#include <stddef.h>

struct event_base;
struct evbuffer;
struct iochan;

#define IOCHAN_EOF	0x01	/* the peer closed its side */
#define IOCHAN_ERROR	0x02	/* a read or write failed (errno is set) */
#define IOCHAN_TIMEOUT	0x04	/* no progress within a timeout */
#define IOCHAN_READING	0x10	/* with TIMEOUT: the read timeout */
#define IOCHAN_WRITING	0x20	/* with TIMEOUT: the write timeout */

/* New input is in the input buffer. */
typedef void (*iochan_read_cb)(struct iochan *, void *);
/* Everything queued has been written. */
typedef void (*iochan_drain_cb)(struct iochan *, void *);
/* End of input, an error or a timeout (IOCHAN_* flags). */
typedef void (*iochan_event_cb)(struct iochan *, int, void *);
/* The output changed: added bytes were queued, deleted ones written. */
typedef void (*iochan_count_cb)(struct iochan *, size_t added,
		    size_t deleted, void *);

/*
 * Take a non-blocking descriptor (closed by iochan_free); reading is on,
 * unless read_cb is NULL (a descriptor only written to).
 */
struct iochan	*iochan_new(struct event_base *, int fd, iochan_read_cb,
		    iochan_drain_cb, iochan_event_cb, void *);
void		 iochan_free(struct iochan *);
int		 iochan_fd(struct iochan *);
struct evbuffer	*iochan_input(struct iochan *);
/* Add to it freely: it is written at the end of the loop's turn. */
struct evbuffer	*iochan_output(struct iochan *);
size_t		 iochan_queued(struct iochan *);
/*
 * Reserve this much for a read when the input buffer is empty (default and
 * most 64 KiB); the size doubles while reads fill it.  A small one keeps
 * what an idle peer costs small.
 */
void		 iochan_read_size(struct iochan *, size_t);
/* Stop or resume reading. */
void		 iochan_read(struct iochan *, int on);
/*
 * Timeouts in seconds, 0 for none: read fires when reading is on and
 * nothing arrives; write fires when output is queued and none of it can be
 * written.
 */
void		 iochan_timeouts(struct iochan *, int read, int write);
/*
 * Call cb when a write passed some of the output to the kernel but not
 * all of it (the drain callback says when all of it went).
 */
void		 iochan_on_progress(struct iochan *, iochan_drain_cb cb);
/*
 * Call cb at every change of the output.  The channel's own callback on its
 * output buffer calls it: one callback a change, not two.
 */
void		 iochan_on_output(struct iochan *, iochan_count_cb cb);
/*
 * Ask the CPU for the lines a write to the channel reads, ahead of it:
 * depth 0 the channel, 1 its output buffer and flush event (reading what
 * depth 0 fetched).  For a loop over many channels (a broadcast).
 */
void		 iochan_prefetch(struct iochan *, int depth);
/* Write what is queued now, blocking for at most ms (for exit paths). */
void		 iochan_flush_wait(struct iochan *, int ms);

#endif

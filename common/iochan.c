/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "iochan.h"
#include "log.h"
#include "xmalloc.h"

#define IOCHAN_READ_SIZE	65536	/* most space reserved for one read */
#define IOCHAN_SEND_VECS	64	/* most pieces of output one sendmsg
					   takes */

struct iochan {
	int			 fd;
	struct evbuffer		*in;
	struct evbuffer		*out;
	struct event		*rev;		/* EV_READ, persistent */
	struct event		*wev;		/* EV_WRITE, only when blocked */
	struct event		*flush;		/* end of the loop's turn */
	iochan_read_cb		 read_cb;
	iochan_drain_cb		 drain_cb;
	iochan_drain_cb		 progress_cb;	/* some written, or NULL */
	iochan_count_cb		 count_cb;	/* output changed, or NULL */
	struct evbuffer_cb_entry *out_cb;	/* the output's callback */
	iochan_event_cb		 event_cb;
	void			*arg;
	int			 reading;
	size_t			 rsize;		/* reserved for the next read */
	size_t			 rsize_min;	/* and after an empty buffer */
	int			 read_timeout;
	int			 write_timeout;
	int			 blocked;	/* wev is added */
	int			 sock;		/* fd is a socket: send(2) and
						   recvmsg(2), not the file
						   layer of writev and readv */
};

static void	iochan_write(struct iochan *);

/*
 * Add an event with a timeout, or with none.  event_add() with a NULL
 * timeout keeps a timeout the event already has, so a timeout is cleared
 * explicitly (event_remove_timer() leaves the descriptor registered: no
 * system call).
 */
static void
iochan_event_add(struct event *ev, int seconds)
{
	struct timeval	tv = { seconds, 0 };

	if (seconds > 0)
		event_add(ev, &tv);
	else {
		event_add(ev, NULL);
		event_remove_timer(ev);
	}
}

/* Re-arm the read event with its timeout. */
static void
iochan_arm_read(struct iochan *ch)
{
	if (ch->reading)
		iochan_event_add(ch->rev, ch->read_timeout);
	else
		event_del(ch->rev);
}

/* Read into reserved space: recvmsg(2) on a socket, else readv(2). */
static ssize_t
iochan_recv(struct iochan *ch, struct evbuffer_iovec *v, int nv)
{
	struct msghdr	msg;

	if (!ch->sock)
		return (readv(ch->fd, (struct iovec *)v, nv));
	if (nv == 1)
		return (recv(ch->fd, v[0].iov_base, v[0].iov_len, 0));
	memset(&msg, 0, sizeof msg);
	msg.msg_iov = (struct iovec *)v;
	msg.msg_iovlen = (size_t)nv;
	return (recvmsg(ch->fd, &msg, 0));
}

/*
 * Write from the front of the output, as evbuffer_write does, and drain
 * what was taken: on a socket with send(2) or sendmsg(2), which go to the
 * socket directly, at most IOCHAN_SEND_VECS pieces at once.
 */
static int
iochan_send(struct iochan *ch)
{
	struct evbuffer_iovec	v[IOCHAN_SEND_VECS];
	struct msghdr		msg;
	ssize_t			n;
	int			nv;

	if (!ch->sock)
		return (evbuffer_write(ch->out, ch->fd));
	nv = evbuffer_peek(ch->out, -1, NULL, v, IOCHAN_SEND_VECS);
	if (nv > IOCHAN_SEND_VECS)
		nv = IOCHAN_SEND_VECS;
	if (nv == 1)
		n = send(ch->fd, v[0].iov_base, v[0].iov_len, MSG_NOSIGNAL);
	else {
		memset(&msg, 0, sizeof msg);
		msg.msg_iov = (struct iovec *)v;
		msg.msg_iovlen = (size_t)nv;
		n = sendmsg(ch->fd, &msg, MSG_NOSIGNAL);
	}
	if (n > 0)
		evbuffer_drain(ch->out, (size_t)n);
	return ((int)n);
}

/* Readable: read what is there, then tell the owner. */
static void
iochan_read_ev(evutil_socket_t fd, short what, void *arg)
{
	struct iochan		*ch = arg;
	struct evbuffer_iovec	 v[2];
	ssize_t			 n;
	int			 nv;

	if (what & EV_TIMEOUT) {
		ch->event_cb(ch, IOCHAN_TIMEOUT | IOCHAN_READING, ch->arg);
		return;
	}
	/*
	 * Reserve little while little arrives (an idle peer then pins no
	 * 64 KiB buffer), doubling while reads fill what was reserved.
	 */
	if (evbuffer_get_length(ch->in) == 0)
		ch->rsize = ch->rsize_min;
	nv = evbuffer_reserve_space(ch->in, (ev_ssize_t)ch->rsize, v, 2);
	if (nv <= 0)
		fatalx("evbuffer_reserve_space");
	n = iochan_recv(ch, v, nv);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		ch->event_cb(ch, IOCHAN_ERROR | IOCHAN_READING, ch->arg);
		return;
	}
	if (n == 0) {
		ch->event_cb(ch, IOCHAN_EOF | IOCHAN_READING, ch->arg);
		return;
	}
	if ((size_t)n >= ch->rsize && ch->rsize < IOCHAN_READ_SIZE)
		ch->rsize *= 2;
	/* readv fills the first vector before the second. */
	if ((size_t)n <= v[0].iov_len) {
		v[0].iov_len = (size_t)n;
		nv = 1;
	} else
		v[1].iov_len = (size_t)n - v[0].iov_len;
	evbuffer_commit_space(ch->in, v, nv);
	ch->read_cb(ch, ch->arg);
}

/* Writable again (or the write timeout). */
static void
iochan_write_ev(evutil_socket_t fd, short what, void *arg)
{
	struct iochan	*ch = arg;

	if (what & EV_TIMEOUT) {
		ch->event_cb(ch, IOCHAN_TIMEOUT | IOCHAN_WRITING, ch->arg);
		return;
	}
	ch->blocked = 0;
	iochan_write(ch);
}

/* The end of the loop's turn: write what was queued. */
static void
iochan_flush_ev(evutil_socket_t fd, short what, void *arg)
{
	iochan_write(arg);
}

/* Write as much as the kernel takes; wait for writability if not all. */
static void
iochan_write(struct iochan *ch)
{
	int	n, wrote = 0;

	while (evbuffer_get_length(ch->out) > 0) {
		n = iochan_send(ch);
		if (n > 0) {
			wrote = 1;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (!ch->blocked) {
				ch->blocked = 1;
				iochan_event_add(ch->wev, ch->write_timeout);
			}
			if (wrote && ch->progress_cb != NULL)
				ch->progress_cb(ch, ch->arg);
			return;
		}
		ch->event_cb(ch, IOCHAN_ERROR | IOCHAN_WRITING, ch->arg);
		return;
	}
	if (ch->blocked) {
		ch->blocked = 0;
		event_del(ch->wev);
	}
	if (ch->drain_cb != NULL)
		ch->drain_cb(ch, ch->arg);
}

/* Output was added: write it at the end of this turn of the loop. */
static void
iochan_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct iochan	*ch = arg;

	if (info->n_added > 0 && !ch->blocked)
		event_active(ch->flush, EV_TIMEOUT, 0);
}

/* The same, counted first (iochan_on_output): a callback of its own, so
 * that a channel without a counter pays nothing for it. */
static void
iochan_out_count_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct iochan	*ch = arg;

	ch->count_cb(ch, info->n_added, info->n_deleted, ch->arg);
	iochan_out_cb(buf, info, arg);
}

struct iochan *
iochan_new(struct event_base *base, int fd, iochan_read_cb read_cb,
    iochan_drain_cb drain_cb, iochan_event_cb event_cb, void *arg)
{
	struct iochan	*ch;
	struct stat	 sb;

	ch = xcalloc(1, sizeof *ch);
	ch->fd = fd;
	ch->sock = fstat(fd, &sb) == 0 && S_ISSOCK(sb.st_mode);
	ch->in = evbuffer_new();
	ch->out = evbuffer_new();
	ch->read_cb = read_cb;
	ch->drain_cb = drain_cb;
	ch->event_cb = event_cb;
	ch->arg = arg;
	ch->rev = event_new(base, fd, EV_READ | EV_PERSIST, iochan_read_ev,
	    ch);
	ch->wev = event_new(base, fd, EV_WRITE, iochan_write_ev, ch);
	ch->flush = event_new(base, -1, 0, iochan_flush_ev, ch);
	ch->out_cb = evbuffer_add_cb(ch->out, iochan_out_cb, ch);
	ch->rsize = ch->rsize_min = IOCHAN_READ_SIZE;
	ch->reading = read_cb != NULL;
	iochan_arm_read(ch);
	return (ch);
}

void
iochan_free(struct iochan *ch)
{
	if (ch == NULL)
		return;
	event_free(ch->rev);
	event_free(ch->wev);
	event_free(ch->flush);
	evbuffer_free(ch->in);
	evbuffer_free(ch->out);
	close(ch->fd);
	free(ch);
}

int
iochan_fd(struct iochan *ch)
{
	return (ch->fd);
}

struct evbuffer *
iochan_input(struct iochan *ch)
{
	return (ch->in);
}

struct evbuffer *
iochan_output(struct iochan *ch)
{
	return (ch->out);
}

size_t
iochan_queued(struct iochan *ch)
{
	return (evbuffer_get_length(ch->out));
}

void
iochan_read_size(struct iochan *ch, size_t size)
{
	if (size < 512)
		size = 512;
	if (size > IOCHAN_READ_SIZE)
		size = IOCHAN_READ_SIZE;
	ch->rsize = ch->rsize_min = size;
}

void
iochan_read(struct iochan *ch, int on)
{
	if (ch->reading == on)
		return;
	ch->reading = on;
	iochan_arm_read(ch);
}

void
iochan_timeouts(struct iochan *ch, int read_s, int write_s)
{
	if (ch->read_timeout != read_s) {
		ch->read_timeout = read_s;
		iochan_arm_read(ch);
	}
	if (ch->write_timeout != write_s) {
		ch->write_timeout = write_s;
		if (ch->blocked)
			iochan_event_add(ch->wev, write_s);
	}
}

void
iochan_on_progress(struct iochan *ch, iochan_drain_cb cb)
{
	ch->progress_cb = cb;
}

void
iochan_on_output(struct iochan *ch, iochan_count_cb cb)
{
	ch->count_cb = cb;
	evbuffer_remove_cb_entry(ch->out, ch->out_cb);
	ch->out_cb = evbuffer_add_cb(ch->out, cb != NULL ?
	    iochan_out_count_cb : iochan_out_cb, ch);
}

void
iochan_prefetch(struct iochan *ch, int depth)
{
	if (depth == 0) {
		__builtin_prefetch(ch);
		return;
	}
	__builtin_prefetch(ch->out);
	__builtin_prefetch(ch->flush);
}

void
iochan_flush_wait(struct iochan *ch, int ms)
{
	struct pollfd	pfd = { ch->fd, POLLOUT, 0 };
	int		n;

	while (evbuffer_get_length(ch->out) > 0) {
		n = iochan_send(ch);
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR) &&
		    poll(&pfd, 1, ms) > 0)
			continue;
		return;
	}
}

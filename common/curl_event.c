/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "curl_event.h"
#include "log.h"
#include "xmalloc.h"

#define CURLEV_MAX_HOST_CONNECTIONS	1100L	/* to one host at once */

struct curlev {
	struct event_base *base;
	CURLM		*multi;
	struct event	*timer;
	struct event	*kick;		/* adds transfers from the loop */
	CURL		**adds;		/* waiting to be added */
	size_t		 nadds;
	size_t		 addcap;
	curlev_done_cb	 done;
	void		*arg;
	int		 running;
	int		 due;		/* curl asked for a timeout of 0 */
};

/* One socket curl asked us to watch. */
struct curlev_sock {
	struct curlev	*cev;
	curl_socket_t	 fd;
	struct event	*ev;
};

static void	curlev_check(struct curlev *);
static void	curlev_kick_cb(evutil_socket_t, short, void *);

/* Report finished transfers. */
static void
curlev_check(struct curlev *cev)
{
	CURLMsg	*msg;
	int	 left;
	CURL	*easy;
	CURLcode result;

	while ((msg = curl_multi_info_read(cev->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		easy = msg->easy_handle;
		result = msg->data.result;
		curl_multi_remove_handle(cev->multi, easy);
		cev->done(easy, result, cev->arg);
	}
}

/* A watched socket is ready. */
static void
curlev_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct curlev	*cev = arg;
	int		 flags = 0;

	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	curl_multi_socket_action(cev->multi, fd, flags, &cev->running);
	curlev_check(cev);
}

/* curl's timeout expired. */
static void
curlev_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct curlev	*cev = arg;

	cev->due = 0;
	curl_multi_socket_action(cev->multi, CURL_SOCKET_TIMEOUT, 0,
	    &cev->running);
	curlev_check(cev);
}

/* curl wants a socket watched differently. */
static int
curlev_socket_fn(CURL *easy, curl_socket_t fd, int what, void *userp,
    void *socketp)
{
	struct curlev		*cev = userp;
	struct curlev_sock	*s = socketp;
	short			 ev = EV_PERSIST;

	if (what == CURL_POLL_REMOVE) {
		if (s != NULL) {
			event_free(s->ev);
			free(s);
			curl_multi_assign(cev->multi, fd, NULL);
		}
		return (0);
	}
	if (what & CURL_POLL_IN)
		ev |= EV_READ;
	if (what & CURL_POLL_OUT)
		ev |= EV_WRITE;
	if (s == NULL) {
		s = xcalloc(1, sizeof *s);
		s->cev = cev;
		s->fd = fd;
		curl_multi_assign(cev->multi, fd, s);
	} else
		event_free(s->ev);
	s->ev = event_new(cev->base, fd, ev, curlev_sock_cb, cev);
	event_add(s->ev, NULL);
	return (0);
}

/* curl wants a timeout. */
static int
curlev_timer_fn(CURLM *multi, long ms, void *userp)
{
	struct curlev	*cev = userp;
	struct timeval	 tv;

	cev->due = (ms == 0);
	if (ms < 0) {
		evtimer_del(cev->timer);
		return (0);
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(cev->timer, &tv);
	return (0);
}

struct curlev *
curlev_new(struct event_base *base, curlev_done_cb done, void *arg)
{
	static int	 initialised;
	struct curlev	*cev;

	if (!initialised) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			fatalx("curl_global_init");
		initialised = 1;
	}
	cev = xcalloc(1, sizeof *cev);
	if ((cev->multi = curl_multi_init()) == NULL)
		fatalx("curl_multi_init");
	cev->base = base;
	cev->done = done;
	cev->arg = arg;
	cev->timer = evtimer_new(base, curlev_timer_cb, cev);
	cev->kick = evtimer_new(base, curlev_kick_cb, cev);
	curl_multi_setopt(cev->multi, CURLMOPT_SOCKETFUNCTION,
	    curlev_socket_fn);
	curl_multi_setopt(cev->multi, CURLMOPT_SOCKETDATA, cev);
	curl_multi_setopt(cev->multi, CURLMOPT_TIMERFUNCTION, curlev_timer_fn);
	curl_multi_setopt(cev->multi, CURLMOPT_TIMERDATA, cev);
	/*
	 * Above the transports' own caps on requests in flight (1,024 and
	 * a stream), so that curl never queues one: queued, its
	 * connect_timeout would run while it waits, and an upstream whose
	 * calls hold their connections (event-stream answers over HTTP/1.1)
	 * would be taken for unreachable.
	 */
	curl_multi_setopt(cev->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
	    CURLEV_MAX_HOST_CONNECTIONS);
	return (cev);
}

void
curlev_free(struct curlev *cev)
{
	curl_multi_cleanup(cev->multi);
	event_free(cev->timer);
	event_free(cev->kick);
	free(cev->adds);
	free(cev);
}

/*
 * Add waiting transfers.  curl refuses handles added from inside its own
 * callbacks (a message arriving in a write callback may well make us send
 * another), so every add goes through the loop.  Adding asks for a timeout
 * of 0; it is run here rather than in another turn of the loop, so the
 * request goes out now.
 */
static void
curlev_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct curlev	*cev = arg;
	CURL		*easy;
	size_t		 i, n = cev->nadds;

	cev->nadds = 0;
	for (i = 0; i < n; i++) {
		easy = cev->adds[i];
		if (curl_multi_add_handle(cev->multi, easy) != CURLM_OK)
			cev->done(easy, CURLE_FAILED_INIT, cev->arg);
	}
	if (cev->due) {
		evtimer_del(cev->timer);
		curlev_timer_cb(-1, EV_TIMEOUT, cev);
	}
}

int
curlev_add(struct curlev *cev, CURL *easy)
{
	if (cev->nadds == cev->addcap) {
		cev->addcap = cev->addcap == 0 ? 16 : cev->addcap * 2;
		cev->adds = xreallocarray(cev->adds, cev->addcap,
		    sizeof *cev->adds);
	}
	cev->adds[cev->nadds++] = easy;
	event_active(cev->kick, EV_TIMEOUT, 0);
	return (0);
}

void
curlev_remove(struct curlev *cev, CURL *easy)
{
	size_t	i;

	for (i = 0; i < cev->nadds; i++) {
		if (cev->adds[i] == easy) {
			cev->adds[i] = cev->adds[--cev->nadds];
			return;
		}
	}
	curl_multi_remove_handle(cev->multi, easy);
}

CURLM *
curlev_multi(struct curlev *cev)
{
	return (cev->multi);
}

/* Set the URL and the options every request has. */
void
curlev_common(CURL *easy, const char *url, unsigned int connect_timeout,
    int tls_verify, const char *ca_file)
{
	curl_easy_setopt(easy, CURLOPT_URL, url);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)connect_timeout * 1000);
	curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, tls_verify ? 1L : 0L);
	curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, tls_verify ? 2L : 0L);
	if (ca_file != NULL) {
		/* ca_file replaces the system's CAs, it does not add to them. */
		curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file);
		curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
	}
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
}

void
curlev_headers_free(struct curl_slist *h)
{
	struct curl_slist	*e;

	for (e = h; e != NULL; e = e->next)
		explicit_bzero(e->data, strlen(e->data));
	curl_slist_free_all(h);
}

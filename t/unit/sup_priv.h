/* SPDX-License-Identifier: ISC */
/* Between sup_harness.c and sup_client.c. */
#ifndef SUP_PRIV_H
#define SUP_PRIV_H

struct evbuffer;

/* Read what a socket holds into a buffer: 1, 0 at its end, -1 (errno). */
int	sup_read(int, struct evbuffer *);
/* Write and read every worker's channel; 1 if anything moved. */
int	sup_workers_io(void);
/* Write and read every client connection; 1 if anything moved. */
int	sup_clients_io(void);
/* Hang up every connection and free the clients. */
void	sup_clients_end(void);

#endif

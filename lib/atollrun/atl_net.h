/* lib/atollrun/atl_net.h: the TCP side of libatollrun: the address to publish, the listening
 * port, the all-pairs connection set-up and the ping-pong test. Every wait has a deadline. */
#ifndef LAMKIT_ATL_NET_H
#define LAMKIT_ATL_NET_H

#include <stddef.h>
#include <stdint.h>

/* The IPv4 address (host order) to publish: ATOLLRUN_ADDR, else the server address of
 * SSH_CONNECTION, else the first up non-loopback IPv4 interface address, else 127.0.0.1.
 * 0, or -1 with err (a bad ATOLLRUN_ADDR). */
int atl_net_my_addr(uint32_t *addr, char *err, size_t errlen);

/* A listening TCP socket on every address, kernel-chosen port, backlog for n peers.
 * Returns the fd (O_CLOEXEC) and the port in *port, or -1 with err. */
int atl_net_listen(int n, uint16_t *port, char *err, size_t errlen);

/* Connect ID me to every other ID: to each lower ID's port (sending our ID), accepting one
 * connection from each higher ID on lfd. fds[j] gets the socket to j (fds[me] = -1).
 * deadline_ms is on core-style monotonic time (atl_net_now_ms). 0, or -1 with err; on
 * failure every socket opened is closed and fds[] is all -1. */
int atl_net_connect_all(int me, int n, const uint64_t *ports, int lfd, int *fds,
                        int64_t deadline_ms, char *err, size_t errlen);

/* One ping-pong over every pair (the lower ID pings, the higher answers). 0, or -1 with err. */
int atl_net_test_all(int me, int n, const int *fds, int64_t deadline_ms, char *err, size_t errlen);

int64_t atl_net_now_ms(void);

#endif

/* include/atollrun.h: the Atollrun client library: talk the init protocol with the starter
 * (`lamkit atollrun`) on stdin/stdout, learn every peer's port, connect to every peer.
 * C programs call the Atollrun_* functions (the paper's chapter 4); C++ programs get the
 * paper's singleton class Atollrun and AtollrunException (chapter 3) from this same header.
 *
 * A program calls Atollrun_Init once, before it prints anything it wants kept in order (the
 * library flushes stdout first). On return it knows the number of processes, its own ID and
 * the port of every ID; with connection establishment on (the default) it holds a connected
 * TCP socket to every other ID. The wire protocol is in doc/PROTOCOL-atollrun.md.
 *
 * The ATOLL network is gone: a port is a TCP listening endpoint. The protocol carries it as
 * one number, (IPv4 address << 16) | TCP port, at most 48 bits; Atollrun_decodePort turns it
 * into "a.b.c.d:port". 0 means "no port" (a single process that acquired none). A handle is
 * a connected TCP socket's file descriptor (-1: none, e.g. one's own ID).
 *
 * Run without a starter (no LAMKIT_ATOLLRUN in the environment), Atollrun_Init makes the
 * process a single process with ID 0 and talks to nobody.
 *
 * Environment: LAMKIT_ATOLLRUN_TIMEOUT (seconds each step may take, default 60; the starter
 * passes its own), ATOLLRUN_ADDR (the IPv4 address to publish; default: the address ssh
 * reached this host on, else the first non-loopback IPv4 address, else 127.0.0.1).
 * Not thread-safe: call everything from one thread. */
#ifndef ATOLLRUN_H
#define ATOLLRUN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t atollport_t; /* (IPv4 << 16) | TCP port; 0 = none */
typedef int atollhandle_t;    /* a connected TCP socket fd; -1 = none */

/* Atollrun_Init's failure value (its success value is 0). */
#define ATOLLRUN_INIT_ERROR (-1)
#define ATOLLRUN_NO_PORT    ((atollport_t)0)

/* Settings, read by Atollrun_Init (call them before it). Nonzero = on.
 * EstablishConnectionsOnInit (default on): connect to every other ID during init.
 * PerformConnectionTestOnInit (default off): then ping-pong once over every pair.
 * AcquirePortOnSingle (default off): open a port even when this is the only process. */
void Atollrun_setEstablishConnectionsOnInit(int on);
void Atollrun_setPerformConnectionTestOnInit(int on);
void Atollrun_setAcquirePortOnSingle(int on);

/* Run the init protocol with the starter. argc/argv are accepted for the paper's signature
 * and left as they are (either may be NULL). 0 on success; ATOLLRUN_INIT_ERROR on failure,
 * with the reason in Atollrun_getErrorString() (the starter is told FAILURE where the
 * protocol allows it). A second call returns 0 without doing anything. */
int Atollrun_Init(int *argc, char ***argv);

/* After a successful Atollrun_Init: this process's ID (0..n-1; -1 before), the number of
 * processes (0 before). getMyId and getNumberOfProcesses are lamkit's earlier names. */
int Atollrun_getCommRank(void);
int Atollrun_getCommSize(void);
int Atollrun_getMyId(void);
int Atollrun_getNumberOfProcesses(void);
/* Nonzero between a successful Atollrun_Init and Atollrun_Finalize. */
int Atollrun_isInitialized(void);
/* The port of ID id (one's own included); ATOLLRUN_NO_PORT for a bad id or no port. */
atollport_t Atollrun_getPort(int id);
/* The connected socket to ID id; -1 for one's own ID, a bad id, or no connections. */
atollhandle_t Atollrun_getHandle(int id);

/* The paper's short names. */
#define ATOLLPORT(id)   Atollrun_getPort(id)
#define ATOLLHANDLE(id) Atollrun_getHandle(id)

/* Build a port number from an IPv4 address (host byte order) and a TCP port. */
atollport_t Atollrun_encodePort(uint32_t ipv4, uint16_t tcp_port);
/* Write "a.b.c.d:port" for port into buf. 0, or -1 when port is not a valid endpoint
 * (0, above 48 bits, TCP port 0) or buf is too small (needs 22 bytes). */
int Atollrun_decodePort(atollport_t port, char *buf, size_t len);

/* Why the last call failed (one line, never NULL). */
const char *Atollrun_getErrorString(void);

/* Close every handle and the listening port. Returns 0. Atollrun_Init may not be called
 * again afterwards. */
int Atollrun_Finalize(void);

#ifdef __cplusplus
}
/* C++: the paper's class Atollrun and AtollrunException (chapter 3), header-only. */
#include "atollrun.hpp"
#endif

#endif

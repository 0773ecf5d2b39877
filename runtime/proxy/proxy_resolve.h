/* proxy_resolve: the proxy's name resolution — getaddrinfo blocks, so a
 * few worker threads run it and hand each finished job back to the event
 * loop through a pipe. */
#ifndef HAKO_RUNTIME_PROXY_RESOLVE_H
#define HAKO_RUNTIME_PROXY_RESOLVE_H

#include <netdb.h>

/* A job belongs to the workers from resolver_submit until resolver_take
 * returns it; whoever submitted it may meanwhile only clear owner (a
 * connection closed before its name came back). */
struct resolve_job
{
  struct resolve_job *next;
  void *owner; /* the loop's: NULL once nobody waits for the answer */
  char host[256];
  char port[8];
  struct addrinfo *res; /* the answer: getaddrinfo's result and status */
  int gai;
};

/* Names the workers answer from text (hosts(5) lines: ADDRESS NAME...)
 * before asking the resolver (node.json's egress.hosts).  Before
 * resolver_init. */
void resolver_set_hosts (const char *text);
/* Start the workers (signals blocked in them: they stay with the loop). */
int resolver_init (void);
/* Readable when a finished job is waiting. */
int resolver_fd (void);
void resolver_submit (struct resolve_job *j);
/* A finished job, or NULL when none is waiting. */
struct resolve_job *resolver_take (void);
void resolve_job_free (struct resolve_job *j);

#endif

/* proxy_resolve: the proxy's name resolution — getaddrinfo blocks, so a
 * few worker threads run it and hand each finished job back to the event
 * loop through a pipe. */
#include "runtime/proxy/proxy_resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define RESOLVERS 2

static struct
{
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct resolve_job *head, *tail;
  int done[2];
} resolver = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .done = { -1, -1 } };

/* node.json's egress.hosts: name -> address, first line wins. */
struct host_entry
{
  char name[256];
  char addr[64];
};
static struct host_entry *hosts;
static size_t n_hosts;

void
resolver_set_hosts (const char *text)
{
  char *copy = strdup (text), *save = NULL;
  for (char *line = copy ? strtok_r (copy, "\n", &save) : NULL; line; line = strtok_r (NULL, "\n", &save))
    {
      char *hash = strchr (line, '#');
      if (hash)
        *hash = '\0';
      char *s2 = NULL, *addr = strtok_r (line, " \t", &s2), *name;
      while (addr && (name = strtok_r (NULL, " \t", &s2)) != NULL)
        {
          struct host_entry *h = realloc (hosts, (n_hosts + 1) * sizeof *hosts);
          if (h == NULL)
            break;
          hosts = h;
          snprintf (hosts[n_hosts].name, sizeof hosts[n_hosts].name, "%s", name);
          snprintf (hosts[n_hosts].addr, sizeof hosts[n_hosts].addr, "%s", addr);
          n_hosts++;
        }
    }
  free (copy);
}

static const char *
hosts_lookup (const char *name)
{
  for (size_t i = 0; i < n_hosts; i++)
    if (strcasecmp (hosts[i].name, name) == 0)
      return hosts[i].addr;
  return NULL;
}

static void *
resolver_main (void *arg)
{
  (void)arg;
  for (;;)
    {
      pthread_mutex_lock (&resolver.mu);
      while (resolver.head == NULL)
        pthread_cond_wait (&resolver.cv, &resolver.mu);
      struct resolve_job *j = resolver.head;
      resolver.head = j->next;
      if (resolver.head == NULL)
        resolver.tail = NULL;
      pthread_mutex_unlock (&resolver.mu);
      struct addrinfo hints = { .ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM };
      const char *pinned = hosts_lookup (j->host);
      if (pinned)
        hints.ai_flags |= AI_NUMERICHOST;
      j->gai = getaddrinfo (pinned ? pinned : j->host, j->port, &hints, &j->res);
      /* A pointer is far below PIPE_BUF: the write is atomic. */
      while (write (resolver.done[1], &j, sizeof j) < 0 && errno == EINTR)
        ;
    }
  return NULL;
}

int
resolver_init (void)
{
  if (pipe2 (resolver.done, O_CLOEXEC) < 0)
    return -1;
  fcntl (resolver.done[0], F_SETFL, O_NONBLOCK);
  for (int i = 0; i < RESOLVERS; i++)
    {
      pthread_t t;
      sigset_t all, old;
      sigfillset (&all);
      pthread_sigmask (SIG_SETMASK, &all, &old); /* signals stay with the loop */
      int r = pthread_create (&t, NULL, resolver_main, NULL);
      pthread_sigmask (SIG_SETMASK, &old, NULL);
      if (r != 0)
        return -1;
      pthread_detach (t);
    }
  return 0;
}

void
resolver_submit (struct resolve_job *j)
{
  pthread_mutex_lock (&resolver.mu);
  if (resolver.tail)
    resolver.tail->next = j;
  else
    resolver.head = j;
  resolver.tail = j;
  pthread_cond_signal (&resolver.cv);
  pthread_mutex_unlock (&resolver.mu);
}

int
resolver_fd (void)
{
  return resolver.done[0];
}

struct resolve_job *
resolver_take (void)
{
  struct resolve_job *j;
  if (read (resolver.done[0], &j, sizeof j) != (ssize_t)sizeof j)
    return NULL;
  return j;
}

void
resolve_job_free (struct resolve_job *j)
{
  if (j->res)
    freeaddrinfo (j->res);
  free (j);
}

/* proxy_mitm: an intercepted CONNECT's state, shared by proxy_mitm.c (the
 * connection, its TLS, the answers) and proxy_mitm_req.c (its requests).
 * For runtime/proxy/ only. */
#ifndef HAKO_RUNTIME_PROXY_MITM_H
#define HAKO_RUNTIME_PROXY_MITM_H

#include "runtime/proxy/proxy_internal.h"
#include "runtime/proxy/proxy_mask.h"
#include "runtime/proxy/tls.h"

/* What one intercepted connection holds at most (with GnuTLS's two
 * sessions, each its read-ahead): some 300 KiB, at most PROXY_MAX_MITM of
 * them: the proxy lives outside the sandbox's memory limit, so a sandbox
 * opening connections must not make it grow without bound. */
#define IN_CAP (32 * 1024)    /* client plaintext not parsed yet */
#define UP_MAX (64 * 1024)    /* plaintext queued for the origin */
#define DOWN_CAP (128 * 1024) /* plaintext from the origin, framed as it goes */
#define RESP_HEAD_MAX (64 * 1024)
#define MAX_PENDING 32 /* requests sent and not yet answered (pipelining) */
#define MAX_NAMES 8
#define ROUNDS 64

struct tbuf
{
  char *d;
  size_t off, len, cap;
};

struct pending
{
  char method[24];
  char path[512];
  char rule[32];
  bool head;                /* HEAD: its answer has no body */
  uint64_t sent;            /* bytes of it sent to the origin (head and body) */
  char put[MAX_NAMES][64];  /* secrets put in */
  char left[MAX_NAMES][64]; /* placeholders left as they were: not their host */
  size_t n_put, n_left;
};

enum mitm_state
{
  M_REPLY,     /* the CONNECT's 200 going out */
  M_CLIENT_HS, /* the client's handshake */
  M_OPEN,      /* requests and responses */
  M_DEFER,     /* a refusal waits for the answers to the requests before it */
  M_CLOSING    /* an answer of ours going out, then the end */
};

enum resp_state
{
  R_HEAD,
  R_LEN,
  R_CHUNKED,
  R_CLOSE
};

struct mitm
{
  enum mitm_state st;
  struct tls_sni_check sni; /* sni.host: the CONNECT's host, normalized */
  gnutls_session_t cs, us;
  bool us_ready; /* the origin's handshake is done */
  struct tbuf cin, up, down;
  bool up_flush, down_flush; /* records GnuTLS holds, not sent yet (tls_send) */
  size_t down_ready;         /* down.d[off, down_ready) is framed, ... */
  size_t down_safe;          /* ... and [off, down_safe) masked, to go to the client */
  uint64_t down_base;        /* the stream offset of down.d[0] */
  struct proxy_mask *mask;   /* the host's secrets' values, masked in its answers */
  unsigned mask_gen;         /* the policy (proxy.pol_gen) mask was made from */
  uint64_t body_left;
  bool chunked, upgraded;
  struct http_chunked chunks;
  struct pending q[MAX_PENDING];
  size_t qh, qn;
  uint64_t requests;
  enum resp_state rst;
  uint64_t rleft, rbytes;
  struct http_chunked rchunks;
  int rstatus;
  bool client_eof, origin_eof;
  uint64_t sent, received; /* the whole tunnel's plaintext, for its log line */
  int deferred;            /* M_DEFER: the refusal's status ... */
  char deferred_why[400];  /* ... and reason */
  const char *verdict;     /* the CONNECT's line: "allow", or "deny"/"error" and why */
  char reason[640];
};

/* A buffer of plaintext; what it held is wiped when it goes (a secret's
 * value may have been in it). */
void tbuf_init (struct tbuf *b, size_t cap);
void tbuf_fini (struct tbuf *b);
size_t tbuf_used (const struct tbuf *b);
/* Room at the end, moving what is there to the front when that helps. */
size_t tbuf_room (struct tbuf *b);
void tbuf_add (struct tbuf *b, const void *data, size_t n);

/* proxy_mitm.c */
void mitm_log_request (struct proxy *p, const struct conn *c, const struct pending *q, const char *verdict,
                       const char *rule, const char *reason, int status, uint64_t received);
/* Answer status inside the client's TLS, then end the connection. */
void mitm_answer_and_close (struct proxy *p, struct conn *c, int status, const char *reason);
/* A request refused: answered once the requests before it are (pipelined,
 * they go first), then the connection ends. */
void mitm_refuse (struct proxy *p, struct conn *c, int status, const char *reason);

/* proxy_mitm_req.c: what the client sent, toward the origin: bodies as
 * framed, heads checked (true when something moved). */
bool mitm_process_requests (struct proxy *p, struct conn *c);

#endif

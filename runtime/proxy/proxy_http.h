/* proxy_http: the HTTP the proxy speaks — finding and parsing a request head
 * (CONNECT or an absolute http:// URI) with bounded sizes, and rewriting a
 * forwarded request to origin form.  Pure functions, unit-tested alone. */
#ifndef HAKO_RUNTIME_PROXY_HTTP_H
#define HAKO_RUNTIME_PROXY_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A request head (request line and headers) may not exceed this. */
#define HTTP_MAX_HEAD 16384

struct http_request
{
  bool connect; /* CONNECT host:port; else an absolute-URI request to forward */
  char method[24];
  char host[256]; /* name, or a literal address without brackets */
  uint16_t port;
  char *head; /* forward: the head rewritten to origin form (malloc'd, NUL-terminated) */
  size_t head_len;
  uint64_t body_len; /* forward: Content-Length (0 when none) */
  bool body_raw;     /* forward: Transfer-Encoding: the rest of the stream is passed as is */
};

/* The length of the head at the start of buf (through its empty line), 0
 * when it is not complete yet, -1 when it is longer than max. */
ssize_t http_head_end (const char *buf, size_t len, size_t max);

/* Parse a complete head.  On failure returns -1 with *status the HTTP status
 * to answer (400, 405, 501...) and reason one line without CR/LF. */
int http_parse_request (const char *head, size_t len, struct http_request *req, int *status, char *reason,
                        size_t reason_size);
void http_request_free (struct http_request *req);

/* "host:port", with brackets around an IPv6 address. */
void http_authority (const char *host, uint16_t port, char *out, size_t size);

/* A complete response: status line, Content-Type text/plain, Connection:
 * close, and the one-line reason as the body (malloc'd, length in *len). */
char *http_response (int status, const char *reason, size_t *len);

#endif

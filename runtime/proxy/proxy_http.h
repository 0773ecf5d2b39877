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
  bool connect; /* CONNECT host:port; else a request to forward */
  char method[24];
  char host[256]; /* name, or a literal address without brackets */
  uint16_t port;
  char *head; /* forward: the head in origin form (malloc'd, NUL-terminated) */
  size_t head_len;
  size_t path_off, path_len; /* forward: the request target (path and query) within head */
  uint64_t body_len;         /* forward: Content-Length (0 when none) */
  bool chunked;              /* forward: Transfer-Encoding: chunked */
  bool upgrade;              /* forward: an Upgrade header (the connection may change protocol) */
  bool close;                /* forward: Connection: close, or HTTP/1.0 without keep-alive */
};

/* The length of the head at the start of buf (through its empty line), 0
 * when it is not complete yet, -1 when it is longer than max. */
ssize_t http_head_end (const char *buf, size_t len, size_t max);

/* Parse a complete head sent to the proxy: CONNECT, or an absolute http://
 * URI rewritten to origin form.  On failure returns -1 with *status the
 * HTTP status to answer (400, 405, 501...) and reason one line without
 * CR/LF. */
int http_parse_request (const char *head, size_t len, struct http_request *req, int *status, char *reason,
                        size_t reason_size);
/* Parse a complete head sent inside an intercepted TLS connection: origin
 * form ("GET /path HTTP/1.1") with exactly one Host header, whose host and
 * port (default_port when it gives none) go to req->host and req->port;
 * forwarded as it came, Proxy-* headers dropped. */
int http_parse_origin_request (const char *head, size_t len, uint16_t default_port, struct http_request *req,
                               int *status, char *reason, size_t reason_size);
void http_request_free (struct http_request *req);

/* A response head (from the origin): its status and how its body is
 * delimited. */
struct http_response
{
  int status;
  uint64_t body_len; /* content_length: the body's bytes */
  bool content_length;
  bool chunked;
  bool until_close; /* neither: the body runs until the origin closes */
};
/* head_request: the response answers a HEAD (so it has no body).  -1 when
 * the head is not a response a client could read one way only. */
int http_parse_response (const char *head, size_t len, bool head_request, struct http_response *resp);

/* Where a chunked body ends.  Fed the bytes that follow the head, it says
 * how many of them belong to the body; strict, so that the proxy and the
 * origin cannot read two different ends into one stream (request
 * smuggling): hex sizes of at most 15 digits, CRLF line ends, chunk
 * extensions and trailers bounded. */
struct http_chunked
{
  int st;
  uint64_t left;  /* bytes of the current chunk's data still to come */
  size_t line;    /* bytes of the current size or trailer line */
  size_t trailer; /* bytes of trailers so far */
  int digits;
};
/* 0 or more bytes of buf taken as body; *done once its last byte was taken.
 * -1 (*why set) when the body is malformed. */
ssize_t http_chunked_feed (struct http_chunked *c, const char *buf, size_t len, bool *done, const char **why);
/* How many of the next bytes are chunk data (0: framing comes next). */
uint64_t http_chunked_data (const struct http_chunked *c);

/* "host:port", with brackets around an IPv6 address. */
void http_authority (const char *host, uint16_t port, char *out, size_t size);

/* A complete response: status line, Content-Type text/plain, Connection:
 * close, and the one-line reason as the body (malloc'd, length in *len). */
char *http_response (int status, const char *reason, size_t *len);

#endif

/* fuzz_proxy_http: the proxy reads request heads from code inside the
 * sandbox, which is adversarial by assumption.  The head finder and parser
 * must stay within their bounds, and what they accept must be sane: a host
 * that fits, a port that is not 0, a rewritten head that is NUL-terminated.
 * The same bytes also go through what an intercepted connection reads: an
 * origin-form request, a response head, a chunked body (which must never
 * take more than it was given). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/proxy/proxy_http.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
other_parsers (const char *buf, size_t size)
{
  struct http_request req;
  int status = 0;
  char reason[128];
  ssize_t end = http_head_end (buf, size, HTTP_MAX_HEAD);
  if (end > 0)
    {
      if (http_parse_origin_request (buf, (size_t)end, 443, &req, &status, reason, sizeof reason) == 0
          && (req.port == 0 || req.head == NULL || strlen (req.head) != req.head_len
              || req.path_off + req.path_len > req.head_len))
        abort ();
      http_request_free (&req);
      struct http_response resp;
      http_parse_response (buf, (size_t)end, size & 1, &resp);
    }
  struct http_chunked ch = { 0 };
  bool done = false;
  const char *why = NULL;
  size_t off = 0;
  while (off < size && !done)
    {
      size_t piece = 1 + (size - off) / 3;
      ssize_t k = http_chunked_feed (&ch, buf + off, piece, &done, &why);
      if (k < 0)
        break;
      if ((size_t)k > piece)
        abort ();
      off += (size_t)k;
      if (k == 0 && !done)
        break;
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *buf = (const char *)data;
  other_parsers (buf, size);
  ssize_t end = http_head_end (buf, size, HTTP_MAX_HEAD);
  if (end < 0 || end == 0)
    return 0;
  if ((size_t)end > size || (size_t)end > HTTP_MAX_HEAD)
    abort ();
  struct http_request req;
  memset (&req, 0, sizeof req);
  int status = 0;
  char reason[128];
  if (http_parse_request (buf, (size_t)end, &req, &status, reason, sizeof reason) < 0)
    {
      if (status < 400 || status > 599 || memchr (reason, '\0', sizeof reason) == NULL
          || strpbrk (reason, "\r\n"))
        abort (); /* the refusal must be a status and one line */
      http_request_free (&req);
      return 0;
    }
  if (req.port == 0 || memchr (req.host, '\0', sizeof req.host) == NULL || req.host[0] == '\0')
    abort ();
  if (!req.connect && (req.head == NULL || strlen (req.head) != req.head_len))
    abort ();
  char auth[300];
  http_authority (req.host, req.port, auth, sizeof auth);
  http_request_free (&req);
  return 0;
}

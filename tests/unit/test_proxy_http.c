/* test_proxy_http: the proxy's request parser — heads, CONNECT, absolute
 * URIs rewritten to origin form, and what it refuses. */
#include <string.h>

#include "runtime/proxy/proxy_http.h"
#include "tests/unit/tap.h"

static int
parse (const char *head, struct http_request *req, int *status, char *reason)
{
  return http_parse_request (head, strlen (head), req, status, reason, 256);
}

static void
refused (const char *head, int want, const char *what)
{
  struct http_request req;
  int status = 0;
  char reason[256] = "";
  int r = parse (head, &req, &status, reason);
  ok (r < 0 && status == want && reason[0] && !strpbrk (reason, "\r\n"), "%s: %d %s", what, status, reason);
  http_request_free (&req);
}

static void
test_head_end (void)
{
  const char *h = "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\nBODY";
  ok (http_head_end (h, strlen (h), HTTP_MAX_HEAD) == (ssize_t)(strlen (h) - 4), "head end found");
  ok (http_head_end (h, 20, HTTP_MAX_HEAD) == 0, "incomplete head");
  ok (http_head_end (h, 20, 20) == -1, "a head longer than the bound");
  ok (http_head_end ("\r\n\r", 3, 16) == 0, "three bytes are not a head");
}

static void
test_connect (void)
{
  struct http_request req;
  int status;
  char reason[256];
  ok (parse ("CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n", &req, &status, reason) == 0
          && req.connect && strcmp (req.host, "example.org") == 0 && req.port == 443,
      "CONNECT host:port");
  http_request_free (&req);
  ok (parse ("CONNECT [::1]:8080 HTTP/1.1\r\n\r\n", &req, &status, reason) == 0
          && strcmp (req.host, "::1") == 0 && req.port == 8080,
      "CONNECT [v6]:port");
  http_request_free (&req);
  ok (parse ("CONNECT 127.0.0.1:80 HTTP/1.0\r\n\r\n", &req, &status, reason) == 0
          && strcmp (req.host, "127.0.0.1") == 0 && req.port == 80,
      "CONNECT over HTTP/1.0");
  http_request_free (&req);
}

static void
test_forward (void)
{
  struct http_request req;
  int status;
  char reason[256];
  const char *h = "GET http://Example.org:8080/a/b?c=d HTTP/1.1\r\nHost: evil.example\r\n"
                  "Proxy-Connection: keep-alive\r\nUser-Agent: t\r\nContent-Length: 5\r\n\r\n";
  ok (parse (h, &req, &status, reason) == 0, "absolute URI parses");
  ok (!req.connect && strcmp (req.host, "Example.org") == 0 && req.port == 8080 && req.body_len == 5,
      "host, port, body length");
  is_str (req.head,
          "GET /a/b?c=d HTTP/1.1\r\nHost: Example.org:8080\r\nUser-Agent: t\r\nContent-Length: 5\r\n\r\n",
          "rewritten to origin form, Host from the URI, Proxy-* dropped");
  ok (req.head_len == strlen (req.head), "head length");
  http_request_free (&req);
  ok (parse ("GET http://a.example HTTP/1.0\r\n\r\n", &req, &status, reason) == 0
          && strcmp (req.head, "GET / HTTP/1.0\r\nHost: a.example\r\n\r\n") == 0 && req.port == 80,
      "no path: \"/\", default port 80");
  http_request_free (&req);
  ok (parse ("POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &req, &status, reason) == 0
          && req.chunked && req.body_len == 0,
      "Transfer-Encoding: chunked");
  http_request_free (&req);
  ok (parse ("GET http://[::1]:81/x HTTP/1.1\r\n\r\n", &req, &status, reason) == 0
          && strcmp (req.host, "::1") == 0 && req.port == 81,
      "IPv6 literal in the URI");
  http_request_free (&req);
}

static void
test_refusals (void)
{
  /* Found by fuzz_proxy_http: a header behind a NUL, unseen by C strings. */
  static const char nul_head[] = "POST http://[::1]/x HTTP/1.1\r\ni\0\0Transfer-Encoding: chunked\r\n\r\n";
  struct http_request nreq;
  int nstatus = 0;
  char nreason[256] = "";
  ok (http_parse_request (nul_head, sizeof nul_head - 1, &nreq, &nstatus, nreason, sizeof nreason) < 0
          && nstatus == 400,
      "a NUL in the head: 400 %s", nreason);
  http_request_free (&nreq);
  refused ("GET http://a/ HTTP/1.1\r\nX: a\001b\r\n\r\n", 400, "a control character in a header");
  refused ("GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400, "origin form (not a proxy request)");
  refused ("GET https://a/ HTTP/1.1\r\n\r\n", 400, "https:// URI (CONNECT is for TLS)");
  refused ("GET http://user@a/ HTTP/1.1\r\n\r\n", 400, "userinfo");
  refused ("GET http://a/ HTTP/2.0\r\n\r\n", 505, "HTTP/2");
  refused ("GET http://a/ HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n", 400, "folded header");
  refused ("GET http://a/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400,
           "conflicting lengths");
  refused ("POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
           "length and chunked");
  refused ("GET http://a/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "negative length");
  refused ("GET http://a/ HTTP/1.1\nX: y\n\n", 400, "bare LF");
  refused ("CONNECT a:0 HTTP/1.1\r\n\r\n", 400, "port 0");
  refused ("CONNECT a:99999 HTTP/1.1\r\n\r\n", 400, "port out of range");
  refused ("CONNECT a b:1 HTTP/1.1\r\n\r\n", 505, "space in target");
  refused ("CONNECT [::1 HTTP/1.1\r\n\r\n", 400, "unclosed bracket");
  refused ("CONNECT a/b:1 HTTP/1.1\r\n\r\n", 400, "slash in host");
  refused ("G(T http://a/ HTTP/1.1\r\n\r\n", 400, "bad method");
  refused ("POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501,
           "a Transfer-Encoding other than chunked");
  refused ("POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
           "two Transfer-Encoding headers");
  refused ("POST http://a/ HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n", 501, "xchunked");
  refused ("GET http://a/ HTTP/1.1\r\nBad Name: x\r\n\r\n", 400, "space in header name");
}

/* Requests inside an intercepted tunnel: origin form, one Host. */
static void
test_origin (void)
{
  struct http_request req;
  int status = 0;
  char reason[256] = "";
  const char *h = "GET /a/b?c=1 HTTP/1.1\r\nHost: API.example.com\r\nProxy-Authorization: x\r\nX: y\r\n\r\n";
  ok (http_parse_origin_request (h, strlen (h), 443, &req, &status, reason, sizeof reason) == 0
          && strcmp (req.host, "API.example.com") == 0 && req.port == 443 && req.path_len == 8
          && strncmp (req.head + req.path_off, "/a/b?c=1", 8) == 0,
      "origin form: the Host header's host, its default port, the path");
  is_str (req.head, "GET /a/b?c=1 HTTP/1.1\r\nHost: API.example.com\r\nX: y\r\n\r\n",
          "forwarded as it came, Proxy-* dropped");
  http_request_free (&req);
  const char *h10 = "GET / HTTP/1.0\r\nHost: a:8443\r\n\r\n";
  ok (http_parse_origin_request (h10, strlen (h10), 443, &req, &status, reason, sizeof reason) == 0
          && req.port == 8443 && req.close,
      "HTTP/1.0: a port in Host, the connection closes after");
  http_request_free (&req);
  const struct
  {
    const char *head;
    int status;
    const char *what;
  } bad[] = {
    { "GET / HTTP/1.1\r\n\r\n", 400, "no Host" },
    { "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "two Host headers" },
    { "GET https://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400, "absolute form inside the tunnel" },
    { "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 405, "CONNECT inside the tunnel" },
    { "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
      "CL and TE" },
    { "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400, "two lengths" },
    { "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "the HTTP/2 preface" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      int r = http_parse_origin_request (bad[i].head, strlen (bad[i].head), 443, &req, &status, reason,
                                         sizeof reason);
      ok (r < 0 && status == bad[i].status, "%s: %d %s", bad[i].what, status, reason);
      http_request_free (&req);
    }
}

static void
test_response_head (void)
{
  struct http_response r;
  const char *a = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n";
  ok (http_parse_response (a, strlen (a), false, &r) == 0 && r.status == 200 && r.content_length
          && r.body_len == 12,
      "Content-Length");
  const char *b = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n";
  ok (http_parse_response (b, strlen (b), false, &r) == 0 && r.chunked && !r.content_length,
      "chunked wins over a length");
  const char *c = "HTTP/1.0 200 OK\r\n\r\n";
  ok (http_parse_response (c, strlen (c), false, &r) == 0 && r.until_close,
      "neither: until the origin closes");
  ok (http_parse_response (a, strlen (a), true, &r) == 0 && r.body_len == 0, "a HEAD's answer has no body");
  const char *d = "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n";
  ok (http_parse_response (d, strlen (d), false, &r) == 0 && r.body_len == 0 && !r.until_close, "nor a 304");
  ok (http_parse_response ("SSH-2.0\r\n\r\n", 11, false, &r) < 0, "not a response");
}

/* Where a chunked body ends, fed in any pieces. */
static void
test_chunked (void)
{
  const char *body = "4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nTrailer: x\r\n\r\nGET /next";
  size_t blen = strlen (body) - strlen ("GET /next");
  for (size_t piece = 1; piece <= 7; piece += 3)
    {
      struct http_chunked ch = { 0 };
      size_t taken = 0;
      bool done = false;
      const char *why = NULL;
      while (!done && taken < strlen (body))
        {
          size_t n = strlen (body) - taken < piece ? strlen (body) - taken : piece;
          ssize_t k = http_chunked_feed (&ch, body + taken, n, &done, &why);
          if (k < 0)
            break;
          taken += (size_t)k;
        }
      ok (done && taken == blen, "pieces of %zu: the body ends before the next request (%zu of %zu)", piece,
          taken, blen);
    }
  const char *bad[] = { "x\r\n", "4\nWiki\r\n",           "4\r\nWikiX\r\n", "1234567890123456\r\n",
                        "\r\n",  "0\r\nbad\nline\r\n\r\n" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      struct http_chunked ch = { 0 };
      bool done;
      const char *why = NULL;
      ok (http_chunked_feed (&ch, bad[i], strlen (bad[i]), &done, &why) < 0 && why,
          "malformed chunk %zu refused: %s", i, why ? why : "-");
    }
}

static void
test_response (void)
{
  size_t n;
  char *r = http_response (403, "example.org:80 is not in the allow-list", &n);
  ok (strncmp (r, "HTTP/1.1 403 Forbidden\r\n", 24) == 0 && strstr (r, "Content-Length: 40\r\n")
          && strstr (r, "\r\n\r\nexample.org:80 is not in the allow-list\n") && n == strlen (r),
      "403 with a one-line reason");
  free (r);
  r = http_response (200, "", &n);
  is_str (r, "HTTP/1.1 200 Connection established\r\n\r\n", "200 for CONNECT");
  free (r);
  char a[64];
  http_authority ("::1", 80, a, sizeof a);
  is_str (a, "[::1]:80", "IPv6 authority in brackets");
}

int
main (void)
{
  test_head_end ();
  test_connect ();
  test_forward ();
  test_origin ();
  test_response_head ();
  test_chunked ();
  test_refusals ();
  test_response ();
  return tap_done ();
}

/* proxy_http: the HTTP the proxy speaks — finding and parsing a request head
 * (CONNECT or an absolute http:// URI) with bounded sizes, and rewriting a
 * forwarded request to origin form.  Pure functions, unit-tested alone.
 *
 * The parser is strict where leniency would let two parties read one stream
 * two ways (request smuggling): one Content-Length, never together with a
 * Transfer-Encoding, no obsolete line folding, CRLF line ends only. */
#include "runtime/proxy/proxy_http.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/util.h"

ssize_t
http_head_end (const char *buf, size_t len, size_t max)
{
  size_t n = len < max ? len : max;
  for (size_t i = 3; i < n; i++)
    if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r')
      return (ssize_t)(i + 1);
  return len >= max ? -1 : 0;
}

static int __attribute__ ((format (printf, 5, 6)))
fail (int *status, int code, char *reason, size_t size, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (reason, size, fmt, ap);
  va_end (ap);
  *status = code;
  return -1;
}

static bool
is_tchar (unsigned char c)
{
  return isalnum (c) || strchr ("!#$%&'*+-.^_`|~", c) != NULL;
}

/* host[:port] or [v6][:port]; no userinfo. */
static bool
parse_authority (const char *a, size_t n, uint16_t default_port, struct http_request *req)
{
  const char *host = a, *colon = NULL;
  size_t hlen;
  if (n > 0 && a[0] == '[')
    {
      const char *close = memchr (a, ']', n);
      if (close == NULL)
        return false;
      host = a + 1;
      hlen = (size_t)(close - host);
      if (close + 1 < a + n)
        {
          if (close[1] != ':')
            return false;
          colon = close + 1;
        }
    }
  else
    {
      colon = memchr (a, ':', n);
      hlen = colon ? (size_t)(colon - a) : n;
    }
  if (hlen == 0 || hlen >= sizeof req->host)
    return false;
  for (size_t i = 0; i < hlen; i++)
    {
      unsigned char c = (unsigned char)host[i];
      if (!(isalnum (c) || c == '.' || c == '-' || c == '_' || (c == ':' && a[0] == '[')))
        return false;
    }
  memcpy (req->host, host, hlen);
  req->host[hlen] = '\0';
  req->port = default_port;
  if (colon)
    {
      const char *p = colon + 1, *end = a + n;
      unsigned long port = 0;
      if (p == end || end - p > 5)
        return false;
      for (; p < end; p++)
        {
          if (!isdigit ((unsigned char)*p))
            return false;
          port = port * 10 + (unsigned long)(*p - '0');
        }
      if (port == 0 || port > 65535)
        return false;
      req->port = (uint16_t)port;
    }
  return req->port != 0;
}

static bool
header_is (const char *line, size_t name_len, const char *name)
{
  return strlen (name) == name_len && strncasecmp (line, name, name_len) == 0;
}

/* A header's value with surrounding blanks trimmed. */
static void
header_value (const char *colon, const char *eol, const char **v, size_t *vlen)
{
  const char *s = colon + 1;
  while (s < eol && (*s == ' ' || *s == '\t'))
    s++;
  const char *e = eol;
  while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
    e--;
  *v = s;
  *vlen = (size_t)(e - s);
}

static void
out_add (char *out, size_t *len, const void *data, size_t n)
{
  memcpy (out + *len, data, n);
  *len += n;
}

/* Walk the headers: check them, copy the ones the origin should see into
 * out (Host replaced by the URI's authority, Proxy-* dropped). */
static int
parse_headers (const char *p, const char *end, struct http_request *req, char *out, size_t *olen, int *status,
               char *reason, size_t rsize)
{
  bool has_length = false;
  while (p < end)
    {
      const char *eol = memchr (p, '\r', (size_t)(end - p));
      if (eol == NULL || eol + 1 >= end || eol[1] != '\n')
        return fail (status, 400, reason, rsize, "bad header line end");
      if (eol == p)
        break; /* the empty line */
      if (*p == ' ' || *p == '\t')
        return fail (status, 400, reason, rsize, "folded header lines are not accepted");
      const char *colon = memchr (p, ':', (size_t)(eol - p));
      if (colon == NULL || colon == p)
        return fail (status, 400, reason, rsize, "malformed header line");
      for (const char *c = p; c < colon; c++)
        if (!is_tchar ((unsigned char)*c))
          return fail (status, 400, reason, rsize, "bad character in a header name");
      for (const char *c = colon; c < eol; c++)
        if (*c == '\0' || *c == '\n')
          return fail (status, 400, reason, rsize, "bad character in a header value");
      size_t nlen = (size_t)(colon - p);
      const char *v;
      size_t vlen;
      header_value (colon, eol, &v, &vlen);
      bool keep = true;
      if (header_is (p, nlen, "Content-Length"))
        {
          uint64_t n = 0;
          if (vlen == 0 || vlen > 15)
            return fail (status, 400, reason, rsize, "bad Content-Length");
          for (size_t i = 0; i < vlen; i++)
            {
              if (!isdigit ((unsigned char)v[i]))
                return fail (status, 400, reason, rsize, "bad Content-Length");
              n = n * 10 + (uint64_t)(v[i] - '0');
            }
          if (has_length && n != req->body_len)
            return fail (status, 400, reason, rsize, "conflicting Content-Length headers");
          has_length = true;
          req->body_len = n;
        }
      else if (header_is (p, nlen, "Transfer-Encoding"))
        req->body_raw = true;
      else if (header_is (p, nlen, "Host") || header_is (p, nlen, "Proxy-Connection")
               || header_is (p, nlen, "Proxy-Authorization"))
        keep = false;
      if (keep && out)
        {
          out_add (out, olen, p, (size_t)(eol - p));
          out_add (out, olen, "\r\n", 2);
        }
      p = eol + 2;
    }
  if (has_length && req->body_raw)
    return fail (status, 400, reason, rsize, "both Content-Length and Transfer-Encoding");
  return 0;
}

int
http_parse_request (const char *head, size_t len, struct http_request *req, int *status, char *reason,
                    size_t rsize)
{
  *req = (struct http_request){ 0 };
  const char *end = head + len;
  /* No NUL or other control character anywhere in the head (HTAB, CR, LF
   * aside): the head is handled with C string functions after this, and a
   * header hidden behind a NUL would be seen by the origin but not by the
   * proxy — a way to smuggle a second request past the allow-list check. */
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char)head[i];
      if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
        return fail (status, 400, reason, rsize, "control character in the request head");
    }
  const char *eol = memchr (head, '\r', len);
  if (eol == NULL || eol + 1 >= end || eol[1] != '\n')
    return fail (status, 400, reason, rsize, "bad request line");
  /* METHOD SP TARGET SP HTTP/1.x */
  const char *sp1 = memchr (head, ' ', (size_t)(eol - head));
  const char *sp2 = sp1 ? memchr (sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
  if (sp1 == NULL || sp2 == NULL || sp1 == head || sp2 == sp1 + 1
      || (size_t)(sp1 - head) >= sizeof req->method)
    return fail (status, 400, reason, rsize, "bad request line");
  for (const char *c = head; c < sp1; c++)
    if (!is_tchar ((unsigned char)*c))
      return fail (status, 400, reason, rsize, "bad method");
  memcpy (req->method, head, (size_t)(sp1 - head));
  const char *version = sp2 + 1;
  size_t vlen = (size_t)(eol - version);
  if (vlen != 8 || strncmp (version, "HTTP/1.", 7) != 0 || (version[7] != '0' && version[7] != '1'))
    return fail (status, 505, reason, rsize, "only HTTP/1.0 and HTTP/1.1 are spoken here");
  const char *target = sp1 + 1;
  size_t tlen = (size_t)(sp2 - target);
  for (size_t i = 0; i < tlen; i++)
    if ((unsigned char)target[i] <= ' ' || target[i] == 0x7f)
      return fail (status, 400, reason, rsize, "bad request target");

  if (strcmp (req->method, "CONNECT") == 0)
    {
      req->connect = true;
      if (!parse_authority (target, tlen, 443, req))
        return fail (status, 400, reason, rsize, "CONNECT needs host:port");
      return parse_headers (eol + 2, end, req, NULL, NULL, status, reason, rsize);
    }
  if (tlen < 7 || strncasecmp (target, "http://", 7) != 0)
    return fail (status, 400, reason, rsize,
                 "only CONNECT and absolute http:// URIs are proxied (is the proxy set as HTTP_PROXY?)");
  const char *auth = target + 7;
  size_t alen = strcspn (auth, "/?# ");
  if (alen > tlen - 7)
    alen = tlen - 7;
  if (memchr (auth, '@', alen))
    return fail (status, 400, reason, rsize, "user information in the URI is not accepted");
  if (!parse_authority (auth, alen, 80, req))
    return fail (status, 400, reason, rsize, "bad host in the URI");
  const char *path = auth + alen;
  size_t plen = (size_t)(sp2 - path);

  /* The origin form drops "http://" and the old Host line, and adds "/", a
     Host line ("Host: " AUTHORITY CRLF) and a NUL: never more than this. */
  char *out = xmalloc (len + alen + 16);
  size_t olen = 0;
  out_add (out, &olen, req->method, strlen (req->method));
  out_add (out, &olen, " ", 1);
  if (plen == 0 || path[0] != '/')
    out_add (out, &olen, "/", 1);
  out_add (out, &olen, path, plen);
  out_add (out, &olen, " ", 1);
  out_add (out, &olen, version, 8);
  out_add (out, &olen, "\r\nHost: ", 8);
  out_add (out, &olen, auth, alen);
  out_add (out, &olen, "\r\n", 2);
  if (parse_headers (eol + 2, end, req, out, &olen, status, reason, rsize) < 0)
    {
      free (out);
      return -1;
    }
  out_add (out, &olen, "\r\n", 2);
  out[olen] = '\0';
  req->head = out;
  req->head_len = olen;
  return 0;
}

void
http_request_free (struct http_request *req)
{
  free (req->head);
  req->head = NULL;
}

void
http_authority (const char *host, uint16_t port, char *out, size_t size)
{
  snprintf (out, size, strchr (host, ':') ? "[%s]:%u" : "%s:%u", host, (unsigned)port);
}

static const char *
status_text (int status)
{
  switch (status)
    {
    case 200: return "Connection established";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

char *
http_response (int status, const char *reason, size_t *len)
{
  char *r;
  if (status == 200)
    r = xasprintf ("HTTP/1.1 200 Connection established\r\n\r\n");
  else
    r = xasprintf ("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                   "Connection: close\r\n\r\n%s\n",
                   status, status_text (status), strlen (reason) + 1, reason);
  *len = strlen (r);
  return r;
}

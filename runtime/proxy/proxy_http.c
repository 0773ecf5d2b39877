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

/* A comma-separated header value holds token (case-insensitive). */
static bool
value_has_token (const char *v, size_t n, const char *token)
{
  size_t t = strlen (token);
  for (size_t i = 0; i < n;)
    {
      while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
        i++;
      size_t j = i;
      while (j < n && v[j] != ',')
        j++;
      size_t e = j;
      while (e > i && (v[e - 1] == ' ' || v[e - 1] == '\t'))
        e--;
      if (e - i == t && strncasecmp (v + i, token, t) == 0)
        return true;
      i = j;
    }
  return false;
}

struct head_walk
{
  bool origin; /* an intercepted request: Host kept and captured */
  int n_host;  /* Host headers seen */
  const char *host_v;
  size_t host_vlen;
  bool keep_alive, close;
};

/* One Content-Length value into req (equal repeats allowed, as RFC 9112). */
static int
take_length (const char *v, size_t vlen, bool *has_length, struct http_request *req, int *status,
             char *reason, size_t rsize)
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
  if (*has_length && n != req->body_len)
    return fail (status, 400, reason, rsize, "conflicting Content-Length headers");
  *has_length = true;
  req->body_len = n;
  return 0;
}

/* Walk the headers: check them, copy the ones the origin should see into
 * out (proxy form: Host replaced by the URI's authority; both: Proxy-*
 * dropped).  Transfer-Encoding is "chunked" alone, once: anything else is
 * a framing the proxy and the origin might read differently. */
static int
parse_headers (const char *p, const char *end, struct http_request *req, struct head_walk *w, char *out,
               size_t *olen, int *status, char *reason, size_t rsize)
{
  bool has_length = false;
  int n_te = 0;
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
          if (take_length (v, vlen, &has_length, req, status, reason, rsize) < 0)
            return -1;
        }
      else if (header_is (p, nlen, "Transfer-Encoding"))
        {
          if (++n_te > 1)
            return fail (status, 400, reason, rsize, "more than one Transfer-Encoding header");
          if (vlen != 7 || strncasecmp (v, "chunked", 7) != 0)
            return fail (status, 501, reason, rsize, "only Transfer-Encoding: chunked is relayed");
          req->chunked = true;
        }
      else if (header_is (p, nlen, "Host"))
        {
          w->n_host++;
          w->host_v = v;
          w->host_vlen = vlen;
          keep = w->origin;
        }
      else if (header_is (p, nlen, "Proxy-Connection") || header_is (p, nlen, "Proxy-Authorization"))
        keep = false;
      else if (header_is (p, nlen, "Connection"))
        {
          w->close |= value_has_token (v, vlen, "close");
          w->keep_alive |= value_has_token (v, vlen, "keep-alive");
        }
      else if (header_is (p, nlen, "Upgrade"))
        req->upgrade = true;
      if (keep && out)
        {
          out_add (out, olen, p, (size_t)(eol - p));
          out_add (out, olen, "\r\n", 2);
        }
      p = eol + 2;
    }
  if (has_length && req->chunked)
    return fail (status, 400, reason, rsize, "both Content-Length and Transfer-Encoding");
  return 0;
}

/* The request line, checked: METHOD SP TARGET SP HTTP/1.x.  *target and
 * *version point into head; *eol at its CR. */
static int
parse_request_line (const char *head, size_t len, struct http_request *req, const char **target, size_t *tlen,
                    const char **version, const char **eol_out, int *status, char *reason, size_t rsize)
{
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
  const char *sp1 = memchr (head, ' ', (size_t)(eol - head));
  const char *sp2 = sp1 ? memchr (sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
  if (sp1 == NULL || sp2 == NULL || sp1 == head || sp2 == sp1 + 1
      || (size_t)(sp1 - head) >= sizeof req->method)
    return fail (status, 400, reason, rsize, "bad request line");
  for (const char *c = head; c < sp1; c++)
    if (!is_tchar ((unsigned char)*c))
      return fail (status, 400, reason, rsize, "bad method");
  memcpy (req->method, head, (size_t)(sp1 - head));
  *version = sp2 + 1;
  size_t vlen = (size_t)(eol - *version);
  if (vlen != 8 || strncmp (*version, "HTTP/1.", 7) != 0 || ((*version)[7] != '0' && (*version)[7] != '1'))
    return fail (status, 505, reason, rsize, "only HTTP/1.0 and HTTP/1.1 are spoken here");
  *target = sp1 + 1;
  *tlen = (size_t)(sp2 - *target);
  for (size_t i = 0; i < *tlen; i++)
    if ((unsigned char)(*target)[i] <= ' ' || (*target)[i] == 0x7f)
      return fail (status, 400, reason, rsize, "bad request target");
  *eol_out = eol;
  return 0;
}

static void
set_close (struct http_request *req, const char *version, const struct head_walk *w)
{
  req->close = w->close || (version[7] == '0' && !w->keep_alive);
}

/* The headers from p to end added to out (the request line is there, olen
 * bytes), the blank line after them, and the request given out as its
 * head; out is freed on failure. */
static int
finish_head (const char *p, const char *end, struct http_request *req, struct head_walk *w, char *out,
             size_t olen, const char *version, int *status, char *reason, size_t rsize)
{
  if (parse_headers (p, end, req, w, out, &olen, status, reason, rsize) < 0)
    {
      free (out);
      return -1;
    }
  out_add (out, &olen, "\r\n", 2);
  out[olen] = '\0';
  req->head = out;
  req->head_len = olen;
  set_close (req, version, w);
  return 0;
}

int
http_parse_request (const char *head, size_t len, struct http_request *req, int *status, char *reason,
                    size_t rsize)
{
  *req = (struct http_request){ 0 };
  const char *target, *version, *eol;
  size_t tlen;
  struct head_walk w = { 0 };
  if (parse_request_line (head, len, req, &target, &tlen, &version, &eol, status, reason, rsize) < 0)
    return -1;
  const char *end = head + len;
  if (strcmp (req->method, "CONNECT") == 0)
    {
      req->connect = true;
      if (!parse_authority (target, tlen, 443, req))
        return fail (status, 400, reason, rsize, "CONNECT needs host:port");
      return parse_headers (eol + 2, end, req, &w, NULL, NULL, status, reason, rsize);
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
  size_t plen = (size_t)(target + tlen - path);

  /* The origin form drops "http://" and the old Host line, and adds "/", a
     Host line ("Host: " AUTHORITY CRLF) and a NUL: never more than this. */
  char *out = xmalloc (len + alen + 16);
  size_t olen = 0;
  out_add (out, &olen, req->method, strlen (req->method));
  out_add (out, &olen, " ", 1);
  req->path_off = olen;
  if (plen == 0 || path[0] != '/')
    out_add (out, &olen, "/", 1);
  out_add (out, &olen, path, plen);
  req->path_len = olen - req->path_off;
  out_add (out, &olen, " ", 1);
  out_add (out, &olen, version, 8);
  out_add (out, &olen, "\r\nHost: ", 8);
  out_add (out, &olen, auth, alen);
  out_add (out, &olen, "\r\n", 2);
  if (finish_head (eol + 2, end, req, &w, out, olen, version, status, reason, rsize) < 0)
    return -1;
  return 0;
}

int
http_parse_origin_request (const char *head, size_t len, uint16_t default_port, struct http_request *req,
                           int *status, char *reason, size_t rsize)
{
  *req = (struct http_request){ 0 };
  const char *target, *version, *eol;
  size_t tlen;
  struct head_walk w = { .origin = true };
  if (parse_request_line (head, len, req, &target, &tlen, &version, &eol, status, reason, rsize) < 0)
    return -1;
  if (strcmp (req->method, "CONNECT") == 0)
    return fail (status, 405, reason, rsize, "CONNECT inside a tunnel is not relayed");
  if (target[0] != '/')
    return fail (status, 400, reason, rsize, "inside a tunnel, requests name a path (origin form)");
  char *out = xmalloc (len + 1);
  size_t olen = 0;
  out_add (out, &olen, head, (size_t)(eol + 2 - head));
  req->path_off = (size_t)(target - head);
  req->path_len = tlen;
  if (finish_head (eol + 2, head + len, req, &w, out, olen, version, status, reason, rsize) < 0)
    return -1;
  /* The Host header says where the request goes: one, and a well-formed one. */
  if (w.n_host != 1)
    return fail (status, 400, reason, rsize, "a request needs exactly one Host header");
  if (!parse_authority (w.host_v, w.host_vlen, default_port, req))
    return fail (status, 400, reason, rsize, "bad Host header");
  return 0;
}

int
http_parse_response (const char *head, size_t len, bool head_request, struct http_response *resp)
{
  *resp = (struct http_response){ 0 };
  /* HTTP/1.x NNN ... */
  if (len < 12 || strncmp (head, "HTTP/1.", 7) != 0 || head[8] != ' ' || !isdigit ((unsigned char)head[9])
      || !isdigit ((unsigned char)head[10]) || !isdigit ((unsigned char)head[11]))
    return -1;
  resp->status = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
  if (resp->status < 100)
    return -1;
  const char *p = memchr (head, '\n', len), *end = head + len;
  bool te = false;
  while (p && ++p < end)
    {
      const char *eol = memchr (p, '\n', (size_t)(end - p));
      if (eol == NULL)
        break;
      const char *colon = memchr (p, ':', (size_t)(eol - p));
      if (colon)
        {
          const char *v;
          size_t vlen, nlen = (size_t)(colon - p);
          const char *e = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
          header_value (colon, e, &v, &vlen);
          if (header_is (p, nlen, "Content-Length"))
            {
              uint64_t n = 0;
              if (vlen == 0 || vlen > 15)
                return -1;
              for (size_t i = 0; i < vlen; i++)
                {
                  if (!isdigit ((unsigned char)v[i]))
                    return -1;
                  n = n * 10 + (uint64_t)(v[i] - '0');
                }
              if (resp->content_length && n != resp->body_len)
                return -1;
              resp->content_length = true;
              resp->body_len = n;
            }
          else if (header_is (p, nlen, "Transfer-Encoding"))
            te = true, resp->chunked = value_has_token (v, vlen, "chunked");
        }
      p = eol;
    }
  /* No body: a HEAD's answer, 1xx, 204, 304 (RFC 9112 6.3). */
  if (head_request || (resp->status >= 100 && resp->status < 200) || resp->status == 204
      || resp->status == 304)
    {
      resp->chunked = resp->until_close = false;
      resp->content_length = true;
      resp->body_len = 0;
      return 0;
    }
  if (te)
    {
      resp->content_length = false;
      resp->until_close = !resp->chunked;
      return 0;
    }
  resp->until_close = !resp->content_length;
  return 0;
}

enum
{
  CH_SIZE,    /* hex digits of a chunk size */
  CH_EXT,     /* ;extensions up to CR */
  CH_SIZE_LF, /* the LF after the size line's CR */
  CH_DATA,    /* the chunk's bytes */
  CH_DATA_CR, /* the CR after them */
  CH_DATA_LF, /* and the LF */
  CH_TRAILER, /* a trailer line (or the final empty line) */
  CH_TRAILER_LF,
  CH_DONE
};

#define CHUNK_LINE_MAX 4096
#define CHUNK_TRAILER_MAX 16384

static int
chunk_size_byte (struct http_chunked *c, char ch, const char **why)
{
  int h = isxdigit ((unsigned char)ch) ? (isdigit ((unsigned char)ch) ? ch - '0' : (tolower (ch) - 'a' + 10))
                                       : -1;
  if (h >= 0 && c->st == CH_SIZE)
    {
      if (++c->digits > 15)
        return *why = "a chunk size of more than 15 hex digits", -1;
      c->left = c->left * 16 + (uint64_t)h;
      return 0;
    }
  if (c->digits == 0)
    return *why = "a chunk without a size", -1;
  if (ch == '\r')
    return c->st = CH_SIZE_LF, 0;
  if (ch == ';' || c->st == CH_EXT)
    {
      if (ch == '\n' || ((unsigned char)ch < 0x20 && ch != '\t'))
        return *why = "a bad chunk extension", -1;
      return c->st = CH_EXT, 0;
    }
  return *why = "a bad chunk size", -1;
}

ssize_t
http_chunked_feed (struct http_chunked *c, const char *buf, size_t len, bool *done, const char **why)
{
  size_t i = 0;
  *done = c->st == CH_DONE;
  while (i < len && c->st != CH_DONE)
    {
      if (c->st == CH_DATA)
        {
          size_t k = c->left < len - i ? (size_t)c->left : len - i;
          i += k;
          c->left -= k;
          if (c->left == 0)
            c->st = CH_DATA_CR;
          continue;
        }
      char ch = buf[i++];
      switch (c->st)
        {
        case CH_SIZE:
        case CH_EXT:
          if (++c->line > CHUNK_LINE_MAX)
            return *why = "a chunk size line too long", -1;
          if (chunk_size_byte (c, ch, why) < 0)
            return -1;
          break;
        case CH_SIZE_LF:
          if (ch != '\n')
            return *why = "a chunk size line without CRLF", -1;
          c->line = 0;
          c->digits = 0;
          c->st = c->left ? CH_DATA : CH_TRAILER;
          break;
        case CH_DATA_CR:
          if (ch != '\r')
            return *why = "chunk data longer than its size", -1;
          c->st = CH_DATA_LF;
          break;
        case CH_DATA_LF:
          if (ch != '\n')
            return *why = "chunk data without CRLF", -1;
          c->st = CH_SIZE;
          break;
        case CH_TRAILER:
          if (++c->trailer > CHUNK_TRAILER_MAX)
            return *why = "chunked trailers too long", -1;
          if (ch == '\r')
            c->st = CH_TRAILER_LF;
          else if (ch == '\n' || ((unsigned char)ch < 0x20 && ch != '\t'))
            return *why = "a bad trailer line", -1;
          else
            c->line++;
          break;
        case CH_TRAILER_LF:
          if (ch != '\n')
            return *why = "a trailer line without CRLF", -1;
          c->st = c->line == 0 ? CH_DONE : CH_TRAILER;
          c->line = 0;
          break;
        }
    }
  *done = c->st == CH_DONE;
  return (ssize_t)i;
}

uint64_t
http_chunked_data (const struct http_chunked *c)
{
  return c->st == CH_DATA ? c->left : 0;
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
    case 421: return "Misdirected Request";
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

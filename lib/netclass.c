/* netclass: what an address is to the host hako runs on (loopback,
 * link-local, private, reserved, public): the one classification of
 * destinations, used by the proxy's allow-list, the annotations' consent
 * and learning. */
#include "lib/netclass.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

bool
net_prefix_match (const uint8_t *a, const uint8_t *net, unsigned prefix)
{
  unsigned bytes = prefix / 8, bits = prefix % 8;
  if (memcmp (a, net, bytes) != 0)
    return false;
  if (bits == 0)
    return true;
  uint8_t mask = (uint8_t)(0xff << (8 - bits));
  return (a[bytes] & mask) == (net[bytes] & mask);
}

/* Ranges a public name must never resolve into without the list saying so:
 * the host's own services and its neighbours'.  The proxy runs in the
 * host's network namespace, so "127.0.0.1" there is the host's loopback,
 * 169.254.169.254 its cloud's metadata service, 10.0.0.0/8 its cluster.
 * IPv4 ranges are written as their ::ffff: mapping (prefix + 96); the first
 * range that holds an address gives its class, so ::1 comes before ::/96. */
struct special_range
{
  uint8_t net[16];
  unsigned prefix;
  enum net_class cls;
};

#define V4(a, b, c, d, len, cls)                                                                             \
  {                                                                                                          \
    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d }, 96 + (len), cls                                \
  }
static const struct special_range special_ranges[] = {
  V4 (0, 0, 0, 0, 8, NET_LOOPBACK),              /* "this network"; 0.0.0.0 reaches the host itself */
  V4 (10, 0, 0, 0, 8, NET_PRIVATE),              /* RFC 1918 */
  V4 (100, 64, 0, 0, 10, NET_PRIVATE),           /* carrier-grade NAT */
  V4 (127, 0, 0, 0, 8, NET_LOOPBACK),            /* loopback */
  V4 (169, 254, 0, 0, 16, NET_LINK_LOCAL),       /* link-local, cloud metadata services */
  V4 (172, 16, 0, 0, 12, NET_PRIVATE),           /* RFC 1918 */
  V4 (192, 0, 0, 0, 24, NET_RESERVED),           /* IETF protocol assignments */
  V4 (192, 168, 0, 0, 16, NET_PRIVATE),          /* RFC 1918 */
  V4 (198, 18, 0, 0, 15, NET_RESERVED),          /* benchmarking */
  V4 (224, 0, 0, 0, 4, NET_RESERVED),            /* multicast */
  V4 (240, 0, 0, 0, 4, NET_RESERVED),            /* reserved, broadcast */
  { { [15] = 1 }, 128, NET_LOOPBACK },           /* ::1 */
  { { 0 }, 128, NET_LOOPBACK },                  /* ::, unspecified: the host itself */
  { { 0 }, 96, NET_RESERVED },                   /* ::/96: IPv4-compatible (deprecated) */
  { { 0, 0x64, 0xff, 0x9b }, 96, NET_RESERVED }, /* NAT64: embeds any IPv4 address */
  { { 0xfc }, 7, NET_PRIVATE },                  /* unique local */
  { { 0xfe, 0x80 }, 10, NET_LINK_LOCAL },        /* link-local */
  { { 0xfe, 0xc0 }, 10, NET_PRIVATE },           /* site-local (deprecated) */
  { { 0xff }, 8, NET_RESERVED },                 /* multicast */
};
#undef V4

enum net_class
net_class (const uint8_t a[16])
{
  for (size_t i = 0; i < sizeof special_ranges / sizeof *special_ranges; i++)
    if (net_prefix_match (a, special_ranges[i].net, special_ranges[i].prefix))
      return special_ranges[i].cls;
  return NET_PUBLIC;
}

const char *
net_class_name (enum net_class c)
{
  switch (c)
    {
    case NET_PUBLIC: return "a public address";
    case NET_LOOPBACK: return "a loopback address (the host's own services)";
    case NET_LINK_LOCAL: return "a link-local address (the cloud's metadata service, the host's link)";
    case NET_PRIVATE: return "a private address (the host's networks and cluster)";
    case NET_RESERVED: return "a reserved, multicast or mapped address";
    }
  return "an address";
}

/* The whole range net/prefix lies in one special range. */
bool
net_range_special (const uint8_t net[16], unsigned prefix)
{
  for (size_t i = 0; i < sizeof special_ranges / sizeof *special_ranges; i++)
    if (prefix >= special_ranges[i].prefix
        && net_prefix_match (net, special_ranges[i].net, special_ranges[i].prefix))
      return true;
  return false;
}

const char *
net_class_word (enum net_class c)
{
  switch (c)
    {
    case NET_PUBLIC: return "public";
    case NET_LOOPBACK: return "loopback";
    case NET_LINK_LOCAL: return "link-local";
    case NET_PRIVATE: return "private";
    case NET_RESERVED: return "reserved";
    }
  return "reserved";
}

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

void
net_addr_from_v4 (const void *v4, uint8_t out[16])
{
  memcpy (out, v4_mapped, 12);
  memcpy (out + 12, v4, 4);
}

void
net_addr_from_sockaddr (const struct sockaddr *sa, uint8_t out[16])
{
  if (sa->sa_family == AF_INET)
    net_addr_from_v4 (&((const struct sockaddr_in *)sa)->sin_addr, out);
  else
    memcpy (out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

bool
net_parse_literal (const char *text, uint8_t out[16])
{
  struct in_addr a4;
  struct in6_addr a6;
  char buf[INET6_ADDRSTRLEN + 2];
  size_t n = strlen (text);
  if (inet_pton (AF_INET, text, &a4) == 1)
    {
      net_addr_from_v4 (&a4, out);
      return true;
    }
  if (n >= 2 && text[0] == '[' && text[n - 1] == ']' && n - 2 < sizeof buf)
    {
      memcpy (buf, text + 1, n - 2);
      buf[n - 2] = '\0';
      text = buf;
    }
  if (inet_pton (AF_INET6, text, &a6) != 1)
    return false;
  memcpy (out, &a6, 16);
  return true;
}

bool
net_normalize_name (const char *in, char *out, size_t size)
{
  size_t n = strlen (in);
  if (n > 0 && in[n - 1] == '.')
    n--;
  if (n == 0 || n > 253 || n >= size)
    return false;
  size_t label = 0;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char)in[i];
      if (c == '.')
        {
          if (label == 0 || out[i - 1] == '-')
            return false;
          label = 0;
        }
      else if (isalnum (c) || c == '_' || (c == '-' && label > 0))
        {
          if (++label > 63)
            return false;
        }
      else
        return false;
      out[i] = (char)tolower (c);
    }
  out[n] = '\0';
  return out[n - 1] != '-';
}

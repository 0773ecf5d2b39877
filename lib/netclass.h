/* netclass: what an address is to the host hako runs on. Addresses are 16
 * bytes, IPv4 mapped into ::ffff:0:0/96. */
#ifndef HAKO_LIB_NETCLASS_H
#define HAKO_LIB_NETCLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an address is to the host the proxy runs on: the one place hako
 * classifies destinations (the allow-list, the annotations' consent,
 * learning).  Loopback: 127.0.0.0/8, ::1, and 0.0.0.0/8 and :: (which
 * reach the host itself); link-local: 169.254.0.0/16, fe80::/10; private:
 * 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, fec0::/10; reserved:
 * multicast, benchmarking, 192.0.0.0/24, 240/4, NAT64 and IPv4-compatible
 * IPv6 (which embed any IPv4 address). */
enum net_class
{
  NET_PUBLIC = 0,
  NET_LOOPBACK,
  NET_LINK_LOCAL,
  NET_PRIVATE,
  NET_RESERVED
};
enum net_class net_class (const uint8_t a[16]);
/* "a loopback address (the host's own services)", ...: for messages. */
const char *net_class_name (enum net_class c);
/* "loopback", "link-local", "private", "reserved", "public". */
const char *net_class_word (enum net_class c);
/* a's first prefix bits are net's. */
bool net_prefix_match (const uint8_t *a, const uint8_t *net, unsigned prefix);
/* The whole range net/prefix lies in one range that is not public. */
bool net_range_special (const uint8_t net[16], unsigned prefix);

/* A literal address (IPv4, or IPv6 with or without brackets) as 16 bytes;
 * false when text is not one (a host name). */
bool net_parse_literal (const char *text, uint8_t out[16]);
/* An IPv4 address (network order) as 16 bytes, mapped into ::ffff:0:0/96. */
void net_addr_from_v4 (const void *v4, uint8_t out[16]);
/* A sockaddr_in or sockaddr_in6's address as 16 bytes. */
struct sockaddr;
void net_addr_from_sockaddr (const struct sockaddr *sa, uint8_t out[16]);
/* A host name lower-cased, one trailing dot dropped, its syntax checked
 * (labels of letters, digits, '-' and '_', at most 63 bytes each, 253 in
 * all): false when it is not one. */
bool net_normalize_name (const char *in, char *out, size_t size);

#endif

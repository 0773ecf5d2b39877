/* proxy_mask: the values of a host's secrets masked in what its origin
 * answers.  For runtime/proxy/ only.
 *
 * The proxy puts a secret's value in requests to its host; an origin that
 * reflects a request (an echo, a redirect's Location, an error quoting the
 * query or a header) would hand the value back to the sandbox that only
 * ever had the placeholder.  So each byte of a response's content from a
 * secret's host goes through a matcher (Knuth-Morris-Pratt, one state per
 * secret: linear whatever the sandbox makes the origin send), and a value
 * found whole is overwritten with '*', byte for byte, so the framing
 * (Content-Length, chunk sizes) stays true.  Bytes that may be the start
 * of a value are held back until the next bytes say whether it is one, or
 * the response ends. */
#ifndef HAKO_RUNTIME_PROXY_MASK_H
#define HAKO_RUNTIME_PROXY_MASK_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/proxy/policy.h"

/* Shorter values are not masked: masking every 4-byte run that happens to
 * match would corrupt downloads, and so short a value is no secret. */
#define MASK_MIN 8

struct proxy_mask;

/* The matcher of the secrets p puts in requests to host:port (values
 * copied: a live update frees p), or NULL when there is none to mask. */
struct proxy_mask *mask_new (const struct egress_policy *p, const char *host, uint16_t port);
void mask_free (struct proxy_mask *k);

/* n content bytes, at stream offset at; buf holds the stream from offset
 * base on (base <= every offset still held back), and a value completed
 * by these bytes is overwritten there. */
void mask_feed (struct proxy_mask *k, char *buf, uint64_t base, uint64_t at, size_t n);
/* The stream offset of the first byte that must wait (it may begin a
 * value), or UINT64_MAX when none must. */
uint64_t mask_hold (const struct proxy_mask *k);
/* A response ended: nothing it held waits for the next one. */
void mask_reset (struct proxy_mask *k);

#endif

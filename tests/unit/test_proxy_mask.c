/* test_proxy_mask: a secret's value masked in what its origin answers —
 * whole or split over reads, between a chunked body's framing, a value
 * that overlaps itself, what is held back, and what is left alone. */
#include <string.h>

#include "runtime/proxy/proxy_mask.h"
#include "tests/unit/tap.h"

static struct egress_secret secrets[] = {
  { .name = "T", .value = "tok-abab-abac", .value_len = 13, .host = "api.test", .port = 443 },
  { .name = "S", .value = "short", .value_len = 5, .host = "api.test", .port = 443 },
  { .name = "O", .value = "other-host-value", .value_len = 16, .host = "other.test", .port = 443 },
  { .name = "K", .value = "abababac-token", .value_len = 14, .host = "api.test", .port = 443 },
};
static struct egress_policy pol = { .secrets = secrets, .n_secrets = 4 };

/* Feed text whole, at offset 0 of a buffer of its own: the result. */
static void
masked (const char *in, const char *want, const char *what)
{
  struct proxy_mask *k = mask_new (&pol, "api.test", 443);
  char buf[256];
  snprintf (buf, sizeof buf, "%s", in);
  mask_feed (k, buf, 0, 0, strlen (buf));
  is_str (buf, want, "%s", what);
  mask_free (k);
}

static void
test_whole (void)
{
  masked ("GET /?key=tok-abab-abac HTTP/1.1", "GET /?key=************* HTTP/1.1", "a value whole");
  masked ("xababababac-token!", "xab**************!", "a value that overlaps itself (KMP)");
  masked ("x tok-abab-abac tok-abab-abac", "x ************* *************", "twice");
  masked ("short and other-host-value", "short and other-host-value",
          "a short value, and another host's, are left alone");
  ok (mask_new (&pol, "other.test", 8443) == NULL, "no secret for the port: no matcher");
}

static void
test_split (void)
{
  struct proxy_mask *k = mask_new (&pol, "api.test", 443);
  char buf[64] = "head tok-ab";
  mask_feed (k, buf, 0, 0, strlen (buf));
  ok (mask_hold (k) == 5, "a value's beginning at the end is held back (from offset 5)");
  /* The buffer moved on: its first 5 bytes went to the client. */
  char rest[64] = "";
  strcat (rest, buf + 5);
  strcat (rest, "ab-abac tail");
  mask_feed (k, rest, 5, 11, strlen (rest) - 6);
  is_str (rest, "************* tail", "completed by the next read: masked in both parts");
  ok (mask_hold (k) == UINT64_MAX, "nothing held once it is whole");
  mask_free (k);
}

static void
test_framing (void)
{
  /* A chunked body: "tok-ab" and "ab-abac" chunks, the framing between
   * them not content. */
  struct proxy_mask *k = mask_new (&pol, "api.test", 443);
  char buf[64] = "6\r\ntok-ab\r\n7\r\nab-abac\r\n";
  mask_feed (k, buf, 0, 3, 6);
  ok (mask_hold (k) == 3, "held from the first chunk's data on");
  mask_feed (k, buf, 0, 14, 7);
  is_str (buf, "6\r\n******\r\n7\r\n*******\r\n", "masked across the chunks, framing untouched");
  mask_feed (k, buf, 0, 0, 0);
  char buf2[16] = "tok-abab";
  mask_feed (k, buf2, 100, 100, 8);
  ok (mask_hold (k) == 100, "a new beginning held");
  mask_reset (k);
  ok (mask_hold (k) == UINT64_MAX, "a response's end releases it");
  is_str (buf2, "tok-abab", "and leaves it as it was");
  mask_free (k);
}

int
main (void)
{
  test_whole ();
  test_split ();
  test_framing ();
  return tap_done ();
}

/* tls: TLS for the egress proxy's interception, by GnuTLS opened with
 * dlopen — the sandbox's CA, the leaves it signs, the sessions with the
 * client and the origin.  No cryptography here: keys, certificates,
 * signatures and the record layer are GnuTLS's. */
#include "runtime/proxy/tls.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "lib/netclass.h"
#include "lib/util.h"

struct tls_api tls;
static bool tls_loaded;
static char tls_load_error[256];
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

static void
load_once (void)
{
  void *h = dlopen ("libgnutls.so.30", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      snprintf (tls_load_error, sizeof tls_load_error,
                "TLS interception needs GnuTLS: cannot open libgnutls.so.30 (Debian: libgnutls30): %s",
                dlerror ());
      return;
    }
#define TLS_FIND(f)                                                                                          \
  if ((*(void **)&tls.f = dlsym (h, #f)) == NULL)                                                            \
    {                                                                                                        \
      snprintf (tls_load_error, sizeof tls_load_error, "libgnutls.so.30 has no %s (GnuTLS 3.6.5 or later)",  \
                #f);                                                                                         \
      return;                                                                                                \
    }
  TLS_FUNCS (TLS_FIND)
#undef TLS_FIND
  tls.free = dlsym (h, "gnutls_free");
  if (tls.free == NULL)
    {
      snprintf (tls_load_error, sizeof tls_load_error, "libgnutls.so.30 has no gnutls_free");
      return;
    }
  tls_loaded = true;
}

int
tls_load (hk_err *err)
{
  pthread_once (&tls_once, load_once);
  if (!tls_loaded)
    return err_setk (err, ERR_UNSUPPORTED, ENOTSUP, "%s", tls_load_error);
  return 0;
}

static int
tls_err (hk_err *err, int code, const char *what)
{
  return err_set (err, EIO, "%s: %s", what, tls.gnutls_strerror (code));
}

/* ---- certificates ------------------------------------------------------------------ */

/* A fresh ECDSA P-256 key: small and quick to sign with, which every TLS
 * client takes. */
static int
new_key (gnutls_x509_privkey_t *key, hk_err *err)
{
  int r = tls.gnutls_x509_privkey_init (key);
  if (r < 0)
    return tls_err (err, r, "make a key");
  r = tls.gnutls_x509_privkey_generate (*key, GNUTLS_PK_ECDSA,
                                        GNUTLS_CURVE_TO_BITS (GNUTLS_ECC_CURVE_SECP256R1), 0);
  if (r < 0)
    {
      tls.gnutls_x509_privkey_deinit (*key);
      return tls_err (err, r, "make a key");
    }
  return 0;
}

/* Version, a random positive serial, validity, subject and key: what a CA
 * and a leaf share. */
static int
crt_base (gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, const char *cn, time_t days, hk_err *err)
{
  uint8_t serial[16];
  char dn[320];
  const char *bad;
  time_t now = time (NULL);
  int r = tls.gnutls_rnd (GNUTLS_RND_NONCE, serial, sizeof serial);
  serial[0] &= 0x7f; /* positive, as RFC 5280 asks */
  snprintf (dn, sizeof dn, "CN=%s", cn);
  if (r == 0)
    r = tls.gnutls_x509_crt_set_version (crt, 3);
  if (r == 0)
    r = tls.gnutls_x509_crt_set_serial (crt, serial, sizeof serial);
  if (r == 0)
    r = tls.gnutls_x509_crt_set_activation_time (crt, now - 3600); /* a client's clock a little behind */
  if (r == 0)
    r = tls.gnutls_x509_crt_set_expiration_time (crt, now + days * 86400);
  if (r == 0)
    r = tls.gnutls_x509_crt_set_dn (crt, dn, &bad);
  if (r == 0)
    r = tls.gnutls_x509_crt_set_key (crt, key);
  uint8_t id[64];
  size_t idlen = sizeof id;
  if (r == 0)
    r = tls.gnutls_x509_privkey_get_key_id (key, 0, id, &idlen);
  if (r == 0)
    r = tls.gnutls_x509_crt_set_subject_key_id (crt, id, idlen);
  return r < 0 ? tls_err (err, r, "make a certificate") : 0;
}

static char *
datum_text (gnutls_datum_t *d)
{
  char *s = xstrndup ((const char *)d->data, d->size);
  (*tls.free) (d->data);
  return s;
}

int
tls_make_ca (const char *subject_cn, char **key_pem, char **crt_pem, hk_err *err)
{
  gnutls_x509_privkey_t key;
  gnutls_x509_crt_t crt;
  gnutls_datum_t k = { 0 }, c = { 0 };
  if (tls_load (err) < 0 || new_key (&key, err) < 0)
    return -1;
  int r = tls.gnutls_x509_crt_init (&crt);
  if (r < 0)
    {
      tls.gnutls_x509_privkey_deinit (key);
      return tls_err (err, r, "make the CA");
    }
  r = crt_base (crt, key, subject_cn, 3650, err) < 0 ? -1 : 0;
  int g = 0;
  if (r == 0)
    {
      g = tls.gnutls_x509_crt_set_basic_constraints (crt, 1, 0);
      if (g == 0)
        g = tls.gnutls_x509_crt_set_key_usage (crt, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN);
      if (g == 0)
        g = tls.gnutls_x509_crt_sign2 (crt, crt, key, GNUTLS_DIG_SHA256, 0);
      if (g == 0)
        g = tls.gnutls_x509_privkey_export2 (key, GNUTLS_X509_FMT_PEM, &k);
      if (g == 0)
        g = tls.gnutls_x509_crt_export2 (crt, GNUTLS_X509_FMT_PEM, &c);
      if (g < 0)
        r = tls_err (err, g, "make the CA");
    }
  tls.gnutls_x509_crt_deinit (crt);
  tls.gnutls_x509_privkey_deinit (key);
  if (r < 0)
    {
      if (k.data)
        (*tls.free) (k.data);
      if (c.data)
        (*tls.free) (c.data);
      return -1;
    }
  *key_pem = datum_text (&k);
  *crt_pem = datum_text (&c);
  return 0;
}

/* ---- the proxy's context ------------------------------------------------------------ */

#define LEAF_MAX 512
#define LEAF_DAYS 7

struct leaf
{
  struct leaf *next;
  char host[256];
  gnutls_certificate_credentials_t creds;
  time_t made;
  int users; /* sessions presenting it: freed only at 0 */
};

struct tls_ctx
{
  gnutls_x509_privkey_t ca_key, leaf_key;
  gnutls_x509_crt_t ca_crt;
  uint8_t ca_id[64];
  size_t ca_id_len;
  gnutls_certificate_credentials_t trust;
  struct leaf *leaves;
  size_t n_leaves;
};

/* What a session carries: (a server's) its SNI check and the leaf it
 * presents; its read-ahead.  GnuTLS reads a record's header and then its
 * body, two syscalls a record (and a third that says EAGAIN): reading up
 * to TLS_READAHEAD at once takes a record with its header. */
#define TLS_READAHEAD (18 * 1024) /* a whole record (16 KiB, its header and tag) at once */
struct server_ptr
{
  struct tls_sni_check *check;
  struct leaf *leaf;
  gnutls_session_t s;
  int fd;
  size_t off, len;
  char buf[TLS_READAHEAD];
};

static ssize_t
pull (gnutls_transport_ptr_t ptr, void *data, size_t size)
{
  struct server_ptr *sp = ptr;
  if (sp->off == sp->len)
    {
      ssize_t n = recv (sp->fd, sp->buf, sizeof sp->buf, 0);
      if (n <= 0)
        {
          if (n < 0)
            tls.gnutls_transport_set_errno (sp->s, errno);
          return n;
        }
      sp->off = 0;
      sp->len = (size_t)n;
    }
  size_t k = sp->len - sp->off < size ? sp->len - sp->off : size;
  memcpy (data, sp->buf + sp->off, k);
  sp->off += k;
  return (ssize_t)k;
}

/* Whether a read would find data within ms: GnuTLS asks this of the
 * transport (its own default would take the read-ahead's pointer for an
 * fd).  What the read-ahead holds counts. */
static int
pull_timeout (gnutls_transport_ptr_t ptr, unsigned int ms)
{
  struct server_ptr *sp = ptr;
  if (sp->off < sp->len)
    return 1;
  struct pollfd p = { .fd = sp->fd, .events = POLLIN };
  int r = poll (&p, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);
  if (r < 0)
    tls.gnutls_transport_set_errno (sp->s, errno);
  return r;
}

/* The session's transport: reads through its read-ahead, writes with
 * GnuTLS's own (writev on the fd). */
static void
set_transport (gnutls_session_t s, struct server_ptr *sp, int fd)
{
  sp->s = s;
  sp->fd = fd;
  tls.gnutls_session_set_ptr (s, sp);
  tls.gnutls_transport_set_ptr2 (s, sp, (gnutls_transport_ptr_t)(intptr_t)fd);
  tls.gnutls_transport_set_pull_function (s, pull);
  tls.gnutls_transport_set_pull_timeout_function (s, pull_timeout);
}

static int
import_ca (struct tls_ctx *t, const char *key_pem, const char *crt_pem, hk_err *err)
{
  gnutls_datum_t k = { (unsigned char *)key_pem, (unsigned)strlen (key_pem) };
  gnutls_datum_t c = { (unsigned char *)crt_pem, (unsigned)strlen (crt_pem) };
  int r = tls.gnutls_x509_privkey_init (&t->ca_key);
  if (r == 0)
    r = tls.gnutls_x509_privkey_import (t->ca_key, &k, GNUTLS_X509_FMT_PEM);
  if (r == 0)
    r = tls.gnutls_x509_crt_init (&t->ca_crt);
  if (r == 0)
    r = tls.gnutls_x509_crt_import (t->ca_crt, &c, GNUTLS_X509_FMT_PEM);
  t->ca_id_len = sizeof t->ca_id;
  if (r == 0)
    r = tls.gnutls_x509_privkey_get_key_id (t->ca_key, 0, t->ca_id, &t->ca_id_len);
  return r < 0 ? tls_err (err, r, "load the sandbox's egress CA") : 0;
}

int
tls_ctx_new (const char *ca_key_pem, const char *ca_crt_pem, const char *trust_file, struct tls_ctx **out,
             hk_err *err)
{
  if (tls_load (err) < 0)
    return -1;
  struct tls_ctx *t = xcalloc (1, sizeof *t);
  int r = import_ca (t, ca_key_pem, ca_crt_pem, err) < 0 ? -1 : new_key (&t->leaf_key, err);
  if (r == 0)
    {
      int g = tls.gnutls_certificate_allocate_credentials (&t->trust);
      if (g == 0)
        g = trust_file
                ? tls.gnutls_certificate_set_x509_trust_file (t->trust, trust_file, GNUTLS_X509_FMT_PEM)
                : tls.gnutls_certificate_set_x509_system_trust (t->trust);
      if (g < 0)
        r = err_set (err, EIO, "the proxy's trust for origins (%s): %s",
                     trust_file ? trust_file : "the host's store", tls.gnutls_strerror (g));
      else if (g == 0)
        r = err_set (err, EIO, "the proxy's trust for origins (%s) holds no certificate",
                     trust_file ? trust_file : "the host's store");
    }
  if (r < 0)
    {
      tls_ctx_free (t);
      return -1;
    }
  *out = t;
  return 0;
}

void
tls_ctx_free (struct tls_ctx *t)
{
  if (t == NULL)
    return;
  while (t->leaves)
    {
      struct leaf *l = t->leaves;
      t->leaves = l->next;
      tls.gnutls_certificate_free_credentials (l->creds);
      free (l);
    }
  if (t->trust)
    tls.gnutls_certificate_free_credentials (t->trust);
  if (t->ca_key)
    tls.gnutls_x509_privkey_deinit (t->ca_key);
  if (t->leaf_key)
    tls.gnutls_x509_privkey_deinit (t->leaf_key);
  if (t->ca_crt)
    tls.gnutls_x509_crt_deinit (t->ca_crt);
  free (t);
}

/* The leaf's names: host as a DNS name, or as an IP address. */
static int
leaf_names (gnutls_x509_crt_t crt, const char *host)
{
  uint8_t a[16];
  static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
  if (!net_parse_literal (host, a))
    return tls.gnutls_x509_crt_set_subject_alt_name (crt, GNUTLS_SAN_DNSNAME, host, (unsigned)strlen (host),
                                                     GNUTLS_FSAN_SET);
  bool v4 = memcmp (a, mapped, 12) == 0;
  return tls.gnutls_x509_crt_set_subject_alt_name (crt, GNUTLS_SAN_IPADDRESS, v4 ? a + 12 : a, v4 ? 4 : 16,
                                                   GNUTLS_FSAN_SET);
}

static int
issue_leaf (struct tls_ctx *t, const char *host, struct leaf *l, hk_err *err)
{
  gnutls_x509_crt_t crt;
  int r = tls.gnutls_x509_crt_init (&crt);
  if (r < 0)
    return tls_err (err, r, "make a certificate");
  int g = crt_base (crt, t->leaf_key, host, LEAF_DAYS, err) < 0 ? 1 : 0;
  if (g == 0)
    g = tls.gnutls_x509_crt_set_basic_constraints (crt, 0, -1);
  if (g == 0)
    g = tls.gnutls_x509_crt_set_key_usage (crt, GNUTLS_KEY_DIGITAL_SIGNATURE);
  if (g == 0)
    g = tls.gnutls_x509_crt_set_key_purpose_oid (crt, GNUTLS_KP_TLS_WWW_SERVER, 0);
  if (g == 0)
    g = leaf_names (crt, host);
  if (g == 0)
    g = tls.gnutls_x509_crt_set_authority_key_id (crt, t->ca_id, t->ca_id_len);
  if (g == 0)
    g = tls.gnutls_x509_crt_sign2 (crt, t->ca_crt, t->ca_key, GNUTLS_DIG_SHA256, 0);
  if (g == 0)
    g = tls.gnutls_certificate_allocate_credentials (&l->creds);
  if (g == 0)
    g = tls.gnutls_certificate_set_x509_key (l->creds, &crt, 1, t->leaf_key);
  tls.gnutls_x509_crt_deinit (crt);
  if (g != 0)
    {
      if (l->creds)
        tls.gnutls_certificate_free_credentials (l->creds);
      return g < 0 ? tls_err (err, g, "issue a certificate") : -1;
    }
  snprintf (l->host, sizeof l->host, "%s", host);
  l->made = time (NULL);
  return 0;
}

/* The cached leaf for host (reissued a day before it would expire), or a
 * new one.  At LEAF_MAX, one no session uses makes room: a sandbox naming
 * endless hosts under a suffix rule cannot grow the proxy without bound. */
static struct leaf *
leaf_for (struct tls_ctx *t, const char *host, hk_err *err)
{
  time_t now = time (NULL);
  struct leaf **pp = &t->leaves, **spare = NULL;
  for (; *pp; pp = &(*pp)->next)
    {
      struct leaf *l = *pp;
      if (strcmp (l->host, host) == 0 && now - l->made < (LEAF_DAYS - 1) * 86400)
        return l;
      if (l->users == 0 && (spare == NULL || strcmp (l->host, host) == 0))
        spare = pp;
    }
  if (t->n_leaves >= LEAF_MAX || (spare && strcmp ((*spare)->host, host) == 0))
    {
      if (spare == NULL)
        {
          err_set (err, EBUSY, "too many hosts intercepted at once (%d)", LEAF_MAX);
          return NULL;
        }
      struct leaf *old = *spare;
      *spare = old->next;
      tls.gnutls_certificate_free_credentials (old->creds);
      free (old);
      t->n_leaves--;
    }
  struct leaf *l = xcalloc (1, sizeof *l);
  if (issue_leaf (t, host, l, err) < 0)
    {
      free (l);
      return NULL;
    }
  l->next = t->leaves;
  t->leaves = l;
  t->n_leaves++;
  return l;
}

/* In the handshake, once the ClientHello is read: the name it asks for
 * must be the CONNECT's.  Without this a sandbox allowed to reach
 * a.example could CONNECT to it and ask, inside, for b.example: the proxy
 * would check rules against one name while the origin serves another. */
static int
check_client_hello (gnutls_session_t s)
{
  struct server_ptr *sp = tls.gnutls_session_get_ptr (s);
  struct tls_sni_check *c = sp->check;
  if (c == NULL)
    return 0;
  char name[256];
  size_t len = sizeof name - 1;
  unsigned type = 0;
  uint8_t a[16];
  bool literal = net_parse_literal (c->host, a);
  int r = tls.gnutls_server_name_get (s, name, &len, &type, 0);
  if (r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
    {
      if (literal)
        return 0; /* clients send no SNI for an address */
      snprintf (c->why, sizeof c->why, "the ClientHello names no server (no SNI); the CONNECT was for %s",
                c->host);
      return GNUTLS_E_UNRECOGNIZED_NAME;
    }
  if (r < 0 || type != GNUTLS_NAME_DNS)
    {
      snprintf (c->why, sizeof c->why, "the ClientHello's server name is unreadable");
      return GNUTLS_E_UNRECOGNIZED_NAME;
    }
  name[len < sizeof name ? len : sizeof name - 1] = '\0';
  char norm[256];
  if (!net_normalize_name (name, norm, sizeof norm) || strcasecmp (norm, c->host) != 0)
    {
      char shown[64];
      size_t i = 0;
      for (; name[i] && i + 1 < sizeof shown; i++)
        shown[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
      shown[i] = '\0';
      snprintf (c->why, sizeof c->why, "the ClientHello names %s (SNI), the CONNECT %s", shown, c->host);
      return GNUTLS_E_UNRECOGNIZED_NAME;
    }
  return 0;
}

static const gnutls_datum_t http11 = { (unsigned char *)"http/1.1", 8 };

int
tls_server_session (struct tls_ctx *t, int fd, struct tls_sni_check *check, gnutls_session_t *out,
                    hk_err *err)
{
  struct leaf *l = leaf_for (t, check->host, err);
  if (l == NULL)
    return -1;
  gnutls_session_t s;
  int r = tls.gnutls_init (&s, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL);
  if (r < 0)
    return tls_err (err, r, "start TLS with the client");
  struct server_ptr *sp = xcalloc (1, sizeof *sp);
  sp->check = check;
  sp->leaf = l;
  l->users++;
  set_transport (s, sp, fd);
  /* Only HTTP/1.1: a client that prefers h2 falls back to it. */
  r = tls.gnutls_set_default_priority (s);
  if (r == 0)
    r = tls.gnutls_credentials_set (s, GNUTLS_CRD_CERTIFICATE, l->creds);
  if (r == 0)
    r = tls.gnutls_alpn_set_protocols (s, &http11, 1, GNUTLS_ALPN_SERVER_PRECEDENCE);
  if (r < 0)
    {
      tls_session_free (t, s);
      return tls_err (err, r, "start TLS with the client");
    }
  tls.gnutls_handshake_set_post_client_hello_function (s, check_client_hello);
  tls.gnutls_handshake_set_timeout (s, 0); /* the proxy's own head timeout bounds it */
  *out = s;
  return 0;
}

int
tls_client_session (struct tls_ctx *t, int fd, const char *host, gnutls_session_t *out, hk_err *err)
{
  gnutls_session_t s;
  uint8_t a[16];
  int r = tls.gnutls_init (&s, GNUTLS_CLIENT | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL);
  if (r < 0)
    return tls_err (err, r, "start TLS with the origin");
  set_transport (s, xcalloc (1, sizeof (struct server_ptr)), fd);
  r = tls.gnutls_set_default_priority (s);
  if (r == 0)
    r = tls.gnutls_credentials_set (s, GNUTLS_CRD_CERTIFICATE, t->trust);
  if (r == 0 && !net_parse_literal (host, a))
    r = tls.gnutls_server_name_set (s, GNUTLS_NAME_DNS, host, strlen (host));
  if (r == 0)
    r = tls.gnutls_alpn_set_protocols (s, &http11, 1, 0);
  if (r < 0)
    {
      tls_session_free (t, s);
      return tls_err (err, r, "start TLS with the origin");
    }
  /* The origin's chain and name are checked in the handshake: a forged
   * certificate ends it before a byte of the request is sent. */
  tls.gnutls_session_set_verify_cert (s, host, 0);
  tls.gnutls_handshake_set_timeout (s, 0);
  *out = s;
  return 0;
}

void
tls_failure (gnutls_session_t s, int code, char *out, size_t size)
{
  if (code == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR)
    {
      gnutls_datum_t d = { 0 };
      unsigned status = tls.gnutls_session_get_verify_cert_status (s);
      if (tls.gnutls_certificate_verification_status_print (status, GNUTLS_CRT_X509, &d, 0) == 0)
        {
          int n = (int)d.size;
          while (n > 0 && (d.data[n - 1] == ' ' || d.data[n - 1] == '\0' || d.data[n - 1] == '\n'))
            n--;
          snprintf (out, size, "the origin's certificate is refused: %.*s", n, d.data);
          (*tls.free) (d.data);
          return;
        }
    }
  snprintf (out, size, "%s", tls.gnutls_strerror (code));
}

void
tls_session_free (struct tls_ctx *t, gnutls_session_t s)
{
  (void)t;
  struct server_ptr *sp = tls.gnutls_session_get_ptr (s);
  tls.gnutls_deinit (s);
  if (sp && sp->leaf)
    sp->leaf->users--;
  free (sp);
}

bool
tls_buffered (gnutls_session_t s)
{
  struct server_ptr *sp = tls.gnutls_session_get_ptr (s);
  return (sp && sp->off < sp->len) || tls.gnutls_record_check_pending (s) > 0;
}

#define SEND_BATCH (256 * 1024)

ssize_t
tls_send (gnutls_session_t s, const char *d, size_t n, bool *flush, int *code)
{
  int r;
  if (*flush)
    {
      r = tls.gnutls_record_uncork (s, 0);
      if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
        return 0;
      *flush = false;
      if (r < 0)
        return *code = r, -1;
    }
  if (n == 0)
    return 0;
  /* Corked, each record_send makes a record in GnuTLS's buffer; uncork
   * sends them together (one writev while the socket takes them). */
  tls.gnutls_record_cork (s);
  size_t taken = 0;
  while (taken < n && taken < SEND_BATCH)
    {
      ssize_t k = tls.gnutls_record_send (s, d + taken, n - taken < 16384 ? n - taken : 16384);
      if (k < 0)
        {
          *code = (int)k;
          tls.gnutls_record_uncork (s, 0);
          return -1;
        }
      taken += (size_t)k;
    }
  r = tls.gnutls_record_uncork (s, 0);
  if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
    *flush = true;
  else if (r < 0)
    return *code = r, -1;
  return (ssize_t)taken;
}

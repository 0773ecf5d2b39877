/* tls: TLS for the egress proxy's interception, by GnuTLS — never
 * cryptography of hako's own.  libgnutls.so.30 is opened with dlopen by
 * the processes that need it (a create that makes a sandbox's CA, the proxy
 * of a sandbox that intercepts), so no other run of hako pays for loading
 * it.
 *
 * A sandbox that intercepts has a CA of its own, made at create: its key
 * stays in the sandbox's state dir (0600, root's), its certificate joins
 * the sandbox's trust.  The proxy signs with it a leaf certificate for
 * each host whose CONNECTs it terminates (cached), and reaches the origin
 * over TLS of its own, verified against the host's trust store (or
 * node.json's egress.trust), never the sandbox's. */
#ifndef HAKO_RUNTIME_TLS_H
#define HAKO_RUNTIME_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "lib/err.h"

/* The GnuTLS functions hako calls, found by dlsym. */
#define TLS_FUNCS(X)                                                                                         \
  X (gnutls_init)                                                                                            \
  X (gnutls_deinit)                                                                                          \
  X (gnutls_set_default_priority)                                                                            \
  X (gnutls_credentials_set)                                                                                 \
  X (gnutls_transport_set_ptr2)                                                                              \
  X (gnutls_transport_set_pull_function)                                                                     \
  X (gnutls_transport_set_pull_timeout_function)                                                             \
  X (gnutls_transport_set_errno)                                                                             \
  X (gnutls_record_cork)                                                                                     \
  X (gnutls_record_uncork)                                                                                   \
  X (gnutls_handshake)                                                                                       \
  X (gnutls_handshake_set_timeout)                                                                           \
  X (gnutls_handshake_set_post_client_hello_function)                                                        \
  X (gnutls_record_recv)                                                                                     \
  X (gnutls_record_send)                                                                                     \
  X (gnutls_record_check_pending)                                                                            \
  X (gnutls_record_get_direction)                                                                            \
  X (gnutls_bye)                                                                                             \
  X (gnutls_strerror)                                                                                        \
  X (gnutls_error_is_fatal)                                                                                  \
  X (gnutls_session_set_ptr)                                                                                 \
  X (gnutls_session_get_ptr)                                                                                 \
  X (gnutls_server_name_get)                                                                                 \
  X (gnutls_server_name_set)                                                                                 \
  X (gnutls_alpn_set_protocols)                                                                              \
  X (gnutls_session_set_verify_cert)                                                                         \
  X (gnutls_session_get_verify_cert_status)                                                                  \
  X (gnutls_certificate_verification_status_print)                                                           \
  X (gnutls_certificate_allocate_credentials)                                                                \
  X (gnutls_certificate_free_credentials)                                                                    \
  X (gnutls_certificate_set_x509_system_trust)                                                               \
  X (gnutls_certificate_set_x509_trust_file)                                                                 \
  X (gnutls_certificate_set_x509_key)                                                                        \
  X (gnutls_rnd)                                                                                             \
  X (gnutls_x509_privkey_init)                                                                               \
  X (gnutls_x509_privkey_deinit)                                                                             \
  X (gnutls_x509_privkey_generate)                                                                           \
  X (gnutls_x509_privkey_export2)                                                                            \
  X (gnutls_x509_privkey_import)                                                                             \
  X (gnutls_x509_privkey_get_key_id)                                                                         \
  X (gnutls_x509_crt_init)                                                                                   \
  X (gnutls_x509_crt_deinit)                                                                                 \
  X (gnutls_x509_crt_import)                                                                                 \
  X (gnutls_x509_crt_export2)                                                                                \
  X (gnutls_x509_crt_set_version)                                                                            \
  X (gnutls_x509_crt_set_serial)                                                                             \
  X (gnutls_x509_crt_set_activation_time)                                                                    \
  X (gnutls_x509_crt_set_expiration_time)                                                                    \
  X (gnutls_x509_crt_set_dn)                                                                                 \
  X (gnutls_x509_crt_set_key)                                                                                \
  X (gnutls_x509_crt_set_basic_constraints)                                                                  \
  X (gnutls_x509_crt_set_key_usage)                                                                          \
  X (gnutls_x509_crt_set_key_purpose_oid)                                                                    \
  X (gnutls_x509_crt_set_subject_alt_name)                                                                   \
  X (gnutls_x509_crt_set_subject_key_id)                                                                     \
  X (gnutls_x509_crt_set_authority_key_id)                                                                   \
  X (gnutls_x509_crt_sign2)

struct tls_api
{
#define TLS_MEMBER(f) __typeof__ (f) *f;
  TLS_FUNCS (TLS_MEMBER)
#undef TLS_MEMBER
  gnutls_free_function *free; /* the library's gnutls_free (a variable) */
};

/* Open libgnutls.so.30 and find its functions (once; later calls return
 * the first answer).  The error says what is missing. */
int tls_load (hk_err *err);
/* After tls_load succeeded. */
extern struct tls_api tls;

/* A new CA for a sandbox: an ECDSA P-256 key and a self-signed certificate
 * (basicConstraints CA, path length 0, keyCertSign), both as PEM text. */
int tls_make_ca (const char *subject_cn, char **key_pem, char **crt_pem, hk_err *err);

/* What the proxy keeps: the CA, one leaf key, the leaves issued (by host),
 * the origins' trust. */
struct tls_ctx;
/* trust_file: a PEM file of CAs for the origins, or NULL for the host's
 * store (gnutls_certificate_set_x509_system_trust). */
int tls_ctx_new (const char *ca_key_pem, const char *ca_crt_pem, const char *trust_file, struct tls_ctx **out,
                 hk_err *err);
void tls_ctx_free (struct tls_ctx *t);

/* Why a client's handshake was refused by the proxy's own checks (SNI). */
struct tls_sni_check
{
  char host[256]; /* the CONNECT host: SNI must name it (absent for an address) */
  char why[640];  /* set when refused */
};

/* A server session on fd (the client's), presenting a leaf for
 * check->host, offering ALPN http/1.1 only (an h2 client falls back),
 * refusing in the ClientHello an SNI that is not check->host (a name must
 * send one).  check must outlive the session. */
int tls_server_session (struct tls_ctx *t, int fd, struct tls_sni_check *check, gnutls_session_t *out,
                        hk_err *err);
/* A client session on fd (the origin's), with SNI for host (a name),
 * ALPN http/1.1, and the origin's certificate verified for host against the
 * proxy's trust during the handshake. */
int tls_client_session (struct tls_ctx *t, int fd, const char *host, gnutls_session_t *out, hk_err *err);
/* Why a client session's handshake failed (err_code's text, or the
 * certificate's verification status). */
void tls_failure (gnutls_session_t s, int code, char *out, size_t size);
/* Send n bytes at d (or, *flush set, first the records still held):
 * records made (as many as fit in one go) and sent with as few syscalls as
 * the socket takes.  The bytes counted are GnuTLS's from then on: *flush
 * says some are not out yet (wait for the socket to be writable, call
 * again).  Bytes taken (0 while flushing), -1 on a fatal error (*code). */
ssize_t tls_send (gnutls_session_t s, const char *d, size_t n, bool *flush, int *code);

/* Whether bytes s has read are waiting to be taken (in its read-ahead, or
 * in GnuTLS): epoll cannot see them, so whoever reads s must read again. */
bool tls_buffered (gnutls_session_t s);

/* Release a session made above (tls_ctx's leaf stays cached). */
void tls_session_free (struct tls_ctx *t, gnutls_session_t s);

#endif

/* policy: a sandbox's egress policy as its proxy applies it — the mode,
 * the allow and deny rules (oci/netrule.h), the secrets — and the
 * decisions made with it, each naming the rule that made it: "allow[2]",
 * "deny[0]", or "default" and "default[WHY]" when no rule did. */
#ifndef HAKO_RUNTIME_POLICY_H
#define HAKO_RUNTIME_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "oci/egress.h"
#include "oci/spec.h"

/* A secret with its value: the proxy's only copy of it. */
struct egress_secret
{
  char *name;
  char *placeholder;
  char *value;
  size_t value_len;
  char *host; /* normalized name, or a literal address without brackets */
  uint16_t port;
  bool query;
};

struct egress_policy
{
  enum hako_net_mode mode; /* HAKO_NET_ALLOWLIST or HAKO_NET_DENYLIST */
  struct net_rules allow, deny;
  struct egress_secret *secrets;
  size_t n_secrets;
  /* `run --learn` (hako-learn(7)): every destination and request is let
   * through (rule "learn"); addresses of the host's own and neighbouring
   * networks still only where a rule names them. */
  bool learn;
};

enum pol_verdict
{
  POL_DENY,
  POL_ALLOW,
  POL_INTERCEPT /* a CONNECT let through, its requests decided inside TLS */
};

struct pol_decision
{
  enum pol_verdict v;
  char rule[32];
  char reason[320];
};

/* The policy of spec's sandbox (its rules copied; no secret values). */
int policy_from_spec (const struct oci_spec *spec, struct egress_policy *out, hk_err *err);
/* The same from a sandbox object (a live update's). */
int policy_from_sandbox (const struct hako_sandbox *sb, struct egress_policy *out, hk_err *err);
/* Each secret's value, by name; a secret without one is an error. */
int policy_set_values (struct egress_policy *p, const struct oci_secret_value *v, size_t n, hk_err *err);
void policy_free (struct egress_policy *p);

/* A destination: a CONNECT's (https: its requests would be TLS), or the
 * host of an absolute http:// request.  host is a name or a literal
 * address (no brackets).  POL_INTERCEPT when the connection is allowed and
 * a request rule or a secret names host:port, so its requests are to be
 * seen. */
void policy_destination (const struct egress_policy *p, const char *host, uint16_t port, bool https,
                         struct pol_decision *d);
/* A request to a destination policy_destination let through: its method
 * and its path's segments (oci_net_path_split). */
void policy_request (const struct egress_policy *p, const char *host, uint16_t port, bool https,
                     const char *method, char *const *segs, size_t n, struct pol_decision *d);
/* Whether a request to host:port needs its path split and checked: a
 * request rule of that scheme names the host. */
bool policy_has_request_rules (const struct egress_policy *p, const char *host, uint16_t port, bool https);
/* An address the proxy is about to connect to for a destination that was
 * let through.  A deny rule's range refuses it; a loopback, private,
 * link-local or reserved address needs an allow rule whose own range is one
 * of those (listing 0.0.0.0/0 does not open the host's loopback): a name
 * that resolves into the host's own services is refused unless those are
 * listed, the DNS-rebinding defence. */
void policy_address (const struct egress_policy *p, const uint8_t a[16], uint16_t port,
                     struct pol_decision *d);

/* Whether the policy asks for interception: an https request rule (allow
 * or deny) or a secret. */
bool policy_intercepts (const struct egress_policy *p);

/* True when a rule opens some loopback address (127.0.0.0/8, ::1) of the
 * host: then such a destination is reached only through the proxy. */
bool policy_opens_loopback (const struct net_rules *allow);

/* The secret whose placeholder starts at text, or NULL. */
const struct egress_secret *policy_secret_at (const struct egress_policy *p, const char *text, size_t len);
/* The names of the secrets whose placeholders text holds (at most max, in
 * names, which point into p): for a request that gets none put in. */
size_t policy_placeholders (const struct egress_policy *p, const char *text, size_t len, const char **names,
                            size_t max);
/* Whether secret s may be sent to host:port. */
bool policy_secret_for (const struct egress_secret *s, const char *host, uint16_t port);

#endif

/* doctor: the report `hako doctor` prints — what this host can enforce, why
 * not, and what that means for each profile — as a plain struct and its JSON. */
#ifndef HAKO_OCI_DOCTOR_H
#define HAKO_OCI_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* A typed value an item carries besides its verdict, for the JSON. */
enum doctor_type
{
  DOCTOR_NULL, /* the knob does not exist here (written as null) */
  DOCTOR_INT,
  DOCTOR_BOOL,
  DOCTOR_STR,
  DOCTOR_STRV
};

struct doctor_field
{
  const char *key;
  enum doctor_type type;
  int64_t i;
  bool b;
  char *s;
  char **v;
};

/* One thing the host can or cannot do: "landlock", "user_namespaces", ... */
struct doctor_item
{
  const char *key;   /* the JSON key */
  const char *label; /* for the text report */
  bool available;
  char *detail; /* one line: what was found, and why not when it is not */
  struct doctor_field *fields;
  size_t n_fields;
};

/* Whether one network mode (sandbox.network.mode, --network) works with a
 * profile on this host, for the user running doctor, and why (not). */
struct doctor_network
{
  const char *mode; /* "none", "host", "allowlist" */
  bool works;
  char *why;
};

/* One profile's verdict on this host. */
struct doctor_profile
{
  const char *name; /* "default", "host", "rootless" */
  bool works;
  char **missing; /* NULL-terminated: what makes it fail here (empty when it works) */
  char **notes;   /* NULL-terminated: what it goes without, still working */
  struct doctor_network *networks;
  size_t n_networks;
};

struct doctor_report
{
  char *kernel;
  unsigned euid;
  struct doctor_item *items;
  size_t n_items;
  struct doctor_profile *profiles;
  size_t n_profiles;
};

/* Append an item (its detail taken over) and return it for doctor_field_*. */
struct doctor_item *doctor_add_item (struct doctor_report *r, const char *key, const char *label,
                                     bool available, char *detail);
void doctor_field_int (struct doctor_item *it, const char *key, int64_t v);
void doctor_field_bool (struct doctor_item *it, const char *key, bool v);
void doctor_field_str (struct doctor_item *it, const char *key, const char *v); /* NULL: null */
void doctor_field_strv (struct doctor_item *it, const char *key, char *const *v);
void doctor_field_null (struct doctor_item *it, const char *key);
const struct doctor_item *doctor_find (const struct doctor_report *r, const char *key);

/* Append a network verdict to p (why taken over). */
void doctor_add_network (struct doctor_profile *p, const char *mode, bool works, char *why);

/* One object:
 *   {"version":..., "kernel":..., "euid":0,
 *    "checks": {KEY: {"available":b, "detail":"...", FIELDS...}, ...},
 *    "profiles": {NAME: {"works":b, "missing":[...], "notes":[...],
 *                        "networks": {MODE: {"works":b, "why":"..."}, ...}}, ...}} */
int doctor_report_json (const struct doctor_report *r, char **out, hk_err *err);
void doctor_report_free (struct doctor_report *r);

#endif

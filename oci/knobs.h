/* knobs: the cgroup limits of linux.resources that are one value each, as
 * data.  One row per knob: where it is in the spec and in struct
 * oci_resources, its controller, the file it is written to on cgroup v1 and
 * v2 and how the value is converted, and whether update may change it.
 * Parsing, "does the spec ask for limits", the controllers a spec needs, the
 * writes of create and update and update's refusals all walk this table:
 * adding a knob is adding a row (docs/architecture.md).  Devices, blkio,
 * hugepages and unified are lists and stay hand-written. */
#ifndef HAKO_OCI_KNOBS_H
#define HAKO_OCI_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/spec.h"

enum oci_knob_type
{
  OCI_KNOB_I64,  /* int64_t, between min and max */
  OCI_KNOB_U64,  /* uint64_t, at most max */
  OCI_KNOB_BOOL, /* bool, set when true (no has_ flag) */
  OCI_KNOB_STR,  /* char *, set when not NULL (no has_ flag) */
};

/* How a value becomes the text written to its file. */
enum oci_knob_conv
{
  OCI_CONV_NONE,     /* no such file on this version */
  OCI_CONV_AS_IS,    /* the number or string as it is */
  OCI_CONV_MAX_NEG,  /* a negative number is "max" */
  OCI_CONV_MAX_NPOS, /* 0 or a negative number is "max" (pids) */
  OCI_CONV_FLAG,     /* true is "1" */
  OCI_CONV_WEIGHT,   /* cpu shares 2..262144 onto cpu.weight 1..10000; 0 is not written */
  OCI_CONV_BY_HAND,  /* the backend writes it (its value depends on other knobs or on the host) */
};

struct oci_knob
{
  const char *obj, *key; /* .linux.resources.OBJ.KEY */
  enum oci_knob_type type;
  int64_t min; /* OCI_KNOB_I64 */
  uint64_t max;
  size_t has;      /* offset of the has_ flag in struct oci_resources (I64, U64) */
  size_t val;      /* offset of the value */
  const char *ctl; /* controller ("memory", "pids", "cpu", "cpuset") */
  const char *v1_file, *v2_file;
  enum oci_knob_conv v1_conv, v2_conv;
  bool update;        /* update may change it */
  const char *v2_why; /* set and no v2 file: refused, for this reason (NULL: accepted, checked by hand) */
};

extern const struct oci_knob oci_knobs[];
extern const size_t oci_n_knobs;

/* Whether r sets k. */
bool oci_knob_is_set (const struct oci_knob *k, const struct oci_resources *r);
/* k's value in r, as a signed or unsigned number (I64 / U64 / BOOL). */
int64_t oci_knob_i64 (const struct oci_knob *k, const struct oci_resources *r);
uint64_t oci_knob_u64 (const struct oci_knob *k, const struct oci_resources *r);
const char *oci_knob_str (const struct oci_knob *k, const struct oci_resources *r);
/* Whether r sets any knob of the table (only those update may change when
 * updatable). */
bool oci_knobs_any (const struct oci_resources *r, bool updatable);
/* The first knob r sets that update may not change, NULL if none. */
const struct oci_knob *oci_knobs_unchangeable (const struct oci_resources *r);

#endif

/* doctor: probe what this host can enforce and judge each profile against it. */

/* The room runtime/doctor/, the top one: `hako doctor`'s probes of what
 * this host can enforce.  It may use every room of runtime/
 * (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_DOCTOR_H
#define HAKO_RUNTIME_DOCTOR_H

#include "lib/err.h"
#include "oci/report/doctor.h"
#include "oci/spec.h"

/* Run every probe (each in a forked child where it makes anything) and fill
 * r; state_root is where this hako keeps state (also probed for idmapped
 * mounts).  Something unavailable is a finding, not a failure: this fails
 * only when the probes could not run at all. */
int doctor_probe (const char *state_root, struct doctor_report *r, hk_err *err);

#endif

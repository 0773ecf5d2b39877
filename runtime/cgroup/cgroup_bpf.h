/* cgroup_bpf: linux.resources.devices on cgroup v2 — a
 * BPF_PROG_TYPE_CGROUP_DEVICE program built from the rules, loaded and
 * attached to the sandbox's cgroup. */
#ifndef HAKO_RUNTIME_CGROUP_BPF_H
#define HAKO_RUNTIME_CGROUP_BPF_H

#include <linux/bpf.h>
#include <stddef.h>

#include "lib/err.h"
#include "runtime/cgroup/cgroup_internal.h"

/* The program for rules (in order; for each access, m, r and w, the last
 * rule that matches the device and names that access decides it; one that
 * no rule names is allowed, as a new v1 devices cgroup allows everything —
 * so rules that mean to deny start with a deny-all, as runc's do).  A
 * request is allowed only if each access it asks is.  Unreachable rules
 * (before an unconditional one) are left out, as the verifier demands. */
int cg_bpf_devices_prog (const struct cg_dev_rule *rules, size_t n, struct bpf_insn **out, size_t *len,
                         hk_err *err);
/* BPF_PROG_LOAD it: the program's fd. */
int cg_bpf_devices_load (const struct bpf_insn *prog, size_t len, int *fd, hk_err *err);
/* How many instructions the verifier walked to accept prog (its statistics
 * log), -1 if it cannot be loaded here: what the load's time follows. */
long cg_bpf_devices_walk (const struct bpf_insn *prog, size_t len);
/* Build, load and attach (BPF_F_ALLOW_MULTI, as systemd's own programs
 * are) the spec's device program to the cgroup2 directory dir. */
int cg_bpf_devices_attach (const char *dir, const struct oci_spec *spec, hk_err *err);

#endif

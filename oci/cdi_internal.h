/* cdi_internal: what cdi.c (reading specs) and cdi_apply.c (writing their
 * edits into a config) share.  For oci/cdi*.c only. */
#ifndef HAKO_OCI_CDI_INTERNAL_H
#define HAKO_OCI_CDI_INTERNAL_H

/* "prestart", "createRuntime", … "poststop", NULL: the hook lists a CDI
 * spec's containerEdits and a config's "hooks" may hold. */
extern const char *const cdi_hook_names[];

#endif

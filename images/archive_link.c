/* archive_link: keep libxml2, ICU and libstdc++ out of every hako run.
 *
 * libarchive 3.6's tar writers (commit.c writes pax) report an entry type
 * they cannot store through one helper, and the helper lives in
 * archive_write_set_format.o beside the by-code table that names every
 * writer libarchive has, xar's among them.  Linked statically (configure.ac),
 * that one call pulls xar in, and xar needs libxml2 — whose shared library
 * loads ICU and libstdc++ at the start of every hako run, exec and state
 * included (~1 ms).  Defined here, the linker takes hako's and never opens
 * that object.  Same contract: an error on the archive naming the entry. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>

void __archive_write_entry_filetype_unsupported (struct archive *a, struct archive_entry *entry,
                                                 const char *format);

void
__archive_write_entry_filetype_unsupported (struct archive *a, struct archive_entry *entry,
                                            const char *format)
{
  archive_set_error (a, EINVAL, "%s: the %s format cannot store this file type",
                     archive_entry_pathname (entry), format);
}

/* fuzz_unpack: a layer's tar stream, unpacked by the code import uses, into
 * a fresh directory each time.  A layer is hostile by assumption: whatever
 * its entries (absolute paths, .., symlinks and hardlinks out, whiteouts,
 * devices), nothing may appear outside the layer's directory — checked on a
 * sibling canary directory after every input. */
#include <archive.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/image.h"
#include "images/internal.h"
#include "lib/util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char base[64];

static void
remove_base (void)
{
  hk_err ignored;
  rm_rf (base, &ignored);
}

static bool
dir_empty (const char *path)
{
  DIR *d = opendir (path);
  if (d == NULL)
    return false;
  struct dirent *e;
  int n = 0;
  while ((e = readdir (d)))
    n++;
  closedir (d);
  return n == 2;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (base[0] == '\0')
    {
      snprintf (base, sizeof base, "/tmp/hako-fuzz-unpack.%d", (int)getpid ());
      mkdir (base, 0700);
      atexit (remove_base);
    }
  hk_err err = { 0 };
  cleanup_free char *layer = xasprintf ("%s/layer", base);
  cleanup_free char *canary = xasprintf ("%s/canary", base);
  rm_rf (layer, &err);
  rm_rf (canary, &err);
  mkdir (layer, 0755);
  mkdir (canary, 0755);
  int rootfd = open (layer, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct archive *a = archive_read_new ();
  archive_read_support_format_tar (a);
  struct img_limits lim;
  img_limits_default (&lim);
  lim.max_bytes = 1 << 20;
  lim.max_entries = 256;
  if (archive_read_open_memory (a, data, size) == ARCHIVE_OK)
    img_unpack_tar (a, rootfd, &lim, &err);
  archive_read_free (a);
  close (rootfd);
  /* Entries aimed outside land nowhere: the canary and the base hold only
   * what this harness made. */
  if (!dir_empty (canary))
    abort ();
  DIR *d = opendir (base);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir (d)))
    n++;
  if (d)
    closedir (d);
  if (n != 4)
    abort ();
  return 0;
}

/* fuzz_allowlist: allow-list entries come from a spec or `--allow`, and
 * decide what a sandbox may reach.  Each NUL-separated piece of the input is
 * parsed as an entry; then the rest is used as a host name and an address to
 * decide on.  Properties: an entry of a special range (loopback, private...)
 * never lets an unlisted special address through a name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/netclass.h"
#include "runtime/proxy/allowlist.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *text = strndup ((const char *)data, size);
  char *entries[9] = { NULL };
  size_t n = 0;
  for (char *save = NULL, *tok = strtok_r (text, "\n", &save); tok && n < 8;
       tok = strtok_r (NULL, "\n", &save))
    entries[n++] = tok;
  struct allowlist al = { 0 };
  hk_err err = { 0 };
  if (n >= 2 && al_parse (entries, &al, &err) == 0)
    {
      /* The last piece is also a target: a name and, if it is one, an address. */
      const char *target = entries[n - 1];
      char norm[256];
      if (al_normalize_name (target, norm, sizeof norm))
        al_name_allowed (&al, norm, 443);
      uint8_t a[16];
      if (al_parse_literal (target, a))
        {
          bool allowed = al_addr_allowed (&al, a, 80, true);
          /* A special address is allowed only by an entry that lists it. */
          if (allowed && net_class (a) != NET_PUBLIC)
            {
              bool listed = false;
              for (size_t i = 0; i < al.n; i++)
                if (al.e[i].kind == AL_NET && al.e[i].special)
                  listed = true;
              if (!listed)
                abort ();
            }
        }
      al_free (&al);
    }
  else if (n == 1)
    {
      struct al_entry e;
      memset (&e, 0, sizeof e);
      if (al_parse_entry (entries[0], &e, &err) == 0)
        free (e.name);
    }
  free (text);
  return 0;
}

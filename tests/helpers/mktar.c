/* mktar: write a tar stream to stdout from a line spec on stdin — including the
 * hostile entries no honest tool writes (absolute and ".." paths, symlinks to
 * the host, hardlinks to host files, device nodes, bogus whiteouts, a header
 * declaring a huge file).  Test-only; the headers are built by hand (ustar,
 * with a pax "path" record for long names) so nothing sanitizes them.
 *
 *   file PATH [CONTENT]      regular file (CONTENT: one word, may be empty)
 *   dir PATH
 *   symlink PATH TARGET
 *   hardlink PATH TARGET
 *   char PATH MAJOR MINOR    character device
 *   fifo PATH
 *   huge PATH SIZE           a header declaring SIZE bytes, then the stream ends
 *   many N                   N empty files f0 .. fN-1
 *   longpath LEN             a file whose path is LEN bytes long
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
octal (char *field, size_t len, unsigned long long v)
{
  snprintf (field, len, "%0*llo", (int)len - 1, v);
}

static void
block_out (const char *b)
{
  fwrite (b, 1, 512, stdout);
}

/* "LEN key=value\n", LEN counting itself. */
static int
pax_record (char *out, const char *key, const char *value)
{
  int base = (int)(strlen (key) + strlen (value)) + 3, n = base;
  for (int digits = 1;; digits++)
    {
      n = base + digits;
      if ((int)snprintf (NULL, 0, "%d", n) == digits)
        break;
    }
  return sprintf (out, "%d %s=%s\n", n, key, value);
}

static void
header (const char *path, char type, unsigned long long size, const char *link, int major, int minor)
{
  char h[512];
  memset (h, 0, sizeof h);
  size_t plen = strlen (path);
  /* A pax extended header carries what ustar cannot: a path over 100 bytes,
   * a size over 8 GiB. */
  char rec[16384];
  int rlen = 0;
  if (plen > 100)
    rlen += pax_record (rec + rlen, "path", path);
  if (size >= 077777777777ULL)
    {
      char num[32];
      snprintf (num, sizeof num, "%llu", size);
      rlen += pax_record (rec + rlen, "size", num);
    }
  if (rlen)
    {
      header ("././@PaxHeader", 'x', rlen, NULL, 0, 0);
      char pad[512] = { 0 };
      fwrite (rec, 1, rlen, stdout);
      fwrite (pad, 1, (512 - rlen % 512) % 512, stdout);
    }
  memcpy (h, path, plen > 100 ? 100 : plen);
  if (size >= 077777777777ULL)
    size = 0;
  octal (h + 100, 8, type == '5' ? 0755 : 0644);
  octal (h + 108, 8, 0);
  octal (h + 116, 8, 0);
  octal (h + 124, 12, size);
  octal (h + 136, 12, 0);
  h[156] = type;
  if (link)
    strncpy (h + 157, link, 100);
  memcpy (h + 257, "ustar", 6);
  memcpy (h + 263, "00", 2);
  octal (h + 329, 8, major);
  octal (h + 337, 8, minor);
  memset (h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < 512; i++)
    sum += (unsigned char)h[i];
  snprintf (h + 148, 8, "%06o", sum);
  h[155] = ' ';
  block_out (h);
}

static void
file (const char *path, const char *content)
{
  size_t n = strlen (content);
  header (path, '0', n, NULL, 0, 0);
  char b[512];
  for (size_t off = 0; off < n; off += 512)
    {
      memset (b, 0, sizeof b);
      memcpy (b, content + off, n - off < 512 ? n - off : 512);
      block_out (b);
    }
}

int
main (void)
{
  char line[8192];
  while (fgets (line, sizeof line, stdin))
    {
      line[strcspn (line, "\n")] = '\0';
      char *kind = strtok (line, " "), *a = strtok (NULL, " "), *b = strtok (NULL, " "),
           *c = strtok (NULL, " ");
      if (kind == NULL)
        continue;
      if (strcmp (kind, "file") == 0)
        file (a, b ? b : "");
      else if (strcmp (kind, "dir") == 0)
        header (a, '5', 0, NULL, 0, 0);
      else if (strcmp (kind, "symlink") == 0)
        header (a, '2', 0, b, 0, 0);
      else if (strcmp (kind, "hardlink") == 0)
        header (a, '1', 0, b, 0, 0);
      else if (strcmp (kind, "char") == 0)
        header (a, '3', 0, NULL, atoi (b), atoi (c));
      else if (strcmp (kind, "fifo") == 0)
        header (a, '6', 0, NULL, 0, 0);
      else if (strcmp (kind, "huge") == 0)
        {
          header (a, '0', strtoull (b, NULL, 10), NULL, 0, 0);
          return 0; /* the data never comes */
        }
      else if (strcmp (kind, "many") == 0)
        for (long i = 0, n = atol (a); i < n; i++)
          {
            char p[32];
            snprintf (p, sizeof p, "f%ld", i);
            file (p, "");
          }
      else if (strcmp (kind, "longpath") == 0)
        {
          long n = atol (a);
          char *p = malloc (n + 1);
          for (long i = 0; i < n; i++)
            p[i] = (i % 100 == 99) ? '/' : 'a';
          p[n] = '\0';
          if (p[n - 1] == '/')
            p[n - 1] = 'a';
          file (p, "x");
          free (p);
        }
      else
        {
          fprintf (stderr, "mktar: unknown kind %s\n", kind);
          return 1;
        }
    }
  char z[1024] = { 0 };
  fwrite (z, 1, sizeof z, stdout);
  return 0;
}

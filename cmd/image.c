/* image: import, ls, inspect, rm and verify over the content store under the data root. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "images/image.h"
#include "lib/jsonstr.h"
#include "lib/util.h"

static const char image_help[]
    = "Usage: hako image import SOURCE [--name NAME:TAG] [-q] [--format text|json] [LIMITS]\n"
      "       hako image ls [-q] [--format table|json]\n"
      "       hako image inspect NAME\n"
      "       hako image rm NAME\n"
      "       hako image verify [--format text|json]\n"
      "       hako image export NAME[:TAG] DIR [--format text|json]\n\n"
      "SOURCE: an OCI image layout DIR[:TAG], an oci-archive or a docker-archive file.\n"
      "Every blob's size and sha256 and every layer's diff_id are checked; layers are\n"
      "unpacked once into the store under --data-root.\n\n"
      "  -n, --name NAME:TAG         the name to record (default: from the source)\n"
      "  -q, --quiet                 no progress line (shown only when stderr is a terminal)\n"
      "      --max-layer-bytes N     bound on a layer's uncompressed size (default 8g)\n"
      "      --max-layer-entries N   bound on a layer's entries (default 1000000)\n"
      "      --max-path N            bound on an entry's path length (default 4096)\n"
      "      --allow-devices         create device nodes a layer holds (root only)\n"
      "      --policy FILE           trust policy (default /etc/hako/policy.json; hako-policy(5))\n"
      "      --signature FILE        a simple-signing signature of the manifest (repeatable)\n"
      "      --signature-dir DIR     signatures at DIR/NAME@sha256=HEX/signature-N\n"
      "      --format json           print the imported image as image inspect does\n\n"
      "export writes NAME as an OCI image layout in DIR (made if missing; an empty\n"
      "directory, or an existing layout the image is added to), referenced by its tag\n"
      "(umoci unpack --image DIR:TAG, skopeo inspect oci:DIR:TAG).\n";

static int
open_store (bool exclusive, struct img_store *is, hk_err *err)
{
  struct store st = { 0 };
  if (cmd_store (&st, err) < 0)
    return -1;
  int r = img_store_open (st.data_root, exclusive, is, err);
  store_fini (&st);
  return r;
}

static int image_inspect (const char *name);

/* Import progress on a terminal: one line on stderr, redrawn at most ten
 * times a second, naming the layer that last moved, its bytes against its
 * blob's size and its rate, and how many layers are done; a summary line
 * replaces it at the end.  Layers are read by several threads at once. */
struct progress
{
  pthread_mutex_t lock;
  double t0, drawn; /* monotonic seconds: start, last redraw */
  size_t n, n_done;
  double *start; /* per layer: when its first bytes came (0: not yet) */
  bool *done;
  uint64_t bytes;   /* of the layers done */
  size_t n_present; /* done at their first report: already in the store */
  uint64_t present_bytes;
  bool shown;
};

static double
mono_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
human (char *buf, size_t len, double b)
{
  static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  int u = 0;
  while (b >= 1024 && u < 4)
    b /= 1024, u++;
  snprintf (buf, len, u == 0 ? "%.0f %s" : "%.1f %s", b, unit[u]);
}

/* The per-layer arrays, at the first report (which says how many). */
static void
progress_size (struct progress *p, size_t n)
{
  if (p->n != 0)
    return;
  p->n = n;
  p->start = xcalloc (n, sizeof *p->start);
  p->done = xcalloc (n, sizeof *p->done);
}

static void
progress_layer (void *ctx, size_t i, size_t n, const char *label, uint64_t done, uint64_t total)
{
  struct progress *p = ctx;
  pthread_mutex_lock (&p->lock);
  double now = mono_now ();
  progress_size (p, n);
  if (i < p->n)
    {
      if (p->start[i] == 0)
        p->start[i] = now;
      bool finished = done == total && !p->done[i];
      if (finished)
        {
          p->done[i] = true;
          p->n_done++;
          p->bytes += total;
        }
      if (finished || now - p->drawn >= 0.1)
        {
          char d[32], t[32], r[32];
          double secs = now - p->start[i];
          human (d, sizeof d, done);
          human (t, sizeof t, total);
          human (r, sizeof r, secs > 0.01 ? done / secs : 0);
          const char *hex = strchr (label, ':') ? strchr (label, ':') + 1 : label;
          fprintf (stderr, "\r\033[Klayer %zu/%zu %.12s: %s / %s, %s/s (%zu/%zu done)", i + 1, n, hex, d, t,
                   secs > 0.01 ? r : "-", p->n_done, n);
          fflush (stderr);
          p->drawn = now;
          p->shown = true;
        }
    }
  pthread_mutex_unlock (&p->lock);
}

/* A layer already in the store: counted apart in the summary, not drawn. */
static void
progress_present (void *ctx, size_t i, size_t n, const char *label, uint64_t total)
{
  struct progress *p = ctx;
  (void)label;
  pthread_mutex_lock (&p->lock);
  progress_size (p, n);
  if (i < p->n && !p->done[i])
    {
      p->done[i] = true;
      p->n_done++;
      p->n_present++;
      p->present_bytes += total;
      p->shown = true;
    }
  pthread_mutex_unlock (&p->lock);
}

static void
progress_end (struct progress *p, bool ok)
{
  if (p->shown)
    {
      char b[32], r[32];
      double secs = mono_now () - p->t0;
      human (b, sizeof b, p->bytes);
      human (r, sizeof r, secs > 0.01 ? p->bytes / secs : 0);
      size_t fresh = p->n - p->n_present;
      char pb[32];
      human (pb, sizeof pb, p->present_bytes);
      /* A re-import unpacks nothing: say so, not "0 B/s". */
      if (ok && fresh == 0)
        fprintf (stderr, "\r\033[K%zu layer%s, %s: already in the store\n", p->n, p->n == 1 ? "" : "s", pb);
      else if (ok)
        {
          char also[64] = "";
          if (p->n_present)
            snprintf (also, sizeof also, "; %zu already in the store", p->n_present);
          fprintf (stderr, "\r\033[K%zu layer%s, %s in %.1f s (%s/s)%s\n", fresh, fresh == 1 ? "" : "s", b,
                   secs, r, also);
        }
      else
        fprintf (stderr, "\r\033[K");
    }
  free (p->start);
  free (p->done);
  pthread_mutex_destroy (&p->lock);
}

/* Import o->source into the store and say what it became. */
static int
import_run (struct img_import_opts *o, bool quiet, bool json)
{
  hk_err err = { 0 };
  struct img_store is;
  cleanup_free char *name = NULL;
  if (open_store (false, &is, &err) < 0)
    return cmd_fail ("image import", o->source, &err);
  struct progress prog = { .lock = PTHREAD_MUTEX_INITIALIZER, .t0 = mono_now () };
  struct img_progress ip = { .layer = progress_layer, .present = progress_present, .ctx = &prog };
  if (!quiet && isatty (STDERR_FILENO))
    o->progress = &ip;
  int r = img_import (&is, o, &name, &err);
  progress_end (&prog, r == 0);
  img_store_close (&is);
  if (r < 0)
    return cmd_fail ("image import", o->source, &err);
  if (json)
    return image_inspect (name); /* its name, digests and layers */
  printf ("%s\n", name);
  return 0;
}

static int
image_import (int argc, char **argv)
{
  enum
  {
    OPT_BYTES = 256,
    OPT_ENTRIES,
    OPT_PATH,
    OPT_DEVICES,
    OPT_POLICY,
    OPT_SIG,
    OPT_SIGDIR,
    OPT_FORMAT
  };
  static const struct option opts[] = {
    { "name", required_argument, NULL, 'n' },
    { "quiet", no_argument, NULL, 'q' },
    { "max-layer-bytes", required_argument, NULL, OPT_BYTES },
    { "max-layer-entries", required_argument, NULL, OPT_ENTRIES },
    { "max-path", required_argument, NULL, OPT_PATH },
    { "allow-devices", no_argument, NULL, OPT_DEVICES },
    { "policy", required_argument, NULL, OPT_POLICY },
    { "signature", required_argument, NULL, OPT_SIG },
    { "signature-dir", required_argument, NULL, OPT_SIGDIR },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct img_import_opts o = { 0 };
  img_limits_default (&o.limits);
  uint64_t v;
  int c;
  cleanup_free char **sigs = NULL;
  size_t n_sigs = 0;
  bool json = false, quiet = false;
  optind = 0; /* reinitialize getopt: options may follow SOURCE */
  while ((c = getopt_long (argc, argv, "n:qh", opts, NULL)) != -1)
    switch (c)
      {
      case 'n': o.name = optarg; break;
      case 'q': quiet = true; break;
      case OPT_BYTES:
      case OPT_ENTRIES:
      case OPT_PATH:
        if (parse_size (optarg, &v) < 0 || v == 0)
          return cmd_usage ("image import", "\"%s\" is not a positive size", optarg);
        if (c == OPT_BYTES)
          o.limits.max_bytes = v;
        else if (c == OPT_ENTRIES)
          o.limits.max_entries = v;
        else
          o.limits.max_path = v;
        break;
      case OPT_DEVICES: o.limits.allow_devices = true; break;
      case OPT_POLICY: o.policy = optarg; break;
      case OPT_SIG:
        sigs = xrealloc (sigs, (n_sigs + 2) * sizeof *sigs);
        sigs[n_sigs++] = optarg;
        sigs[n_sigs] = NULL;
        break;
      case OPT_SIGDIR: o.sigstore = optarg; break;
      case OPT_FORMAT:
        if (strcmp (optarg, "json") != 0 && strcmp (optarg, "text") != 0)
          return cmd_usage ("image import", "--format: \"%s\" is not text or json", optarg);
        json = strcmp (optarg, "json") == 0;
        break;
      case 'h': return cmd_help (image_help);
      default: return cmd_bad_option ("image import", argv, opts);
      }
  if (argc - optind != 1)
    return cmd_usage ("image import", "expects exactly one SOURCE");
  o.source = argv[optind];
  o.signatures = sigs;
  return import_run (&o, quiet, json);
}

static int
image_ls_json (const struct oci_image_names *n)
{
  hk_err err = { 0 };
  cleanup_free char *json = NULL;
  if (oci_image_list_write (n, &json, &err) < 0)
    return cmd_fail ("image ls", NULL, &err);
  printf ("%s\n", json);
  return 0;
}

static int
image_ls (bool quiet, bool json)
{
  hk_err err = { 0 };
  struct img_store is;
  struct oci_image_names n;
  int r = 0;
  if (open_store (false, &is, &err) < 0 || img_names_load (&is, &n, &err) < 0)
    return cmd_fail ("image ls", NULL, &err);
  if (json)
    r = image_ls_json (&n);
  else if (!quiet)
    printf ("%-40s %-19s %-8s %s\n", "NAME", "MANIFEST", "LAYERS", "IMPORTED");
  for (size_t i = 0; i < n.n && !json; i++)
    if (quiet)
      printf ("%s\n", n.images[i].name);
    else
      printf ("%-40s %.19s %-8zu %s\n", n.images[i].name, n.images[i].manifest_digest, n.images[i].n_layers,
              n.images[i].created ? n.images[i].created : "-");
  oci_image_names_free (&n);
  img_store_close (&is);
  return r;
}

static int
image_inspect (const char *name)
{
  hk_err err = { 0 };
  struct img_store is;
  struct oci_image_rec rec = { 0 };
  struct oci_image_config c = { 0 };
  cleanup_free char *json = NULL;
  int r = 0;
  if (open_store (false, &is, &err) < 0)
    return cmd_fail ("image inspect", name, &err);
  if (img_find (&is, name, &rec, &err) < 0 || img_config (&is, &rec, &c, &err) < 0
      || oci_image_inspect_write (&rec, &c, &json, &err) < 0)
    r = cmd_fail ("image inspect", name, &err);
  else
    printf ("%s\n", json);
  oci_image_config_free (&c);
  oci_image_rec_free (&rec);
  img_store_close (&is);
  return r;
}

static int
image_rm (const char *name)
{
  hk_err err = { 0 };
  struct img_store is;
  if (open_store (true, &is, &err) < 0)
    return cmd_fail ("image rm", name, &err);
  int r = img_remove (&is, name, &err) < 0 ? cmd_fail ("image rm", name, &err) : 0;
  img_store_close (&is);
  return r;
}

static int
image_verify (bool json)
{
  hk_err err = { 0 };
  struct img_store is;
  size_t n = 0;
  if (open_store (false, &is, &err) < 0)
    return cmd_fail ("image verify", NULL, &err);
  int r = img_verify (&is, &n, &err) < 0 ? cmd_fail ("image verify", NULL, &err) : 0;
  if (r == 0 && json)
    printf ("{\"blobs\":%zu}\n", n);
  else if (r == 0)
    printf ("%zu blobs verified\n", n);
  img_store_close (&is);
  return r;
}

static int
image_export (const char *name, const char *dir, bool json)
{
  hk_err err = { 0 };
  struct img_store is;
  cleanup_free char *ref = NULL;
  if (open_store (false, &is, &err) < 0)
    return cmd_fail ("image export", name, &err);
  int r = img_export (&is, name, dir, &ref, &err) < 0 ? cmd_fail ("image export", name, &err) : 0;
  if (r == 0 && json)
    {
      fputs ("{\"layout\":", stdout);
      jsonstr_fput (stdout, dir, strlen (dir));
      fputs (",\"ref\":", stdout);
      jsonstr_fput (stdout, ref, strlen (ref));
      fputs ("}\n", stdout);
    }
  else if (r == 0)
    printf ("%s:%s\n", dir, ref);
  img_store_close (&is);
  return r;
}

static const char *const image_subs[] = { "import", "ls", "list", "inspect", "rm", "verify", "export" };

static int
unknown_sub (const char *sub)
{
  const char *s = cmd_suggest (sub, image_subs, sizeof image_subs / sizeof *image_subs);
  if (s)
    return cmd_usage ("image", "unknown subcommand \"%s\"; did you mean \"%s\"?", sub, s);
  return cmd_usage ("image", "unknown subcommand \"%s\" (import, ls, inspect, rm, verify, export)", sub);
}

/* The subcommands but import: [-q] [--format table|json] and operands. */
static int
image_other (const char *verb, const char *sub, int argc, char **argv)
{
  static const struct option opts[] = { { "quiet", no_argument, NULL, 'q' },
                                        { "format", required_argument, NULL, 'f' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  bool quiet = false, json = false;
  int c;
  optind = 0;
  while ((c = getopt_long (argc, argv, "qf:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'q': quiet = true; break;
      case 'f':
        if (strcmp (optarg, "json") != 0 && strcmp (optarg, "table") != 0 && strcmp (optarg, "text") != 0)
          return cmd_usage (verb, "--format: \"%s\" is not table, text or json", optarg);
        json = strcmp (optarg, "json") == 0;
        break;
      case 'h': return cmd_help (image_help);
      default: return cmd_bad_option (verb, argv, opts);
      }
  int args = argc - optind;
  if (strcmp (sub, "ls") == 0 || strcmp (sub, "list") == 0)
    return args == 0 ? image_ls (quiet, json) : cmd_usage (verb, "takes no arguments");
  if (strcmp (sub, "verify") == 0)
    return args == 0 ? image_verify (json) : cmd_usage (verb, "takes no arguments");
  /* inspect prints JSON whatever --format says. */
  if (strcmp (sub, "inspect") == 0)
    return args == 1 ? image_inspect (argv[optind]) : cmd_usage (verb, "expects one NAME");
  if (strcmp (sub, "rm") == 0)
    return args == 1 ? image_rm (argv[optind]) : cmd_usage (verb, "expects one NAME");
  return args == 2 ? image_export (argv[optind], argv[optind + 1], json)
                   : cmd_usage (verb, "expects NAME and DIR");
}

int
cmd_image (int argc, char **argv)
{
  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    return argc < 2 ? cmd_usage ("image", "expects a subcommand") : cmd_help (image_help);
  const char *sub = argv[1];
  argc--;
  argv++;
  if (strcmp (sub, "import") == 0)
    return image_import (argc, argv);
  bool known = false;
  for (size_t i = 0; i < sizeof image_subs / sizeof *image_subs; i++)
    known |= strcmp (sub, image_subs[i]) == 0;
  if (!known)
    return unknown_sub (sub);
  char verb[32];
  snprintf (verb, sizeof verb, "image %s", sub);
  return image_other (verb, sub, argc, argv);
}

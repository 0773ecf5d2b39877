/* tests/bench/lat.c: latency samples of commands, alone or many at once,
 * for the tail rows of `make bench` (tails.sh) and for A/B comparisons.
 *
 *   lat [-c CONC] [-n SAMPLES] [-w WARMUP] [-o OUT] [-t TRACEDIR]
 *       -- STEP [:then STEP]... [:untimed STEP] [:setup STEP] [:teardown STEP]
 *       [:or STEP ...]
 *
 * CONC workers (processes) run SAMPLES samples in all, each worker its share
 * one after the other (a sample starts as soon as the worker's last one
 * ended: CONC samples are in flight at any time).  A sample is its STEPs
 * in order, each a command run without a shell (posix_spawn), stdout and
 * stdin /dev/null; its time is from the first step's spawn to the last
 * timed step's exit, on CLOCK_MONOTONIC.  An :untimed step (a delete
 * after create+start) runs after the timed ones and is not counted.
 * :setup and :teardown run once per worker, before its first sample and
 * after its last.  In every argument "{w}" is the worker's number and "{}"
 * a number unique to the sample.  :or starts another variant: the samples
 * alternate between the variants (A, B, A, B...), so that a loaded
 * machine's drift moves them alike.
 *
 * OUT gets one line per sample: "VARIANT WORKER SAMPLE TOTAL_MS STEP_MS...";
 * with -t, each sample's stderr goes to TRACEDIR/VARIANT.SAMPLE and its
 * commands get HAKO_TRACE=1 (else stderr is kept).  lat is a child
 * subreaper: a container process that outlives its runtime's create is
 * reaped here.  A step that fails
 * (non-zero exit) fails the run: lat exits 1 after the other workers end,
 * naming the command. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum kind
{
  TIMED,
  UNTIMED,
  SETUP,
  TEARDOWN
};

struct step
{
  enum kind kind;
  char **argv;
};

struct variant
{
  struct step *steps;
  size_t n;
};

static struct variant *variants;
static size_t n_variants;
static const char *trace_dir;
static char **trace_env;

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ARG with "{w}" and "{}" replaced. */
static char *
expand (const char *arg, int worker, long sample)
{
  char *out = malloc (strlen (arg) + 64), *o = out;
  for (const char *p = arg; *p;)
    if (strncmp (p, "{w}", 3) == 0)
      o += sprintf (o, "%d", worker), p += 3;
    else if (strncmp (p, "{}", 2) == 0)
      o += sprintf (o, "%ld", sample), p += 2;
    else
      *o++ = *p++;
  *o = '\0';
  return out;
}

/* Run one step; its exit status (0 on success). */
static int
run_step (const struct step *s, int worker, long sample, int err_fd)
{
  size_t n = 0;
  while (s->argv[n])
    n++;
  char **argv = calloc (n + 1, sizeof *argv);
  for (size_t i = 0; i < n; i++)
    argv[i] = expand (s->argv[i], worker, sample);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", O_WRONLY, 0);
  if (err_fd >= 0)
    posix_spawn_file_actions_adddup2 (&fa, err_fd, 2);
  pid_t pid;
  int r = posix_spawnp (&pid, argv[0], &fa, NULL, argv, err_fd >= 0 && trace_env ? trace_env : environ);
  posix_spawn_file_actions_destroy (&fa);
  int ws = 0;
  if (r == 0)
    while (waitpid (pid, &ws, 0) < 0 && errno == EINTR)
      ;
  int status = r ? 127 : WIFEXITED (ws) ? WEXITSTATUS (ws) : 128 + WTERMSIG (ws);
  if (status)
    {
      fprintf (stderr, "lat: worker %d sample %ld: exit %d:", worker, sample, status);
      for (size_t i = 0; i < n; i++)
        fprintf (stderr, " %s", argv[i]);
      fprintf (stderr, "\n");
    }
  for (size_t i = 0; i < n; i++)
    free (argv[i]);
  free (argv);
  return status;
}

static int
run_kind (const struct variant *v, enum kind k, int worker, long sample, int err_fd, double *times,
          size_t *nt)
{
  for (size_t i = 0; i < v->n; i++)
    {
      if (v->steps[i].kind != k)
        continue;
      double t0 = now_ms ();
      if (run_step (&v->steps[i], worker, sample, err_fd))
        return -1;
      if (times)
        times[(*nt)++] = now_ms () - t0;
    }
  return 0;
}

/* One worker: its samples, one line each on out (one write a line). */
static int
worker (int w, int conc, long samples, long warmup, int out)
{
  for (size_t v = 0; v < n_variants; v++)
    if (run_kind (&variants[v], SETUP, w, -1, -1, NULL, NULL))
      return 1;
  int rc = 0;
  long mine = 0;
  for (long i = -warmup * (long)n_variants; rc == 0; i++)
    {
      /* Sample numbers: the warm-up's negative, the rest shared out. */
      long sample = i < 0 ? i - (long)w * 1000 : (long)w + (long)conc * mine;
      if (i >= 0 && sample >= samples)
        break;
      size_t v = (size_t)((i < 0 ? -i : i) % (long)n_variants);
      int err_fd = -1;
      if (trace_dir && i >= 0)
        {
          char path[4096];
          snprintf (path, sizeof path, "%s/%zu.%ld", trace_dir, v, sample);
          err_fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        }
      double times[64];
      size_t nt = 0;
      double t0 = now_ms ();
      rc = run_kind (&variants[v], TIMED, w, sample, err_fd, times, &nt);
      double total = now_ms () - t0;
      if (rc == 0)
        rc = run_kind (&variants[v], UNTIMED, w, sample, err_fd, NULL, NULL);
      if (err_fd >= 0)
        close (err_fd);
      if (rc == 0 && i >= 0)
        {
          char line[2048];
          int len = snprintf (line, sizeof line, "%zu %d %ld %.3f", v, w, sample, total);
          for (size_t k = 0; k < nt && len < (int)sizeof line - 32; k++)
            len += snprintf (line + len, sizeof line - (size_t)len, " %.3f", times[k]);
          line[len++] = '\n';
          if (write (out, line, (size_t)len) != len)
            rc = 1;
        }
      if (i >= 0 && ((i + 1) % (long)n_variants) == 0)
        mine++;
    }
  for (size_t v = 0; v < n_variants; v++)
    if (run_kind (&variants[v], TEARDOWN, w, -1, -1, NULL, NULL))
      rc = 1;
  return rc != 0;
}

static void
usage (void)
{
  fprintf (stderr, "usage: lat [-c CONC] [-n SAMPLES] [-w WARMUP] [-o OUT] [-t TRACEDIR] -- STEP "
                   "[:then STEP]... [:untimed STEP] [:setup STEP] [:teardown STEP] [:or STEP ...]\n");
  exit (2);
}

static int
is_mark (const char *a)
{
  return strcmp (a, ":or") == 0 || strcmp (a, ":then") == 0 || strcmp (a, ":untimed") == 0
         || strcmp (a, ":setup") == 0 || strcmp (a, ":teardown") == 0;
}

/* argv after "--" into the variants and their steps. */
static void
parse_steps (int argc, char **argv)
{
  struct variant *cur = NULL;
  enum kind k = TIMED;
  for (int i = 0; i < argc;)
    {
      const char *a = argv[i];
      if (cur == NULL || strcmp (a, ":or") == 0)
        {
          variants = realloc (variants, (n_variants + 1) * sizeof *variants);
          cur = &variants[n_variants++];
          *cur = (struct variant){ 0 };
          k = TIMED;
          if (strcmp (a, ":or") == 0)
            i++;
          continue;
        }
      if (strcmp (a, ":then") == 0 || strcmp (a, ":untimed") == 0 || strcmp (a, ":setup") == 0
          || strcmp (a, ":teardown") == 0)
        {
          k = a[1] == 't' && a[2] == 'h' ? TIMED : a[1] == 'u' ? UNTIMED : a[1] == 's' ? SETUP : TEARDOWN;
          i++;
          continue;
        }
      int j = i;
      while (j < argc && !is_mark (argv[j]))
        j++;
      if (j == i)
        usage ();
      cur->steps = realloc (cur->steps, (cur->n + 1) * sizeof *cur->steps);
      char **sv = calloc ((size_t)(j - i + 1), sizeof *sv);
      memcpy (sv, argv + i, (size_t)(j - i) * sizeof *sv);
      cur->steps[cur->n++] = (struct step){ .kind = k, .argv = sv };
      i = j;
    }
  if (n_variants == 0)
    usage ();
}

int
main (int argc, char **argv)
{
  int conc = 1, opt;
  long samples = 100, warmup = 0;
  const char *out_path = NULL;
  while ((opt = getopt (argc, argv, "c:n:w:o:t:")) != -1)
    switch (opt)
      {
      case 'c': conc = atoi (optarg); break;
      case 'n': samples = atol (optarg); break;
      case 'w': warmup = atol (optarg); break;
      case 'o': out_path = optarg; break;
      case 't': trace_dir = optarg; break;
      default: usage ();
      }
  if (conc < 1 || samples < 1)
    usage ();
  parse_steps (argc - optind, argv + optind);
  if (trace_dir)
    {
      size_t n = 0;
      while (environ[n])
        n++;
      trace_env = calloc (n + 2, sizeof *trace_env);
      memcpy (trace_env, environ, n * sizeof *trace_env);
      trace_env[n] = "HAKO_TRACE=1";
    }
  int out = out_path ? open (out_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644) : 1;
  if (out < 0)
    {
      perror (out_path);
      return 1;
    }
  signal (SIGPIPE, SIG_IGN);
  prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  pid_t *pids = calloc ((size_t)conc, sizeof *pids);
  for (int w = 0; w < conc; w++)
    {
      pids[w] = fork ();
      if (pids[w] == 0)
        _exit (worker (w, conc, samples, warmup, out));
    }
  /* Every child until the workers are done: the workers', and the orphans
   * re-parented here (a runtime's container process outlives its create). */
  int rc = 0, left = conc, ws;
  pid_t p;
  while (left > 0 && ((p = wait (&ws)) > 0 || errno == EINTR))
    for (int w = 0; p > 0 && w < conc; w++)
      if (pids[w] == p)
        {
          left--;
          if (!WIFEXITED (ws) || WEXITSTATUS (ws))
            rc = 1;
        }
  while (waitpid (-1, NULL, WNOHANG) > 0)
    ;
  return rc;
}

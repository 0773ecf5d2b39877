/* sockfam: open a socket of each family named on the command line and say
 * what socket(2) answered, one "NAME RESULT" line each, where RESULT is "ok"
 * or the errno's name.  Built static by `make check`, so it runs in a
 * busybox root (tests/integration/seccomp.bats).
 *
 *   sockfam AF_VSOCK AF_INET NETLINK_AUDIT socketpair:AF_VSOCK
 *
 * An AF_* name tries every socket type and reports "ok" if one opens, else
 * the first errno other than EAFNOSUPPORT (a type the family lacks), else
 * EAFNOSUPPORT.  A NETLINK_* name is socket (AF_NETLINK, SOCK_RAW, that
 * protocol).  "socketpair:AF_*" tries socketpair(2) instead. */
#include <errno.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_MCTP
#define AF_MCTP 45
#endif

struct name
{
  const char *name;
  int value;
};

#define N(x)                                                                                                 \
  {                                                                                                          \
#x, x                                                                                                    \
  }
static const struct name families[] = {
  N (AF_UNSPEC),     N (AF_UNIX),      N (AF_INET),     N (AF_AX25),  N (AF_IPX),     N (AF_APPLETALK),
  N (AF_NETROM),     N (AF_BRIDGE),    N (AF_ATMPVC),   N (AF_X25),   N (AF_INET6),   N (AF_ROSE),
  N (AF_DECnet),     N (AF_NETBEUI),   N (AF_SECURITY), N (AF_KEY),   N (AF_NETLINK), N (AF_PACKET),
  N (AF_ASH),        N (AF_ECONET),    N (AF_ATMSVC),   N (AF_RDS),   N (AF_SNA),     N (AF_IRDA),
  N (AF_PPPOX),      N (AF_WANPIPE),   N (AF_LLC),      N (AF_IB),    N (AF_MPLS),    N (AF_CAN),
  N (AF_TIPC),       N (AF_BLUETOOTH), N (AF_IUCV),     N (AF_RXRPC), N (AF_ISDN),    N (AF_PHONET),
  N (AF_IEEE802154), N (AF_CAIF),      N (AF_ALG),      N (AF_NFC),   N (AF_VSOCK),   N (AF_KCM),
  N (AF_QIPCRTR),    N (AF_SMC),       N (AF_XDP),      N (AF_MCTP),
};

static const struct name protocols[] = {
  N (NETLINK_ROUTE),         N (NETLINK_USERSOCK),   N (NETLINK_FIREWALL),       N (NETLINK_SOCK_DIAG),
  N (NETLINK_NFLOG),         N (NETLINK_XFRM),       N (NETLINK_SELINUX),        N (NETLINK_ISCSI),
  N (NETLINK_AUDIT),         N (NETLINK_FIB_LOOKUP), N (NETLINK_CONNECTOR),      N (NETLINK_NETFILTER),
  N (NETLINK_IP6_FW),        N (NETLINK_DNRTMSG),    N (NETLINK_KOBJECT_UEVENT), N (NETLINK_GENERIC),
  N (NETLINK_SCSITRANSPORT), N (NETLINK_ECRYPTFS),   N (NETLINK_RDMA),           N (NETLINK_CRYPTO),
  N (NETLINK_SMC),
};
#undef N

static int
lookup (const struct name *t, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (t[i].name, name) == 0)
      return t[i].value;
  return -1;
}

/* 0 when a socket of some type opened, else the errno that says most. */
static int
try_family (int family, bool pair)
{
  static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET, SOCK_RDM };
  int best = EAFNOSUPPORT;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    {
      int sv[2] = { -1, -1 };
      int r = pair ? socketpair (family, types[i] | SOCK_CLOEXEC, 0, sv)
                   : (sv[0] = socket (family, types[i] | SOCK_CLOEXEC, 0));
      if (r >= 0)
        {
          close (sv[0]);
          if (sv[1] >= 0)
            close (sv[1]);
          return 0;
        }
      if (best == EAFNOSUPPORT)
        best = errno;
    }
  return best;
}

int
main (int argc, char **argv)
{
  const size_t n_fam = sizeof families / sizeof *families, n_proto = sizeof protocols / sizeof *protocols;
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      bool pair = strncmp (arg, "socketpair:", 11) == 0;
      const char *name = pair ? arg + 11 : arg;
      int v, e;
      if ((v = lookup (families, n_fam, name)) >= 0)
        e = try_family (v, pair);
      else if (!pair && (v = lookup (protocols, n_proto, name)) >= 0)
        {
          int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, v);
          e = fd < 0 ? errno : 0;
          if (fd >= 0)
            close (fd);
        }
      else
        {
          fprintf (stderr, "sockfam: unknown family or protocol \"%s\"\n", arg);
          return 2;
        }
      printf ("%s %s\n", arg, e == 0 ? "ok" : strerrorname_np (e));
    }
  return 0;
}

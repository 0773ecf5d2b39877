#!/usr/bin/python3
"""A CRI client for hako's tests: drives containerd's CRI plugin the way the
kubelet does, with the CRI v1 messages of tests/cri/cri.proto (compiled at
run time with grpc_tools; nothing generated is kept).

    cri_client.py SOCKET pod host|loopback      the kubelet's sequence, checked
    cri_client.py SOCKET create-fails ANN=VALUE... WANT
                                                a container with those container
                                                annotations fails the runtime's create
                                                (StartContainer), CRI's reason has WANT
    cri_client.py SOCKET pod-fails ANN=VALUE... WANT
                                                a pod with those pod annotations
                                                fails RunPodSandbox (the pause
                                                container's create), CRI's reason
                                                has WANT
    cri_client.py SOCKET run ANN=VALUE... -- CMD...
                                                a loopback pod with those pod
                                                annotations, one container running
                                                CMD; prints its ExecSync output of
                                                `sh -c "$CHECK"` (environment CHECK)
                                                and the container's exit code

Environment: CRI_IMAGE (the busybox image), CRI_LOGS (the pods' log
directories go under it), CRI_CGROUP (the pods' cgroup parent prefix),
CRI_HANDLER (default hako).  Every check that fails raises: the exit code is
1 and the message says what differed.
"""

import json
import os
import shutil
import sys
import tempfile
import time

import grpc
from grpc_tools import protoc

HERE = os.path.dirname(os.path.abspath(__file__))


def load_stubs():
    out = tempfile.mkdtemp(prefix="hako-cri-")
    inc = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + HERE, "-I" + inc, "--python_out=" + out,
                      "--grpc_python_out=" + out, os.path.join(HERE, "cri.proto")])
    if rc != 0:
        raise SystemExit("protoc failed on cri.proto")
    sys.path.insert(0, out)
    import cri_pb2
    import cri_pb2_grpc
    shutil.rmtree(out, ignore_errors=True)
    return cri_pb2, cri_pb2_grpc


pb, pbg = load_stubs()
IMAGE = os.environ.get("CRI_IMAGE", "hako.test/busybox:latest")
LOGS = os.environ.get("CRI_LOGS", "/tmp/hako-cri-logs")
CGROUP = os.environ.get("CRI_CGROUP", "/hako-cri")
HANDLER = os.environ.get("CRI_HANDLER", "hako")
# A long-running container that ends on TERM (sh as pid 1 ignores it).
IDLE = ["sh", "-c", 'trap "exit 0" TERM; echo started; sleep 1000 & wait']


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what, flush=True)


class Cri:
    def __init__(self, socket):
        self.chan = grpc.insecure_channel("unix://" + socket)
        self.rt = pbg.RuntimeServiceStub(self.chan)
        self.seq = 0
        self.pods = []

    def cleanup(self):
        """After a failure: stop and remove every pod made (their containers too)."""
        for p in self.pods:
            for name, req in (("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=p)),
                              ("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=p))):
                try:
                    self.call(name, req)
                except grpc.RpcError:
                    pass

    def call(self, name, req, timeout=60):
        return getattr(self.rt, name)(req, timeout=timeout)

    def pod_config(self, name, network, annotations=None):
        self.seq += 1
        uid = "%s-%d-%d" % (name, os.getpid(), self.seq)
        logdir = os.path.join(LOGS, uid)
        os.makedirs(logdir, exist_ok=True)
        mode = pb.NODE if network == "host" else pb.POD
        return pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=name, uid=uid, namespace="hako-test", attempt=0),
            hostname="" if network == "host" else name, log_directory=logdir, annotations=annotations or {},
            linux=pb.LinuxPodSandboxConfig(
                cgroup_parent="%s/pod-%s" % (CGROUP, uid),
                security_context=pb.LinuxSandboxSecurityContext(
                    namespace_options=pb.NamespaceOption(network=mode, pid=pb.CONTAINER, ipc=pb.POD))))

    def run_pod(self, cfg):
        pod_id = self.call("RunPodSandbox", pb.RunPodSandboxRequest(config=cfg, runtime_handler=HANDLER)).pod_sandbox_id
        self.pods.append(pod_id)
        return pod_id

    def create(self, pod, cfg, name, cmd, annotations=None, memory=0):
        cc = pb.ContainerConfig(
            metadata=pb.ContainerMetadata(name=name), image=pb.ImageSpec(image=IMAGE), command=cmd,
            envs=[pb.KeyValue(key="WHO", value=name)], annotations=annotations or {},
            log_path=name + ".log",
            linux=pb.LinuxContainerConfig(resources=pb.LinuxContainerResources(memory_limit_in_bytes=memory)))
        return self.call("CreateContainer", pb.CreateContainerRequest(
            pod_sandbox_id=pod, config=cc, sandbox_config=cfg)).container_id

    def exec(self, cid, cmd, timeout=10):
        r = self.call("ExecSync", pb.ExecSyncRequest(container_id=cid, cmd=cmd, timeout=timeout),
                      timeout=timeout + 30)
        return r.stdout.decode(), r.stderr.decode(), r.exit_code

    def status(self, cid, verbose=False):
        return self.call("ContainerStatus", pb.ContainerStatusRequest(container_id=cid, verbose=verbose))

    def teardown_pod(self, pod, cids):
        for c in cids:
            self.call("StopContainer", pb.StopContainerRequest(container_id=c, timeout=5))
        for c in cids:
            self.call("RemoveContainer", pb.RemoveContainerRequest(container_id=c))
        self.call("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=pod))
        self.call("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=pod))


def cgroup_file(pid, controller, name):
    """The v1 controller's file of pid's cgroup, or cgroup2's (unified)."""
    for line in open("/proc/%d/cgroup" % pid):
        hid, ctrls, path = line.rstrip("\n").split(":", 2)
        if controller in ctrls.split(","):
            return "/sys/fs/cgroup/%s%s/%s" % (controller, path, name)
    for line in open("/proc/%d/cgroup" % pid):
        hid, ctrls, path = line.rstrip("\n").split(":", 2)
        if hid == "0":
            base = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup"
            return "%s%s/%s" % (base, path, {"memory.limit_in_bytes": "memory.max"}.get(name, name))
    raise AssertionError("no %s cgroup for pid %d" % (controller, pid))


def pod(cri, network):
    v = cri.call("Version", pb.VersionRequest(version="v1"))
    check(v.runtime_name == "containerd" and v.runtime_api_version == "v1",
          "Version: %s %s, CRI %s" % (v.runtime_name, v.runtime_version, v.runtime_api_version))

    cfg = cri.pod_config("p-" + network, network)
    t0 = time.monotonic()
    pod_id = cri.run_pod(cfg)
    check(bool(pod_id), "RunPodSandbox (%s network, handler %s): %.0f ms" % (
        network, HANDLER, (time.monotonic() - t0) * 1000))
    st = cri.call("PodSandboxStatus", pb.PodSandboxStatusRequest(pod_sandbox_id=pod_id, verbose=True))
    check(st.status.state == pb.SANDBOX_READY, "PodSandboxStatus: SANDBOX_READY")
    check(st.status.runtime_handler == HANDLER, "PodSandboxStatus: runtime_handler %s" % HANDLER)
    want_net = pb.NODE if network == "host" else pb.POD
    check(st.status.linux.namespaces.options.network == want_net, "PodSandboxStatus: network namespace mode")
    # No pod address outside loopback: host pods have none of their own,
    # loopback-only pods only lo.
    ip = st.status.network.ip
    check(ip == "" or ip.startswith("127.") or ip == "::1", "PodSandboxStatus: no routable pod address (%r)" % ip)
    info = json.loads(st.info.get("info", "{}"))
    pause_pid = info.get("pid", 0)
    check(pause_pid > 0, "the pause container runs (pid %d)" % pause_pid)

    cids = []
    for name in ("c1", "c2"):
        t0 = time.monotonic()
        cids.append(cri.create(pod_id, cfg, name, IDLE))
        ms = (time.monotonic() - t0) * 1000
        cri.call("StartContainer", pb.StartContainerRequest(container_id=cids[-1]))
        check(cri.status(cids[-1]).status.state == pb.CONTAINER_RUNNING,
              "CreateContainer %s (%.0f ms), StartContainer, ContainerStatus: CONTAINER_RUNNING" % (name, ms))
    c1, c2 = cids

    ns = {}
    for c in cids:
        out, err, rc = cri.exec(c, ["sh", "-c", "for n in net ipc mnt uts; do readlink /proc/self/ns/$n; done; "
                                    "echo $WHO"])
        check(rc == 0, "ExecSync readlink in %s" % c[:12])
        ns[c] = out.split()
    check(ns[c1][0] == ns[c2][0] and ns[c1][1] == ns[c2][1],
          "the two containers share the pod's network and IPC (%s, %s)" % (ns[c1][:2], ns[c2][:2]))
    check(ns[c1][2] != ns[c2][2], "each container has its own mount namespace")
    check(ns[c1][4] == "c1" and ns[c2][4] == "c2", "each container has its own environment (WHO)")
    host_net = os.readlink("/proc/self/ns/net")
    check(ns[c1][0] == os.readlink("/proc/%d/ns/net" % pause_pid), "the network namespace is the pause container's")
    if network == "host":
        check(ns[c1][0] == host_net, "host network: the host's network namespace")
    else:
        check(ns[c1][0] != host_net, "loopback pod: a network namespace of its own")
        out, _, rc = cri.exec(c1, ["ls", "/sys/class/net"])
        check(rc == 0 and out.split() == ["lo"], "loopback pod: its only interface is lo (%r)" % out.split())
        out, _, rc = cri.exec(c1, ["sh", "-c", "cat /proc/net/route | wc -l"])
        check(rc == 0 and out.strip() == "1", "loopback pod: no route (only the header of /proc/net/route)")

    out, err, rc = cri.exec(c1, ["sh", "-c", "echo out; echo err >&2; exit 3"])
    check((out, err, rc) == ("out\n", "err\n", 3), "ExecSync: stdout, stderr and exit code 3")
    t0 = time.monotonic()
    try:
        cri.exec(c1, ["sleep", "60"], timeout=1)
        check(False, "ExecSync with timeout 1s returns an error")
    except grpc.RpcError as e:
        dt = time.monotonic() - t0
        check(dt < 15, "ExecSync timeout 1s: %s after %.1f s (%s)" % (e.code().name, dt, e.details()[:60]))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        out, _, _ = cri.exec(c1, ["ps", "-o", "args"])
        if "sleep 60" not in out:
            break
        time.sleep(0.2)
    check("sleep 60" not in out, "the timed-out exec's process is gone")

    lc = cri.call("ListContainers", pb.ListContainersRequest(filter=pb.ContainerFilter(pod_sandbox_id=pod_id)))
    check(sorted(c.id for c in lc.containers) == sorted(cids)
          and all(c.state == pb.CONTAINER_RUNNING for c in lc.containers),
          "ListContainers: the pod's two containers, running")

    stats = cri.call("ContainerStats", pb.ContainerStatsRequest(container_id=c1)).stats
    check(stats.attributes.id == c1 and stats.memory.working_set_bytes.value > 0
          and stats.cpu.usage_core_nano_seconds.value > 0,
          "ContainerStats: memory working set %d bytes, cpu %d ns" % (
              stats.memory.working_set_bytes.value, stats.cpu.usage_core_nano_seconds.value))

    pid = json.loads(cri.status(c1, verbose=True).info["info"])["pid"]
    cri.call("UpdateContainerResources", pb.UpdateContainerResourcesRequest(
        container_id=c1, linux=pb.LinuxContainerResources(memory_limit_in_bytes=64 << 20)))
    f = cgroup_file(pid, "memory", "memory.limit_in_bytes")
    check(open(f).read().strip() == str(64 << 20), "UpdateContainerResources: memory limit 64 MiB in %s" % f)

    log = os.path.join(cfg.log_directory, "c1.log")
    text = open(log).read()
    lines = [line.split(" ", 3) for line in text.splitlines()]
    check(any(len(f) == 4 and f[1] == "stdout" and f[2] == "F" and f[3] == "started" for f in lines),
          "the container log containerd writes (%s): %r" % (log, text.splitlines()[:1]))

    for c in cids:
        cri.call("StopContainer", pb.StopContainerRequest(container_id=c, timeout=5))
        s = cri.status(c).status
        check(s.state == pb.CONTAINER_EXITED and s.exit_code == 0,
              "StopContainer %s: CONTAINER_EXITED, exit code %d (%s)" % (c[:12], s.exit_code, s.reason))
        cri.call("RemoveContainer", pb.RemoveContainerRequest(container_id=c))
    lc = cri.call("ListContainers", pb.ListContainersRequest(filter=pb.ContainerFilter(pod_sandbox_id=pod_id)))
    check(len(lc.containers) == 0, "RemoveContainer: the pod has no containers")
    cri.call("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=pod_id))
    st = cri.call("PodSandboxStatus", pb.PodSandboxStatusRequest(pod_sandbox_id=pod_id))
    check(st.status.state == pb.SANDBOX_NOTREADY, "StopPodSandbox: SANDBOX_NOTREADY")
    cri.call("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=pod_id))
    try:
        cri.call("PodSandboxStatus", pb.PodSandboxStatusRequest(pod_sandbox_id=pod_id))
        check(False, "RemovePodSandbox: the pod is gone")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.NOT_FOUND, "RemovePodSandbox: the pod is gone (NOT_FOUND)")


def parse_anns(args):
    anns = {}
    for a in args:
        k, _, v = a.partition("=")
        anns[k] = v
    return anns


def create_fails(cri, args):
    want = args[-1]
    anns = parse_anns(args[:-1])
    cfg = cri.pod_config("p-bad", "loopback")
    pod_id = cri.run_pod(cfg)
    # containerd's CreateContainer only records the container; the runtime's
    # create (hako's config parse) runs in StartContainer, which fails.
    cid = cri.create(pod_id, cfg, "bad", IDLE, annotations=anns)
    try:
        cri.call("StartContainer", pb.StartContainerRequest(container_id=cid))
        check(False, "StartContainer with %s fails" % anns)
    except grpc.RpcError as e:
        check(want in e.details(), "StartContainer with %s fails: %s" % (anns, e.details()))
    s = cri.status(cid).status
    check(s.state != pb.CONTAINER_RUNNING, "the container never ran (%s)" % pb.ContainerState.Name(s.state))
    cri.call("RemoveContainer", pb.RemoveContainerRequest(container_id=cid))
    cri.teardown_pod(pod_id, [])


def pod_fails(cri, args):
    want = args[-1]
    anns = parse_anns(args[:-1])
    cfg = cri.pod_config("p-refused", os.environ.get("CRI_NETWORK", "loopback"), annotations=anns)
    try:
        pod_id = cri.run_pod(cfg)
    except grpc.RpcError as e:
        check(want in e.details(), "RunPodSandbox with %s fails: %s" % (anns, e.details()))
        return
    cri.teardown_pod(pod_id, [])
    check(False, "RunPodSandbox with %s fails (the pod ran)" % anns)


def run(cri, args):
    i = args.index("--")
    anns, cmd = parse_anns(args[:i]), args[i + 1:]
    network = os.environ.get("CRI_NETWORK", "loopback")
    cfg = cri.pod_config("p-run", network, annotations=anns)
    pod_id = cri.run_pod(cfg)
    cids = []
    try:
        cids.append(cri.create(pod_id, cfg, "c", cmd or IDLE, annotations=parse_anns(
            os.environ.get("CRI_CONTAINER_ANNOTATIONS", "").split())))
        cri.call("StartContainer", pb.StartContainerRequest(container_id=cids[0]))
        if os.environ.get("CHECK"):
            out, err, rc = cri.exec(cids[0], ["sh", "-c", os.environ["CHECK"]], timeout=30)
            sys.stdout.write(out)
            sys.stdout.write(err)
            print("exec exit code:", rc)
    finally:
        cri.teardown_pod(pod_id, cids)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    cri = Cri(sys.argv[1])
    verb, args = sys.argv[2], sys.argv[3:]
    verbs = {"pod": lambda: pod(cri, args[0]), "create-fails": lambda: create_fails(cri, args),
             "pod-fails": lambda: pod_fails(cri, args),
             "run": lambda: run(cri, args)}
    if verb not in verbs:
        raise SystemExit(__doc__)
    try:
        verbs[verb]()
    except BaseException:
        cri.cleanup()
        raise


if __name__ == "__main__":
    try:
        main()
    except grpc.RpcError as e:
        print("CRI call failed: %s: %s" % (e.code().name, e.details()), file=sys.stderr)
        sys.exit(1)
    except AssertionError as e:
        print("not ok:", e, file=sys.stderr)
        sys.exit(1)

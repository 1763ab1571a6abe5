"""Helpers for the integration tests: the test network of design.md §10, the
daemon, hgctl, and sockets that live inside the test namespace.

Every resource made here is registered for cleanup, so a failing test
still removes its namespace, interfaces and processes."""
import contextlib
import glob
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("HG_BUILD", "build"))
BIN = os.path.join(BUILD, "bin")
DAEMON_IP = "198.18.0.1"
PEER_IP = "198.18.0.2"

# The daemon's PMD on the test veth: net_af_xdp with its own XDP program
# (README, "net_af_xdp"); HG_VETH_PMD=af_packet runs the same tests over
# net_af_packet.
VETH_PMD = os.environ.get("HG_VETH_PMD", "af_xdp")


def veth_vdev(net, pmd=None, extra=""):
    """The --vdev of a daemon on the test veth's host end."""
    return f"net_{pmd or VETH_PMD}0,iface={net.host_if}{extra}"

_libc = ctypes.CDLL("libc.so.6", use_errno=True)
CLONE_NEWNET = 0x40000000


def run(*cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, capture_output=True, text=True, **kw)


class Netns:
    """A namespace with one end of a veth pair; the other end (no address)
    is for the daemon's port (veth_vdev). queues: of each end, RX and TX
    (a flow's frames come in on the queue its sender hashed it to)."""

    def __init__(self, tag, queues=1):
        self.ns = f"hgt{tag}"
        self.host_if = f"hg{tag}a"
        self.peer_if = f"hg{tag}b"
        self.close()
        run("ip", "netns", "add", self.ns)
        q = [] if queues == 1 else ["numtxqueues", str(queues), "numrxqueues", str(queues)]
        run("ip", "link", "add", self.host_if, *q, "type", "veth", "peer", "name",
            self.peer_if, *q)
        run("ip", "link", "set", self.peer_if, "netns", self.ns)
        run("ip", "link", "set", self.host_if, "up")
        # the daemon answers IPv4 only; keep the link quiet otherwise
        run("sysctl", "-qw", f"net.ipv6.conf.{self.host_if}.disable_ipv6=1", check=False)
        run("ip", "-n", self.ns, "addr", "add", f"{PEER_IP}/24", "dev", self.peer_if)
        run("ip", "-n", self.ns, "link", "set", self.peer_if, "up")
        run("ip", "-n", self.ns, "link", "set", "lo", "up")
        run("ip", "netns", "exec", self.ns, "ethtool", "-K", self.peer_if,
            "tx", "off", "tso", "off", "gso", "off")
        self.mac = open(f"/sys/class/net/{self.host_if}/address").read().strip()

    def close(self):
        run("ip", "netns", "del", self.ns, check=False)
        run("ip", "link", "del", self.host_if, check=False)

    def exec(self, *cmd, **kw):
        return run("ip", "netns", "exec", self.ns, *cmd, **kw)

    def popen(self, *cmd, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.ns, *cmd], **kw)

    def udp_counters(self):
        """The namespace's non-zero UDP counters and the host end's drop
        counters: where a datagram the daemon answered was lost."""
        snmp = self.exec("cat", "/proc/net/snmp").stdout.split("\n")
        udp = [l.split()[1:] for l in snmp if l.startswith("Udp:")]
        out = {k: int(v) for k, v in zip(*udp) if v != "0"} if len(udp) == 2 else {}
        for k in ("rx_dropped", "tx_dropped"):
            out[f"{self.host_if}.{k}"] = int(open(
                f"/sys/class/net/{self.host_if}/statistics/{k}").read())
        return out

    def socket(self, family=socket.AF_INET, type_=socket.SOCK_DGRAM, proto=0):
        """A socket created inside the namespace (setns on this thread only)."""
        here = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        there = os.open(f"/var/run/netns/{self.ns}", os.O_RDONLY)
        try:
            if _libc.setns(there, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
            return socket.socket(family, type_, proto)
        finally:
            _libc.setns(here, CLONE_NEWNET)
            os.close(here)
            os.close(there)



def summed_drops(cores):
    """The drops by reason of per-core stats (a tenant's "cores", or the
    daemon's), summed over the cores."""
    out = {}
    for c in cores:
        for k, v in c["drops"].items():
            out[k] = out.get(k, 0) + v
    return out


def tenant_drops(t):
    """A tenant's stats' drops by reason, summed over cores."""
    return summed_drops(t["cores"])

class Daemon:
    def __init__(self, tag, vdev, fp_cores=1, extra=(), lcores=None):
        self.ctl = f"/tmp/hgt{tag}.sock"
        self.app_ctl = f"/tmp/hgt{tag}.app.sock"
        self.prefix = f"hgt{tag}"
        self.log = open(f"/tmp/hgt{tag}.log", "w")
        if lcores is None:
            lcores = f"0-{fp_cores}" if fp_cores < os.cpu_count() else f"(0-{fp_cores})@0"
        vdevs = [vdev] if isinstance(vdev, str) else (vdev or [])
        port = [f"--vdev={v}" for v in vdevs]
        cmd = [os.path.join(BIN, "hourglassd"), "--no-huge", "-m", "512", "--no-pci",
               "--file-prefix", self.prefix, "--lcores", lcores, *port,
               "--", "--ip", f"{DAEMON_IP}/24", "--ctl", self.ctl,
               "--app-ctl", self.app_ctl, "--idle", "sleep",
               "--fp-cores", str(fp_cores), *extra]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while not (os.path.exists(self.ctl) and os.path.exists(self.app_ctl)):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError("hourglassd did not start:\n" + self.logtext())
            time.sleep(0.05)

    def logtext(self):
        if self.log.closed:
            return self.said
        return open(self.log.name).read()

    def rx_map(self):
        """The RX map a memif peer reads (`tenant list --json`), in a file
        of its own; its path."""
        path = f"/tmp/{self.prefix}.rxmap.json"
        with open(path, "w") as f:
            f.write(self.hgctl("tenant", "list", "--json").stdout)
        return path

    def hgctl(self, *args, check=True):
        r = run(os.path.join(BIN, "hgctl"), "--ctl", self.ctl, *args, check=False)
        if check and r.returncode != 0:
            raise AssertionError(f"hgctl {' '.join(args)}: {r.stderr}")
        return r

    def stats(self, tenant=None):
        args = ["stats", "--json"] + (["--tenant", tenant] if tenant else [])
        return json.loads(self.hgctl(*args).stdout)

    def tenant_stats(self, name):
        return self.stats(name)["tenants"][0]

    def request_counts(self, tenant):
        """What tenant's RX took in, what it sent back, and what RX shed
        because its app's ring was full (check_accounted)."""
        ts = self.tenant_stats(tenant)
        return {"rx": ts["total"]["rx"]["packets"], "tx": ts["total"]["tx"]["packets"],
                "ring_full": sum(c["drops"].get("rx_ring_full", 0) for c in ts["cores"])}

    def check_accounted(self, tenant, r, before, net=None, most=0.05):
        """Asserts of hgload's report r, `before` being request_counts(tenant)
        when the load began: every echo was byte-exact; each request the
        tenant's RX took in was answered, or shed because the app's ring
        was full (the daemon's one loss by design, when an app is off its
        CPU longer than its ring lasts: 512 slots, 25 ms at 20,000 rps, one
        scheduler hiccup on a shared 2-CPU box); every answer reached
        hgload; and what was lost, those sheds and what the link dropped
        before the daemon read it, stays under `most` of what was sent."""
        d = {}

        def settled():
            now = self.request_counts(tenant)
            d.update({k: now[k] - before[k] for k in now})
            return d["rx"] == d["tx"] + d["ring_full"] + r.get("rejected", 0)
        wait_for(settled, timeout=3)
        bridge = getattr(self, "bridge", None)
        d["link"] = r["sent"] - d["rx"]
        why = json.dumps({"load": {k: r.get(k) for k in (
            "sent", "received", "rejected", "lost", "invalid", "latency_us")},
            "tenant": d, "core": {k: v for k, v in self.core_drops().items() if v},
            "ns": net.udp_counters() if net else None,
            "bridge": bridge.drops() if bridge else None})
        assert r.get("invalid", 0) == 0, why
        assert d["rx"] == d["tx"] + d["ring_full"] + r.get("rejected", 0), why
        assert r["received"] + r.get("rejected", 0) + r["lost"] == r["sent"], why
        assert r["received"] == d["tx"], why
        assert r["lost"] <= most * r["sent"], why

    def core_drops(self):
        return summed_drops(self.stats()["cores"])

    def tenants(self):
        return {t["name"]: t for t in json.loads(self.hgctl("tenant", "list", "--json").stdout)["tenants"]}

    def echo(self, tenant, port, threads=1, cpus=None, extra=()):
        return Echo(self, tenant, port, threads, cpus, extra)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.log.closed:
            self.log.close()
            # what it said stays for the asserts; the files go
            self.said = open(self.log.name).read()
            # and a killed daemon's sockets (one that exited removed its own)
            left = [self.log.name, f"/tmp/{self.prefix}.rxmap.json"]
            if self.proc.returncode != 0:
                left += [self.ctl, self.app_ctl, getattr(self, "memif", None)]
            for f in left:
                if f and os.path.exists(f):
                    os.unlink(f)
            # a daemon that was killed leaves EAL's runtime folder
            shutil.rmtree(f"/var/run/dpdk/{self.prefix}", ignore_errors=True)
        return self.proc.returncode


def memif_daemon(tag, extra=(), mac=None, lcores=None):
    """A daemon whose port is its own memif server (--memif), on a socket
    file of mode 0600 named by d.memif; mac: the port's address (default:
    the daemon's)."""
    sock = f"/tmp/hgt{tag}.memif"
    d = Daemon(tag, None, extra=("--memif", sock, *(("--mac", mac) if mac else ()),
                                 *extra), lcores=lcores)
    d.memif = sock
    return d


def warm_up(d, port):
    """A few hundred requests to port over d's memif link. Until its cost
    is measured (16 datagrams, a 10 ms sample) a tenant's cap is the
    configured 15,000 cycles, less than one answered datagram with its
    doorbell: a test that starts at once starts it in debt after each
    datagram."""
    run("taskset", "-c", "0", os.path.join(BIN, "hgload"), "--memif", d.memif,
        "--target", f"{DAEMON_IP}:{port}", "--rate", "2000", "--duration", "0.3")


@contextlib.contextmanager
def victim_and_sink(tag, victim, sink, extra=(), mac=None, more=None):
    """A memif daemon with a victim tenant answering on port victim
    (hg-echo on CPU 0) and an RX-only sink on port sink (tenant sink0 of
    weight 0.1, hg-idle); more(d, apps) adds what else a module needs. Stops them all
    at the end, and checks that the daemon exited cleanly."""
    d = memif_daemon(tag, extra=extra, mac=mac)
    apps = []
    try:
        d.hgctl("tenant", "add", "victim", "--ports", f"{victim}-{victim}")
        # weight 0.1: a replayed flood dropped where the link left it costs
        # ~50 cycles a frame, within an equal share of the core; beyond
        # this one's it is out of budget, as the tests want it (an equal
        # share kept it funded once, and its queue never waited)
        d.hgctl("tenant", "add", "sink0", "--ports", f"{sink}-{sink}", "--weight", "0.1")
        if more:
            more(d, apps)
        apps.append(d.echo("victim", victim, cpus="0"))
        apps.append(Sink(d, "sink", sink))
        warm_up(d, victim)
        yield d
    finally:
        for a in apps:
            a.stop()
        d.hgctl("config", "set", "protection", "on", check=False)
        assert d.stop() == 0, d.logtext()
        assert "Sanitizer" not in d.logtext() and "runtime error" not in d.logtext()


# what hgload --replay says, before it attaches or sends anything, on a
# kernel that refuses a live-frames test run even to root (6.18: EPERM)
LIVE_REFUSED = "does not let a test run transmit"


# what no app may die of, whatever a test did to it or to the daemon
CRASHES = {-signal.SIGSEGV, -signal.SIGBUS, -signal.SIGABRT, -signal.SIGILL,
           -signal.SIGFPE}


def stop_proc(proc, sig=signal.SIGTERM, timeout=10):
    """Asks a child to stop (sig), kills it after timeout; its exit code.
    A child that crashed, now or before, fails the test: hg-echo's
    green threads crashed it at exit after preemptions, unseen, in
    ~15 tests, as nobody looked at how the apps ended."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode not in CRASHES or proc.returncode == -sig, \
        f"{proc.args} crashed: {signal.Signals(-proc.returncode).name}"
    return proc.returncode


# the kernel keeps a schedstat file per thread (run_delay: the wait for a CPU)
HAS_SCHEDSTAT = os.path.exists(f"/proc/{os.getpid()}/schedstat")


@contextlib.contextmanager
def cpu_hog(cpu, seconds=20):
    """A busy loop on CPU cpu (a string, as taskset takes it), at normal
    priority, for the with block; it stops by itself after seconds."""
    hog = subprocess.Popen(["taskset", "-c", cpu, sys.executable, "-c",
                            f"import time\nend = time.monotonic() + {seconds}\n"
                            "while time.monotonic() < end: pass"])
    try:
        time.sleep(0.2)
        yield hog
    finally:
        hog.kill()
        hog.wait()


class Bridge:
    """hg-memif-bridge between the test network's veth and a memif
    daemon: the namespace's sockets and raw frames reach the daemon
    through its net_memif port; rx_map: a file with the daemon's
    `tenant list --json`, for per-tenant RX queues."""

    def __init__(self, net, memif, rx_map=None):
        # DPDK speaks on stderr: a file, so that no pipe fills up
        self.log, self.said = f"/tmp/{net.ns}.bridge.log", ""
        steer = ["--rx-map", rx_map] if rx_map else []
        with open(self.log, "w") as err:
            self.proc = subprocess.Popen(
                [os.path.join(BIN, "hg-memif-bridge"),
                 "--iface", net.host_if, "--memif", memif, *steer],
                stdout=subprocess.PIPE, stderr=err, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            said = open(self.log).read()
            self.stop()
            raise RuntimeError(f"hg-memif-bridge did not start: {said}")

    def drops(self):
        """What the bridge dropped so far (it prints a line on SIGUSR1)."""
        seen = open(self.log).read().count("dropped ")
        self.proc.send_signal(signal.SIGUSR1)
        wait_for(lambda: open(self.log).read().count("dropped ") > seen, timeout=5)
        line = [l for l in open(self.log).read().splitlines() if l.startswith("dropped ")]
        return dict(kv.split("=") for kv in line[-1].split()[1:]) if line else {}

    def stop(self):
        stop_proc(self.proc)
        self.proc.stdout.close()
        if os.path.exists(self.log):
            self.said = open(self.log).read()     # for the sanitizers' verdict
            os.unlink(self.log)
        return self.proc.returncode


class Echo:
    def __init__(self, daemon, tenant, port, threads=1, cpus=None, extra=()):
        pin = ["taskset", "-c", cpus] if cpus else []
        ports = []
        for p in port if isinstance(port, (list, tuple)) else [port]:
            ports += ["--port", str(p)]
        self.proc = subprocess.Popen(
            [*pin, os.path.join(BIN, "hg-echo"), "--ctl", daemon.app_ctl, "--tenant", tenant,
             *ports, "--threads", str(threads), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        if "ready" not in line:
            self.proc.kill()
            raise RuntimeError(f"hg-echo did not start: {line}{self.proc.stdout.read()}")

    def stop(self, sig=signal.SIGTERM):
        return stop_proc(self.proc, sig)


class Sink:
    """An app (hg-idle) that binds its port and never reads: every
    datagram to it is work for RX alone (an RX-only flood). Its tenant
    is PREFIX0, as hg-idle names them."""

    def __init__(self, daemon, prefix, port, cpus="0", count=1):
        """count: tenants PREFIX0..PREFIX<count-1> on port, port + 1, ..."""
        self.proc = subprocess.Popen(
            ["taskset", "-c", cpus, os.path.join(BIN, "hg-idle"), "--ctl", daemon.app_ctl,
             "--prefix", prefix, "--count", str(count), "--first-port", str(port),
             "--seconds", "120"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        if "ready" not in line:
            self.stop()
            raise RuntimeError(f"hg-idle did not start: {line}")

    def stop(self):
        return stop_proc(self.proc)


def udp_roundtrip(sock, port, payload, tries=3, timeout=1.0):
    """Sends payload to the daemon's port; returns the reply or None."""
    sock.settimeout(timeout)
    for _ in range(tries):
        sock.sendto(payload, (DAEMON_IP, port))
        try:
            while True:
                data, src = sock.recvfrom(4096)
                if src == (DAEMON_IP, port):
                    return data
        except socket.timeout:
            continue
    return None


def fast_path_tids(d):
    """The thread ids of daemon d's fast-path cores (EAL's rte-worker-N);
    a thread that exits meanwhile is left out."""
    task, tids = f"/proc/{d.proc.pid}/task", []
    for tid in os.listdir(task):
        try:
            with open(f"{task}/{tid}/comm") as f:
                if f.read().startswith("rte-worker"):
                    tids.append(tid)
        except FileNotFoundError:
            continue
    return tids


def freeze(proc):
    """SIGSTOP, then waits until every thread of proc has stopped: kill()
    returns before a thread spinning on the other CPU stops, and one that
    had not yet served a request the test sent next (1 in 2 runs)."""
    proc.send_signal(signal.SIGSTOP)

    def stopped():
        try:
            return all(open(f).read().rsplit(")", 1)[1].split()[0] in "tT"
                       for f in glob.glob(f"/proc/{proc.pid}/task/*/stat"))
        except FileNotFoundError:       # a thread that exited meanwhile
            return False
    assert wait_for(stopped, timeout=5, step=0.001), "it did not stop"


def wait_for(pred, timeout=10.0, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()

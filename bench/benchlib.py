"""Shared pieces of the benchmark drivers: the test network and daemon
(from the integration helpers), the CPUs each role runs on, hgload runs,
tables, JSON and plots in bench/out/.

The CPUs come from the machine (--cpus LIST, by default the process's
affinity; Layout): on a 2-core machine the fast-path core gets CPU 1 to
itself and the slow path, the apps and the load generators share CPU 0;
with more CPUs each role gets its own."""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from hg import (BIN, DAEMON_IP, LIVE_REFUSED, Daemon, Netns, Sink,  # noqa: E402,F401
                memif_daemon, run)

OUT = os.path.join(HERE, "out")
SATURATED = 0.95    # a fast-path core busier than this is saturated


def _stopped(signum, frame):
    """A bench stopped by timeout(1) or kill unwinds like ^C: its daemons,
    apps and namespaces are removed by the with-blocks on the way out."""
    raise SystemExit(128 + signum)


signal.signal(signal.SIGTERM, _stopped)
# a bench's rows appear as they are measured, also through a pipe
sys.stdout.reconfigure(line_buffering=True)
_T0 = time.time()
_RUNS = [0]


def progress(loads):
    """One line on stderr per run of loads: how far the bench is, so that
    a bench of minutes is never silent."""
    _RUNS[0] += 1
    desc = ", ".join((f"replay {l.get('rate')} frames/s" if l.get("replay") else
                      "blast" if l.get("blast") else f"{l.get('rate')} rps") +
                     f" -> :{l.get('port')}" for l in loads)
    print(f"  [{time.time() - _T0:6.0f} s] run {_RUNS[0]}: {desc}, "
          f"{max(l.get('duration', 0) for l in loads)} s", file=sys.stderr, flush=True)


def cpu_list(text):
    """'0-3,6' -> [0, 1, 2, 3, 6]."""
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)


def cpu_str(cpus):
    return ",".join(str(c) for c in cpus)


class Layout:
    """Which CPUs each role of a bench runs on: the slow path, each
    fast-path core, the apps, the clients (hgload's senders and receiver,
    the kernel baselines). With as many CPUs as fast-path cores + 1:
    the fast-path cores on their own, everything else on the first CPU
    (the 2-core box's layout); with one more, the apps get their own;
    with two more or beyond, the slow path too, and the clients the rest."""

    def __init__(self, cpus=None, fp_cores=1):
        self.set(cpus or sorted(os.sched_getaffinity(0)), fp_cores)

    def set(self, cpus, fp_cores=1):
        if len(cpus) < fp_cores + 1:
            raise SystemExit(f"--cpus {cpu_str(cpus)}: {fp_cores} fast-path core(s) "
                             "need that many CPUs and one more")
        self.cpus, self.fp = list(cpus), list(cpus[1:1 + fp_cores])
        rest = [cpus[0]] + list(cpus[1 + fp_cores:])
        if len(rest) == 1:
            self.slow = self.apps = self.clients = rest
        elif len(rest) == 2:
            self.slow, self.apps, self.clients = rest[:1], rest[1:], rest[:1]
        else:
            self.slow, self.apps, self.clients = rest[:1], rest[1:2], rest[2:]

    @property
    def app_cpus(self):
        return cpu_str(self.apps)

    @property
    def client_cpus(self):
        return cpu_str(self.clients)

    def lcores(self):
        """DPDK's --lcores for the daemon: lcore 0 (the slow path) and
        one per fast-path core, each on its CPU."""
        return ",".join(f"{i}@{c}" for i, c in enumerate(self.slow[:1] + self.fp))

    def as_dict(self):
        return {"cpus": self.cpus, "slow_path": self.slow, "fast_path": self.fp,
                "apps": self.apps, "clients": self.clients}

    def describe(self):
        return (f"cpus: slow path {cpu_str(self.slow)}, fast path {cpu_str(self.fp)}, "
                f"apps {self.app_cpus}, clients {self.client_cpus}")


CPUS = Layout()


def argparser(doc):
    """A bench's argument parser, with --cpus."""
    ap = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    ap.add_argument("--cpus", type=cpu_list, default=None,
                    help="CPUs the bench may use, e.g. 0-3 (default: this "
                         "process's affinity); roles are assigned from them")
    return ap


def use_cpus(args, fp_cores=1):
    """Applies --cpus and prints the roles' CPUs at the top of the output."""
    CPUS.set(args.cpus or sorted(os.sched_getaffinity(0)), fp_cores)
    print(CPUS.describe(), flush=True)


def cpu_steal_ms():
    """Each CPU's steal time so far, in ms (/proc/stat, 10 ms ticks): the
    time the hypervisor ran something else while this VM's vCPU was ready.
    On a VM it is a stall that no thread inside can see or avoid, even at
    SCHED_FIFO 99; a step's tail measured across one is the host's."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            w = line.split()
            if w[0].startswith("cpu") and w[0] != "cpu":
                out[int(w[0][3:])] = int(w[8]) * 1000 // os.sysconf("SC_CLK_TCK")
    return out


class Bench:
    """A test network and one daemon with --idle poll; closes both.
    memif: no network, the daemon's port is net_memif (d.memif) and
    run() sends every load through one hgload --memif."""

    def __init__(self, tag, extra=(), start_daemon=True, memif=False):
        os.makedirs(OUT, exist_ok=True)
        self.net = None if memif else Netns(f"{os.getpid() % 1000}{tag}")
        self.daemons, self.apps = [], []
        self.d = None
        self.rx_map = None      # memif: the daemon's RX map (hgload --rx-map)
        self.steal_ms = {}      # per CPU, over the last run_busy
        try:
            if memif:
                self.d = memif_daemon(f"{os.getpid() % 10000}{tag}",
                                      extra=("--idle", "poll", *extra),
                                      lcores=CPUS.lcores())
                self.daemons.append(self.d)
            elif start_daemon:
                self.d = self.daemon(self.net.ns[3:], extra)
        except Exception:
            self.close()
            raise

    def run_busy(self, loads, duration):
        """run(loads), and the fraction of the time the daemon's first
        fast-path core was busy while they ran (None without a daemon:
        the kernel's side). Measured by a thread beside the run over its
        middle, from min(0.25 s, duration / 4) after the loads start to as
        long before they end: a run lasts longer than duration (start-up,
        and a credit client's last replies after its load and the flood
        have stopped), and busy cycles over duration read 1.22 in
        bench/feedback's rows. Only a step at SATURATED or above measures
        contention."""
        s0 = cpu_steal_ms()
        if self.d is None:
            res = self.run(loads)
            self.steal_ms = {c: v - s0[c] for c, v in cpu_steal_ms().items()}
            return res, None
        edge, snaps = min(0.25, duration / 4), []

        def sample():
            # at the loads' priority: a sample (a fork, hgctl, its JSON,
            # ~1.5 ms of CPU) holds a measured client or app off CPU 0
            # for up to 1.3 ms, twice a run (perf sched), which reaches
            # a p99.9 but not a p99 (BENCHMARKS.md). In the idle class it
            # starved behind the apps of a saturated CPU 0, came after
            # the flood had ended and read a busy core as 0.29-0.93.
            # The daemon's TSC dates each sample's counters.
            for wait in (edge, duration - 2 * edge):
                time.sleep(wait)
                snaps.append(self.d.stats())
        th = threading.Thread(target=sample)
        th.start()
        try:
            res = self.run(loads)
        finally:
            th.join()
        self.steal_ms = {c: v - s0[c] for c, v in cpu_steal_ms().items()}
        st0, st1 = snaps
        return res, (st1["cores"][0]["busy_cycles"] - st0["cores"][0]["busy_cycles"]) / \
            (st1["tsc"] - st0["tsc"])

    def run(self, loads):
        """The loads at once; their JSON results in order."""
        if self.net is None:
            return run_memif(self.d.memif, loads, rx_map=self.rx_map)
        return run_loads(self.net, loads)

    def daemon(self, tag, extra=(), vdev=None, lcores=None):
        d = Daemon(tag, vdev or f"net_af_packet0,iface={self.net.host_if}",
                   extra=("--idle", "poll", *extra), lcores=lcores or CPUS.lcores())
        self.daemons.append(d)
        return d

    def tenant(self, name, port, threads=1, d=None, rt=False, echo=(), **opts):
        """Adds a tenant and its hg-echo (echo: more of its options); rt:
        the app runs SCHED_FIFO."""
        d = d or self.d
        args = ["tenant", "add", name, "--ports", f"{port}-{port}"]
        for k, v in opts.items():
            args += [f"--{k.replace('_', '-')}", str(v)]
        d.hgctl(*args)
        e = d.echo(name, port, threads, cpus=CPUS.app_cpus, extra=echo)
        if rt:
            subprocess.run(["chrt", "-f", "-a", "-p", "50", str(e.proc.pid)], check=True)
        self.apps.append(e)

    def close(self):
        """Stops the apps, the daemons and the network. A daemon that did
        not exit cleanly fails the bench, after the cleanup: its figures
        are not to be kept (the bench never looked before, and one
        crash at exit would have gone unseen)."""
        for a in self.apps:
            a.stop()
        died = [(d, d.stop()) for d in self.daemons]
        if self.net:
            self.net.close()
        for d, rc in died:
            if rc != 0:
                tail = "\n".join(d.said.splitlines()[-10:])
                raise RuntimeError(f"hourglassd ({d.prefix}) exited with {rc}; "
                                   f"its last lines:\n{tail}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def hgload_args(port, rate, duration, flows=1, size=64, workload="fixed:0",
                mode="none", slo_us=None, blast=False, replay=False, bounce=False):
    """One load's options. mode: none, rpc (RPC header, credits ignored)
    or credits (obeyed); blast: a flood of prebuilt frames from a
    SCHED_IDLE sender, counted, not timed (rate unused); replay: a blast
    the kernel replays out of the link (hgload --replay), rate frames/s;
    bounce: answers the link sends back as requests (hgload --bounce),
    rate the top-up's."""
    extra = {"none": [], "rpc": ["--rpc"], "credits": ["--credits"]}[mode]
    if replay or blast or bounce:
        extra += ["--replay" if replay else "--bounce" if bounce else "--blast"]
    if mode != "none":
        size = max(size, 64)
    if slo_us:
        extra += ["--slo-us", str(slo_us)]
    return ["--target", f"{DAEMON_IP}:{port}", "--rate", str(rate),
            "--duration", str(duration), "--flows", str(flows),
            "--size", str(size), "--workload", workload, "--timeout-ms", "500",
            "--json", *extra]


def hgload_cmd(rt=False, nice=0, cpus=None, **load):
    """rt: the client runs SCHED_FIFO, so that its own latency on the
    shared CPU stays small next to what the datapath does; nice: its nice
    level; cpus: where it runs (default the clients' CPUs)."""
    prio = ["chrt", "-f", "50"] if rt else ["nice", "-n", str(nice)] if nice else []
    return [*prio, "taskset", "-c", cpus or CPUS.client_cpus, os.path.join(BIN, "hgload"),
            *hgload_args(**load)]


def live_frames_refused():
    """What hgload --replay says where the kernel refuses a live-frames
    test run (it asks before it attaches or sends anything), or None. Asked
    in a namespace of its own with only a loopback: a kernel that allows
    it gets as far as the target's MAC, which is not there."""
    r = run("unshare", "-n", "sh", "-c",
            f"ip link set lo up && ip addr add 198.18.0.2/24 dev lo && "
            f"{os.path.join(BIN, 'hgload')} --target {DAEMON_IP}:9 --replay --rate 1000 "
            f"--duration 0.05", check=False)
    return r.stderr.strip() if LIVE_REFUSED in r.stderr else None


def run_memif(memif, loads, cpus=None, rx_map=None, extra=()):
    """The loads in one hgload over its own memif port (--and between
    them), as clients behind one NIC; rt: that load's sender and the
    receiver run SCHED_FIFO; rx_map: steer by the daemon's RX map (per-
    tenant RX queues); extra: more of the first load's options. Returns
    their JSON results in order."""
    progress(loads)
    cmd = ["taskset", "-c", cpus or CPUS.client_cpus, os.path.join(BIN, "hgload"),
           "--memif", memif, *(["--rx-map", rx_map] if rx_map else []), *extra]
    for i, l in enumerate(loads):
        l = dict(l)
        rt = l.pop("rt", False)
        cmd += (["--and"] if i else []) + hgload_args(**l) + (["--rt"] if rt else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"hgload exited {r.returncode}: {r.stderr.strip()}")
    res = json.loads(r.stdout)
    res = res if isinstance(res, list) else [res]
    # an answer no request of ours asked for (a duplicate, a stranger's):
    # a figure built on such a run is suspect, say so where it is printed
    for x in res:
        if x.get("invalid"):
            print(f"  warning: {x['invalid']} invalid answers to {x.get('target')}",
                  flush=True)
    return res


def run_loads(net, loads):
    """Runs hgloads at once (dicts of hgload_cmd's arguments, plus "net" to
    send from another namespace); returns their JSON results in order."""
    progress(loads)
    procs = []
    for l in loads:
        l = dict(l)
        procs.append(l.pop("net", net).popen(*hgload_cmd(**l), stdout=subprocess.PIPE,
                                              text=True))
    return [json.loads(p.communicate(timeout=600)[0]) for p in procs]


def save(name, data):
    """bench/out/NAME.json; a dict gets the roles' CPUs under "cpus"."""
    path = os.path.join(OUT, f"{name}.json")
    if isinstance(data, dict):
        data = {**data, "cpus": CPUS.as_dict()}
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
    return path


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print("(matplotlib missing: no plot)")
        return None

"""The daemon on net_memif: a DPDK peer on the same host, no
kernel in the path. dpdk-testpmd, as the memif client, floods a tenant's
port in txonly mode (it does not read its receive ring, so the answers
are counted at the daemon's SCHED); hgload --memif, with a memif port of
its own, drives hg-echo and checks every answer."""
import json
import os
import re
import shutil
import subprocess

import pytest

from hg import BIN, DAEMON_IP, PEER_IP, memif_daemon

TESTPMD = "dpdk-testpmd"


@pytest.fixture(scope="module")
def mdaemon():
    d = memif_daemon(f"{os.getpid() % 10000}mf")
    yield d
    assert d.stop() == 0, d.logtext()
    assert "Sanitizer" not in d.logtext() and "runtime error" not in d.logtext()


def daemon_mac(d):
    m = re.search(r"port memif \(.*\) up, .* mac ([0-9A-F:]{17})", d.logtext())
    assert m, d.logtext()
    return m.group(1)


def run_testpmd_txonly(d, port, seconds):
    """testpmd as the memif client, on CPU 0 (the fast path has CPU 1),
    sending 64-byte UDP datagrams to port for about `seconds`."""
    prefix = f"tp{os.getpid() % 10000}"
    cmd = ["timeout", "-s", "INT", str(seconds), TESTPMD, "--no-huge", "-m", "512",
           "--no-pci", "--no-shconf", "--file-prefix", prefix, "--lcores", "0@0,1@0",
           f"--vdev=net_memif0,role=client,socket={d.memif},socket-abstract=no", "--",
           "--forward-mode=txonly", f"--tx-ip={PEER_IP},{DAEMON_IP}",
           f"--tx-udp=9,{port}", f"--eth-peer=0,{daemon_mac(d)}", "--txpkts=64",
           "--nb-cores=1", "--total-num-mbufs=16384",
           # with a stats period testpmd runs until the signal, not until
           # its standard input closes
           "--stats-period=1"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30)
    finally:
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
    sent = [int(x) for x in re.findall(r"TX-packets:\s+(\d+)", r.stdout)]
    assert sent, r.stdout + r.stderr
    return max(sent)


def test_memif_peer_is_served_without_the_kernel(mdaemon, cleanup):
    d = mdaemon
    d.hgctl("tenant", "add", "mf", "--ports", "7800-7800")
    cleanup.append(d.echo("mf", 7800, threads=1, cpus="0", extra=("--burst", "32")))
    sent = run_testpmd_txonly(d, 7800, 3)
    t = d.tenant_stats("mf")["total"]
    assert sent > 10000, sent
    # the daemon took the peer's datagrams off the memif ring ...
    assert t["rx"]["packets"] > 10000, t
    # ... and answered a good share of them (the app shares CPU 0 with
    # testpmd's busy loop, so not all), at its own cost per datagram
    assert t["sched"]["packets"] > 1000, t
    assert t["rx"]["cycles"] / t["rx"]["packets"] < 5000, t


def hgload_memif(d, port, *args):
    r = subprocess.run([os.path.join(BIN, "hgload"), "--memif", d.memif,
                        "--target", f"{DAEMON_IP}:{port}", "--json", *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("mode", [(), ("--credits", "--size", "64")], ids=["raw", "credits"])
def test_hgload_over_memif_every_request_answered(mdaemon, cleanup, mode):
    """hgload's own memif port: the same workloads and
    report as over sockets, frames built by hgload, ARP answered."""
    d = mdaemon
    name, port = ("mr", 7810) if not mode else ("mc", 7820)
    # the echo's threads share CPU 0 with hgload: at the default drop line
    # (ddrop-us 100) one scheduler slice rejects 6-11% of the requests.
    # Overload rejects are test_credits' subject; at 5 ms: 0.1-0.8%.
    rpc = ["--rpc-ports", f"{port}-{port}", "--dt-us", "1000", "--ddrop-us", "5000"]
    d.hgctl("tenant", "add", name, "--ports", f"{port}-{port}", *(rpc if mode else []))
    cleanup.append(d.echo(name, port, threads=2, cpus="0", extra=("--burst", "32")))
    before = d.request_counts(name)
    r = hgload_memif(d, port, "--rate", "20000", "--duration", "2", "--flows", "8",
                     "--workload", "fixed:1000", "--timeout-ms", "2000", *mode)
    assert r["sent"] > 30000, r
    d.check_accounted(name, r, before)
    assert r["received"] > 0.9 * r["sent"], r
    assert d.tenant_stats(name)["total"]["rx"]["packets"] >= r["sent"]


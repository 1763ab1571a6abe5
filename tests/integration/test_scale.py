"""1,000+ tenants: slots past every old limit (32 tenants in the
masks, 255 in a byte), idle tenants with attached apps, a reply larger
than a request may be, an app that sends first among many idle tenants,
and deleting them all at once."""
import ctypes as C
import os
import socket
import struct
import subprocess
import time

import pytest

from hg import BIN, DAEMON_IP, PEER_IP, Daemon, udp_roundtrip, veth_vdev, wait_for
from test_client import Addr, attach, lib  # noqa: F401  (lib is a fixture)

N = 1100
BASE_PORT = 30000


@pytest.fixture(scope="module")
def big(net):
    d = Daemon(net.ns[3:] + "s", veth_vdev(net),
               extra=("--max-app-conns", "4096", "--max-app-conns-per-uid", "4096"))
    idle = None
    try:
        for i in range(N):
            d.hgctl("tenant", "add", f"t{i}", "--ports", f"{BASE_PORT + i}-{BASE_PORT + i}")
        # every tenant but the last two gets an idle app with a context
        idle = subprocess.Popen(
            [os.path.join(BIN, "hg-idle"), "--ctl", d.app_ctl, "--prefix", "t",
             "--count", str(N - 2), "--first-port", str(BASE_PORT), "--seconds", "300"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = idle.stdout.readline()
        assert "ready" in line, line + idle.stdout.read()
        yield d, idle
    finally:
        if idle is not None and idle.poll() is None:
            idle.terminate()
            idle.wait(30)
        rc = d.stop()
        assert rc == 0, d.logtext()
        assert "Sanitizer" not in d.logtext() and "runtime error" not in d.logtext()


def test_the_last_of_1100_tenants_answers(net, big):
    d, _ = big
    last = N - 1
    e = d.echo(f"t{last}", BASE_PORT + last)
    try:
        s = net.socket()
        for i in range(20):
            payload = f"req{i}".encode()
            assert udp_roundtrip(s, BASE_PORT + last, payload) == payload
        t = d.tenant_stats(f"t{last}")
        assert t["total"]["sched"]["packets"] >= 20
    finally:
        e.stop()


def test_stats_over_every_tenant_is_one_reply(big):
    d, _ = big
    r = d.hgctl("stats", "--json")
    assert len(r.stdout) > 256 * 1024, "the reply is larger than a request may be"
    names = {t["name"] for t in __import__("json").loads(r.stdout)["tenants"]}
    assert len(names) == N


def test_an_app_that_sends_first_is_found_among_idle_tenants(lib, net, big):  # noqa: F811
    """No RX turns the tenant hot: the cold sweep must stock its fill ring
    and take its datagram."""
    d, _ = big
    name = f"t{N - 2}"
    app = attach(lib, d, name)
    try:
        ctx = lib.hg_ctx_open(app)
        assert ctx
        assert lib.hg_bind(app, BASE_PORT + N - 2) == 0
        s = net.socket()
        s.bind((PEER_IP, 0))
        s.settimeout(2)
        to = Addr(struct.unpack("=I", socket.inet_aton(PEER_IP))[0],
                  socket.htons(s.getsockname()[1]))
        t0 = time.monotonic()
        assert wait_for(lambda: lib.hg_sendto(ctx, socket.htons(BASE_PORT + N - 2),
                                              C.byref(to), b"first", 5) == 0, timeout=3)
        assert s.recvfrom(100) == (b"first", (DAEMON_IP, BASE_PORT + N - 2))
        assert time.monotonic() - t0 < 2
    finally:
        lib.hg_detach(app)


def test_deleting_every_tenant_releases_every_slot(big):
    d, idle = big
    idle.terminate()
    idle.wait(30)
    assert wait_for(lambda: all(t["apps"] == 0 for t in d.tenants().values()), timeout=20)
    refused = 0
    for i in range(N):
        r = d.hgctl("tenant", "del", f"t{i}", check=False)
        if r.returncode != 0:
            assert "retry" in r.stderr, r.stderr
            refused += 1
            time.sleep(0.05)
            d.hgctl("tenant", "del", f"t{i}")
    assert wait_for(lambda: d.tenants() == {}, timeout=20)
    # every slot is free again: the adds take slots from the start
    for i in range(40):
        d.hgctl("tenant", "add", f"again{i}", "--ports", f"{BASE_PORT + i}-{BASE_PORT + i}")
    assert len(d.tenants()) == 40

"""Request steering (Synergy) end to end: hg-echo on green threads, the
daemon as the timer, plain Python clients in the test namespace."""
import json
import os
import signal
import socket
import struct
import subprocess
import time

import pytest

from hg import BIN, DAEMON_IP, wait_for

MAGIC = 0x48475752


def request(seq, service_ns, tail=b""):
    return struct.pack("!IBBHIIQQ", MAGIC, 1, 0, 0, service_ns, 0, seq, 0) + tail


def steering(daemon, name):
    return daemon.tenants()[name]["steering"]


def exchange(sock, port, reqs, timeout=15.0):
    """Sends every request, then collects replies; returns {seq: [replies]}."""
    for r in reqs:
        sock.sendto(r, (DAEMON_IP, port))
    got = {}
    sock.settimeout(0.5)
    deadline = time.time() + timeout
    while sum(len(v) for v in got.values()) < len(reqs) and time.time() < deadline:
        try:
            data, _ = sock.recvfrom(4096)
        except socket.timeout:
            continue
        got.setdefault(struct.unpack("!Q", data[16:24])[0], []).append(data)
    return got


CONFIGS = {
    "all_on": [],
    "jsq": ["--steer", "jsq"],
    "no_steal": ["--steal", "off"],
    "no_wait_queue": ["--wait-queue", "off"],
    "no_preempt": ["--preempt", "off"],
    "fixed_quantum": ["--quantum-us", "20"],
    "preempt_always": ["--preempt", "always", "--quantum-us", "50"],
}


@pytest.mark.parametrize("config", CONFIGS)
def test_mixed_requests_complete_exactly_once(net, daemon, cleanup, config):
    name = f"mix{list(CONFIGS).index(config)}"
    port = 8600 + list(CONFIGS).index(config)
    daemon.hgctl("tenant", "add", name, "--ports", f"{port}-{port}")
    if CONFIGS[config]:
        daemon.hgctl("tenant", "set", name, *CONFIGS[config])
    cleanup.append(daemon.echo(name, port, threads=2))
    socks = [net.socket() for _ in range(4)]
    reqs = {}
    for i in range(240):
        tail = os.urandom(1 + i % 200)
        reqs[i] = request(i, 1_000_000 if i % 10 == 0 else 20_000, tail)
    got = {}
    for k, s in enumerate(socks):        # four flows, interleaved on the wire
        part = [reqs[i] for i in reqs if i % 4 == k]
        for seq, replies in exchange(s, port, part).items():
            got.setdefault(seq, []).extend(replies)
        s.close()
    assert sorted(got) == list(range(240)), f"missing {set(range(240)) - set(got)}"
    for seq, replies in got.items():
        assert replies == [reqs[seq]], f"request {seq}: {len(replies)} replies"


def test_no_preemption_for_long_requests_one_at_a_time(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "solo_long", "--ports", "8620-8620")
    cleanup.append(daemon.echo("solo_long", 8620))
    before = steering(daemon, "solo_long")["preemptions"]
    s = net.socket()
    got = {}
    for i in range(15):
        got.update(exchange(s, 8620, [request(i, 3_000_000)], timeout=5))
    s.close()
    assert sorted(got) == list(range(15))
    assert steering(daemon, "solo_long")["preemptions"] == before


def test_shorts_behind_a_long_one_preempt_it(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "hol", "--ports", "8621-8621")
    cleanup.append(daemon.echo("hol", 8621))
    s = net.socket()
    s.sendto(request(0, 50_000_000), (DAEMON_IP, 8621))      # 50 ms
    time.sleep(0.005)
    order = []
    for i in range(1, 11):
        s.sendto(request(i, 2_000), (DAEMON_IP, 8621))
    s.settimeout(5)
    while len(order) < 11:
        data, _ = s.recvfrom(4096)
        order.append(struct.unpack("!Q", data[16:24])[0])
    s.close()
    assert order[-1] == 0, f"the long request should finish last: {order}"
    assert steering(daemon, "hol")["preemptions"] > 0


def test_killed_worker_loses_no_other_tenants_requests(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "calm", "--ports", "8630-8630")
    daemon.hgctl("tenant", "add", "crash", "--ports", "8631-8631")
    cleanup.append(daemon.echo("calm", 8630, threads=2))
    crash = daemon.echo("crash", 8631, threads=2)
    cleanup.append(crash)
    calm = net.popen(os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:8630",
                     "--rate", "1000", "--duration", "3", "--workload", "high",
                     "--timeout-ms", "2000", "--json", stdout=subprocess.PIPE, text=True)
    wild = net.popen(os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:8631",
                     "--rate", "2000", "--duration", "3", "--workload", "extreme",
                     "--timeout-ms", "200", stdout=subprocess.DEVNULL)
    time.sleep(1.2)
    os.kill(crash.proc.pid, signal.SIGKILL)       # mid-request, wait queue in use
    out = json.loads(calm.communicate(timeout=30)[0])
    wild.wait(30)
    calm_st = daemon.tenant_stats("calm")
    assert out["lost"] == 0 and out["invalid"] == 0, json.dumps(calm_st["cores"][0]["drops"]) + json.dumps(daemon.core_drops())
    assert wait_for(lambda: daemon.tenants()["crash"]["apps"] == 0)
    assert daemon.proc.poll() is None


def test_steering_settings_show_and_validate(daemon):
    daemon.hgctl("tenant", "add", "knobs", "--ports", "8640-8640")
    daemon.hgctl("tenant", "set", "knobs", "--steer", "jsq", "--quantum-factor", "3",
                 "--congested-factor", "20", "--thresh-wqd-us", "100",
                 "--steal-threshold", "4", "--preempt", "off", "--wait-queue", "off",
                 "--steal", "off", "--quantum-us", "15")
    t = daemon.tenants()["knobs"]
    got = {k: t[k] for k in ("steer", "quantum-factor", "congested-factor", "thresh-wqd-us",
                             "steal-threshold", "preempt", "wait-queue", "steal", "quantum-us")}
    assert got == {"steer": "jsq", "quantum-factor": 3.0, "congested-factor": 20.0,
                   "thresh-wqd-us": 100, "steal-threshold": 4, "preempt": "off",
                   "wait-queue": "off", "steal": "off", "quantum-us": 15}
    assert t["steering"] == {"preemptions": 0, "congested_apps": 0}

"""Core allocation (design.md §5): idle workers park on the daemon's
word and are woken on delay; a load step loses nothing; static never
parks; a killed app's parked workers are reclaimed."""
import json
import os
import signal
import struct
import time

import pytest

from hg import DAEMON_IP, HAS_SCHEDSTAT, cpu_hog, udp_roundtrip, wait_for


def workers(daemon, name):
    return daemon.tenant_stats(name)["workers"]


def load(link, port, rate, seconds):
    """An open-loop run on a raw port: every datagram must come back."""
    p = link.hgload(port, "--rate", str(rate), "--duration", str(seconds), "--flows", "8",
                    "--workload", "exp:20000", "--timeout-ms", "2000", "--json")
    return json.loads(p.communicate(timeout=60)[0])


def test_idle_workers_park_and_a_load_step_wakes_them(link, cleanup):
    daemon = link.daemon
    daemon.hgctl("tenant", "add", "cs", "--ports", "9100-9100")
    cleanup.append(daemon.echo("cs", 9100, threads=4))
    assert wait_for(lambda: workers(daemon, "cs")["parked"] >= 3, 10), workers(daemon, "cs")
    w0 = workers(daemon, "cs")
    assert w0["policy"] == "coresync" and w0["parks"] >= 3
    low = load(link, 9100, 200, 1)
    high = load(link, 9100, 4000, 2)
    w1 = workers(daemon, "cs")
    for r in (low, high):
        assert r["sent"] > 0 and r["received"] == r["sent"] and r["lost"] == 0, r
    assert w1["wakes_delay"] + w1["wakes_self"] > w0["wakes_delay"] + w0["wakes_self"], w1
    # the step woke workers beyond the one a delivery rings
    assert w1["wakes_delay"] > w0["wakes_delay"], (w0, w1)
    assert wait_for(lambda: workers(daemon, "cs")["parked"] >= 3, 10), "idle again: parked"


def test_static_never_parks_and_a_live_change_parks(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "st", "--ports", "9110-9110", "--policy", "static")
    cleanup.append(daemon.echo("st", 9110, threads=2))
    time.sleep(0.5)
    w = workers(daemon, "st")
    assert w["policy"] == "static" and w["parked"] == 0 and w["active"] == 2, w
    s = net.socket()
    assert udp_roundtrip(s, 9110, b"static") == b"static"
    daemon.hgctl("tenant", "set", "st", "--policy", "shenango")
    # all but the last: it stays running, asleep on its doorbell, so that
    # a delivery wakes it without waiting for the daemon's delay check
    assert wait_for(lambda: workers(daemon, "st")["parked"] == 1, 10), workers(daemon, "st")
    time.sleep(0.3)
    assert workers(daemon, "st")["active"] == 1, workers(daemon, "st")
    assert udp_roundtrip(s, 9110, b"parked") == b"parked", "a delivery wakes the worker"
    daemon.hgctl("tenant", "set", "st", "--policy", "static")
    assert wait_for(lambda: workers(daemon, "st")["parked"] == 0, 10), \
        ("made static: every worker runs again", workers(daemon, "st"))
    assert udp_roundtrip(s, 9110, b"again") == b"again"
    s.close()


def test_killed_app_with_parked_workers_is_reclaimed(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "kp", "--ports", "9120-9120", "--rpc-ports", "9120-9120")
    e = daemon.echo("kp", 9120, threads=3)
    cleanup.append(e)
    assert wait_for(lambda: workers(daemon, "kp")["parked"] >= 2, 10), workers(daemon, "kp")
    e.proc.send_signal(signal.SIGKILL)
    e.proc.wait()
    assert wait_for(lambda: daemon.tenants()["kp"]["apps"] == 0, 10)
    w = workers(daemon, "kp")
    assert w["parked"] == 0 and w["active"] == 0, w
    # the next app's contexts run and park afresh
    cleanup.append(daemon.echo("kp", 9120, threads=2))
    s = net.socket()
    from test_credits import rpc_request, recv_answer
    s.settimeout(3)
    s.sendto(rpc_request(1, 1, 1000), (DAEMON_IP, 9120))
    assert recv_answer(s)[8] == 1
    s.close()
    assert wait_for(lambda: workers(daemon, "kp")["parked"] >= 1, 10), workers(daemon, "kp")


def test_stats_show_credits_and_cpu(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "cc", "--ports", "9130-9130", "--rpc-ports", "9130-9130",
                 "--coresync-r", "20", "--poll-us", "50", "--core-delay-us", "5")
    cleanup.append(daemon.echo("cc", 9130, threads=2))
    out = daemon.hgctl("stats", "--tenant", "cc").stdout
    assert "workers (coresync)" in out and "core credits: proposed" in out, out
    assert "waiting for a CPU" in out, out
    w = workers(daemon, "cc")
    for k in ("credits_prop", "credits_oc", "credits_target", "cpu_ns", "cpu_util",
              "cpu_wait_ns", "cpu_wait_util", "revocations", "overloaded"):
        assert k in w, w
    assert w["credits_target"] == 20 * w["active"]
    assert daemon.hgctl("tenant", "get", "cc", "poll-us").stdout.strip().endswith("50")


@pytest.mark.skipif(not HAS_SCHEDSTAT, reason="the kernel keeps no schedstats")
def test_stats_show_how_long_the_apps_waited_for_a_cpu(net, daemon, cleanup):
    """An app that shares its CPU with a busy process waits, runnable,
    for it: the tenant's cpu_wait_ns grows by a good part of the work it
    was asked to do, beside its CPU time."""
    cpu = str(min(os.sched_getaffinity(0)))
    daemon.hgctl("tenant", "add", "cw", "--ports", "9140-9140")
    cleanup.append(daemon.echo("cw", 9140, cpus=cpu))
    s = net.socket()
    assert udp_roundtrip(s, 9140, b"up", timeout=5) == b"up"
    before = workers(daemon, "cw")
    work = struct.pack("!IBBHIIQQ", 0x48475752, 1, 0, 0, 3_000_000, 0, 1, 0)
    try:
        with cpu_hog(cpu):
            for _ in range(60):     # 180 ms of work asked
                assert udp_roundtrip(s, 9140, work, tries=1, timeout=5) == work
    finally:
        s.close()
    after = workers(daemon, "cw")
    waited = after["cpu_wait_ns"] - before["cpu_wait_ns"]
    assert after["cpu_ns"] - before["cpu_ns"] >= 50_000_000, (before, after)
    assert waited >= 30_000_000, (before, after)

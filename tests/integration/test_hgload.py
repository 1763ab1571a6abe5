"""hgload against hg-echo: the JSON it promises, per request type."""
import json
import os
import signal

import pytest

from hg import BIN, DAEMON_IP, HAS_SCHEDSTAT, cpu_hog, freeze, wait_for


def hgload(net, *args, check=True):
    return net.exec(os.path.join(BIN, "hgload"), *args, check=check)


def test_mixed_workload_json(link, cleanup):
    daemon = link.daemon
    daemon.hgctl("tenant", "add", "load", "--ports", "7950-7950")
    cleanup.append(daemon.echo("load", 7950, threads=2))
    p = link.hgload(7950, "--rate", "400", "--duration", "1", "--flows", "8", "--size",
                    "100", "--workload", "mix:slow:200000:50,fast:0:50", "--json")
    out = json.loads(p.communicate(timeout=60)[0])
    assert out["sent"] > 300 and out["lost"] == 0 and out["received"] == out["sent"]
    assert out["invalid"] == 0 and out["send_errors"] == 0
    slow, fast = out["types"]
    assert (slow["name"], slow["service_ns"], fast["name"]) == ("slow", 200000, "fast")
    assert slow["sent"] + fast["sent"] == out["sent"]
    assert slow["latency_us"]["p50"] >= 200, "served after 200 us of work"
    assert slow["slowdown"]["p999"] >= 1.0 and fast["slowdown"]["p999"] is None
    assert 0 < out["latency_us"]["p50"] <= out["latency_us"]["p99"] <= out["latency_us"]["p999"]
    human = link.hgload(7950, "--rate", "200", "--duration", "0.3",
                        "--workload", "high").communicate(timeout=60)[0]
    assert "short" in human and "long" in human and "p99.9 us" in human


def test_two_loads_at_once_are_reported_apart(link, cleanup):
    """--and runs another load at once (over memif, through the
    same port); each gets its own sender, answers and report, in order."""
    daemon = link.daemon
    daemon.hgctl("tenant", "add", "la", "--ports", "7960-7960")
    daemon.hgctl("tenant", "add", "lb", "--ports", "7970-7970")
    cleanup.append(daemon.echo("la", 7960))
    cleanup.append(daemon.echo("lb", 7970, threads=2))
    p = link.hgload(7960, "--rate", "300", "--duration", "1", "--json", "--size", "80",
                    "--and", "--target", f"{DAEMON_IP}:7970", "--rate", "900",
                    "--duration", "1", "--flows", "4", "--rpc")
    a, b = json.loads(p.communicate(timeout=60)[0])
    assert (a["target"], b["target"]) == (f"{DAEMON_IP}:7960", f"{DAEMON_IP}:7970")
    assert (a["flows"], a["size"], b["flows"], b["mode"]) == (1, 80, 4, "rpc")
    for r, rate in ((a, 300), (b, 900)):
        assert 0.7 * rate < r["sent"] < 1.3 * rate, r
        assert r["received"] == r["sent"] and r["lost"] == 0 and r["invalid"] == 0, r
    # one receiver reads for both: its wait is each load's
    assert a["receiver_wait_s"] == b["receiver_wait_s"] >= 0
    assert a["sender_wait_s"] >= 0 and b["sender_wait_s"] >= 0
    ta, tb = daemon.tenant_stats("la")["total"], daemon.tenant_stats("lb")["total"]
    assert ta["rx"]["packets"] == a["sent"] and tb["rx"]["packets"] == b["sent"]


def test_a_new_run_does_not_inherit_an_earlier_runs_sessions(link, cleanup):
    """A run's RPC sessions are its own: over memif every run has the same
    address and ports, and with session ids from --seed a run took over
    the daemon's sessions of the last one, whose requests still out (here
    the app is frozen) counted against its credits, and each of its first
    requests was turned away as no_credit."""
    daemon = link.daemon
    daemon.hgctl("tenant", "add", "rerun", "--ports", "7980-7980", "--rpc-ports", "7980-7980",
                 "--dt-us", "500000", "--ddrop-us", "1000000")
    echo = daemon.echo("rerun", 7980)
    cleanup.append(echo)
    sessions = lambda: daemon.tenant_stats("rerun")["credits"]["sessions"]   # noqa: E731
    no_credit = lambda: daemon.tenant_stats("rerun")["cores"][0]["drops"].get(  # noqa: E731
        "rpc_reject_no_credit", 0)
    freeze(echo.proc)
    try:
        first = link.hgload(7980, "--credits", "--rate", "40", "--duration", "0.2",
                            "--flows", "4", "--timeout-ms", "100", "--json")
        out = json.loads(first.communicate(timeout=60)[0])
        assert out["received"] == 0, "the app is frozen"
        assert sessions() == 4
        second = link.hgload(7980, "--credits", "--rate", "40", "--duration", "1",
                             "--flows", "4", "--json")
        assert wait_for(lambda: sessions() == 8 or no_credit() > 0, timeout=20)
    finally:
        echo.proc.send_signal(signal.SIGCONT)
    out = json.loads(second.communicate(timeout=60)[0])
    assert no_credit() == 0
    assert out["rejected"] == 0 and out["lost"] == 0 and out["received"] == out["sent"], out


def test_bad_arguments_are_one_line(net):
    for args, has in [
        (("--target", "198.18.0.1", "--rate", "1", "--duration", "1"), "--target"),
        (("--target", f"{DAEMON_IP}:9", "--rate", "0", "--duration", "1"), "--rate"),
        (("--target", f"{DAEMON_IP}:9", "--rate", "1", "--duration", "1",
          "--workload", "mix:a:1:60,b:1:30"), "add up to 90"),
        (("--target", f"{DAEMON_IP}:9", "--rate", "1", "--duration", "1",
          "--workload", "bursty"), "unknown workload"),
        (("--target", f"{DAEMON_IP}:9", "--rate", "1", "--duration", "1",
          "--size", "8"), "--size"),
        (("--target", f"{DAEMON_IP}:9", "--rate", "1", "--duration", "1", "--and",
          "--target", f"{DAEMON_IP}:8", "--rate", "1", "--duration", "1",
          "--memif", "/x"), "first load"),
    ]:
        r = hgload(net, *args, check=False)
        assert r.returncode == 2, args
        assert r.stderr.count("\n") == 1 and has in r.stderr, r.stderr


@pytest.mark.skipif(not HAS_SCHEDSTAT, reason="the kernel keeps no schedstats")
def test_a_sender_that_shares_its_cpu_reports_its_wait(net, daemon):
    """hgload reports how long its threads waited, runnable, for a CPU: a
    blast (SCHED_IDLE) beside a busy loop on its CPU waits most of its run."""
    cpu = str(min(os.sched_getaffinity(0)))
    with cpu_hog(cpu):
        out = json.loads(net.exec("taskset", "-c", cpu, os.path.join(BIN, "hgload"),
                                  "--target", f"{DAEMON_IP}:7990", "--blast",
                                  "--duration", "1", "--json").stdout)
    assert out["mode"] == "blast"
    assert out["sender_wait_s"] >= 0.3 * out["elapsed_s"], out

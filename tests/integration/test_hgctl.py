"""Every hgctl command, and every way it can fail: non-zero exit, one line."""
import json
import os

import pytest

from hg import BIN, run, wait_for


def fails(daemon, *args, code=1, has=""):
    r = daemon.hgctl(*args, check=False)
    assert r.returncode == code, (args, r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hgctl: "), r.stderr
    assert has in lines[0], (has, lines[0])
    assert r.stdout == ""


def test_tenant_lifecycle_and_json(daemon):
    daemon.hgctl("tenant", "add", "life", "--weight", "3", "--cap", "20000", "--ports", "9000-9009")
    t = daemon.tenants()["life"]
    assert (t["weight"], t["cap"], t["ports"]) == (3.0, 20000, {"lo": 9000, "hi": 9009})
    assert (t["apps"], t["contexts"], t["bound_ports"]) == (0, 0, [])
    daemon.hgctl("tenant", "set", "life", "--weight", "1.5")
    daemon.hgctl("tenant", "set", "life", "--cap", "9000")
    t = daemon.tenants()["life"]
    assert (t["weight"], t["cap"]) == (1.5, 9000)
    assert json.loads(daemon.hgctl("tenant", "set", "life", "--cap", "9001", "--json").stdout) == {"ok": True}
    human = daemon.hgctl("tenant", "list").stdout
    assert "life" in human and "9000-9009" in human
    st = daemon.stats("life")
    assert st["tsc_hz"] > 0 and st["tenants"][0]["name"] == "life"
    core = st["tenants"][0]["cores"][0]
    assert set(core) == {"core", "budget", "debt", "doorbells", "doorbell_cycles", "rx", "tx", "sched", "drops"}
    assert set(core["rx"]) == {"cycles", "nic_cycles", "packets", "cycles_per_packet",
                               "throttles", "unfunded"}
    assert 0 < core["budget"] <= 9001 and core["debt"] == 0
    total = st["tenants"][0]["total"]
    assert {"cycles", "budget", "debt", "over_budget_drops", "doorbells"} <= set(total)
    assert "unattributed_cycles" in st["cores"][0]
    assert "rx" in daemon.hgctl("stats").stdout
    daemon.hgctl("tenant", "del", "life")
    assert "life" not in daemon.tenants()
    daemon.hgctl("tenant", "add", "life", "--ports", "9000-9009")   # range is free again
    daemon.hgctl("tenant", "del", "life")


def test_config_get_and_set(daemon):
    cfg = json.loads(daemon.hgctl("config", "get", "--json").stdout)
    assert cfg["refill-ns"] == "1000" and cfg["boost"] == "0.85"
    assert cfg["cap"] == "15000" and cfg["protection"] == "on" and cfg["idle"] == "sleep"
    daemon.hgctl("config", "set", "boost", "0.9")
    assert json.loads(daemon.hgctl("config", "get", "boost", "--json").stdout) == {"boost": "0.9"}
    daemon.hgctl("config", "set", "protection", "off")
    daemon.hgctl("config", "set", "protection", "on")
    daemon.hgctl("config", "set", "boost", "0.85")
    assert "startup only" in daemon.hgctl("config", "get").stdout


@pytest.mark.parametrize("args,has", [
    (("tenant", "set", "ghost", "--weight", "2"), "unknown tenant 'ghost'"),
    (("tenant", "del", "ghost"), "unknown tenant 'ghost'"),
    (("stats", "--tenant", "ghost"), "unknown tenant 'ghost'"),
    (("tenant", "add", "dup"), "already exists"),
    (("tenant", "add", "overlap", "--ports", "9105-9200"), "port 9105 belongs to tenant 'dup'"),
    (("tenant", "add", "w0", "--weight", "0"), "weight must be"),
    (("tenant", "add", "w1", "--weight", "-3"), "weight must be"),
    (("tenant", "add", "c0", "--cap", "5"), "cap must be"),
    (("tenant", "add", "x0", "--extra-cycles", "99999999"), "extra-cycles must be"),
    (("tenant", "set", "dup", "--quantum-factor", "0"), "quantum factors must be"),
    (("tenant", "set", "dup", "--steal-threshold", "100000"), "steal-threshold must be"),
    (("tenant", "set", "dup", "--thresh-wqd-us", "2000000"), "thresh-wqd-us must be"),
    (("tenant", "add", "bad name!"), "may only hold"),
    (("tenant", "add", "x" * 40), "1..31 characters"),
    (("config", "set", "nope", "1"), "unknown setting 'nope'"),
    (("config", "get", "nope"), "unknown setting 'nope'"),
    (("config", "set", "fp-cores", "2"), "only be set at startup"),
    (("config", "set", "ip", "198.18.0.9/24"), "only be set at startup"),
    (("config", "set", "boost", "7"), "boost must be"),
    (("config", "set", "idle", "nap"), "poll|yield|sleep"),
    (("config", "set", "refill-ns", "abc"), "refill-ns must be"),
])
def test_daemon_refusals(daemon, args, has):
    if not daemon.tenants().get("dup"):
        daemon.hgctl("tenant", "add", "dup", "--ports", "9100-9109")
    fails(daemon, *args, code=1, has=has)


@pytest.mark.parametrize("args,has", [
    ((), "no command"),
    (("frobnicate",), "unknown command 'frobnicate'"),
    (("tenant", "eat", "x"), "unknown command 'tenant eat'"),
    (("tenant", "add"), "usage"),
    (("tenant", "add", "a", "b"), "usage"),
    (("tenant", "set", "a"), "give at least one setting"),
    (("tenant", "set", "a", "--steer", "random"), "--steer wants flow or jsq"),
    (("tenant", "set", "a", "--preempt", "maybe"), "--preempt wants on or off"),
    (("tenant", "add", "a", "--steer", "jsq"), "option not valid"),
    (("tenant", "del", "a", "--weight", "2"), "option not valid"),
    (("tenant", "add", "a", "--ports", "9-3"), "--ports"),
    (("tenant", "add", "a", "--ports", "0-10"), "--ports"),
    (("tenant", "add", "a", "--ports", "70000-70001"), "--ports"),
    (("tenant", "add", "a", "--weight", "lots"), "--weight"),
    (("tenant", "add", "a", "--cap", "-1"), "--cap"),
    (("tenant", "add", "a", "--cap"), "needs a value"),
    (("stats", "--bogus"), "unknown option"),
    (("config", "set", "boost"), "usage"),
])
def test_usage_errors(daemon, args, has):
    fails(daemon, *args, code=2, has=has)


def test_daemon_not_running():
    r = run(os.path.join(BIN, "hgctl"), "--ctl", "/tmp/hg-no-such.sock", "tenant", "list", check=False)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "hgctl: cannot reach hourglassd at /tmp/hg-no-such.sock: No such file or directory"]


def test_del_refuses_while_an_app_is_attached(daemon, cleanup):
    daemon.hgctl("tenant", "add", "busy", "--ports", "9300-9300")
    e = daemon.echo("busy", 9300)
    cleanup.append(e)
    fails(daemon, "tenant", "del", "busy", has="1 attached app")
    e.stop()
    assert wait_for(lambda: daemon.tenants()["busy"]["apps"] == 0)
    daemon.hgctl("tenant", "del", "busy")


def test_app_errors_are_one_line(daemon):
    echo = os.path.join(BIN, "hg-echo")
    r = run(echo, "--ctl", daemon.ctl, "--tenant", "ghost", "--port", "1", check=False)
    assert r.returncode == 1 and r.stderr.strip() == "hg-echo: unknown tenant 'ghost'"
    daemon.hgctl("tenant", "add", "owner", "--ports", "9400-9400")
    r = run(echo, "--ctl", daemon.ctl, "--tenant", "owner", "--port", "9401", check=False)
    assert r.returncode == 1 and "not owned by tenant 'owner'" in r.stderr

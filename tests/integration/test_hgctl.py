"""Every hgctl command, and every way it can fail: non-zero exit, one line."""
import json
import os
import pwd
import re
import subprocess
import sys

import pytest

from hg import BIN, ROOT, run, wait_for


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
    assert (t["weight"], t["cap"], t["ports"]) == (3.0, 20000, "9000-9009")
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
    # the TSC at the cores' read: a busy fraction needs no wall clock
    assert 0 < st["tsc"] < daemon.stats("life")["tsc"]
    core = st["tenants"][0]["cores"][0]
    # the tenant counters are proto/counters.h's: each shows here by name
    table = open(os.path.join(ROOT, "proto", "counters.h")).read()
    block = table[table.index("HG_TENANT_COUNTERS(X)"):table.index("HG_CONTROL_COUNTERS(X)")]
    counters = set(re.findall(r"X\(\w+, (\w+),", block))
    assert {"doorbells", "over_budget_drop_cycles", "sessions_trimmed"} <= counters
    assert set(core) == {"core", "budget", "debt", "rx", "tx", "sched", "drops"} | counters
    assert counters <= set(st["tenants"][0]["total"])
    assert set(core["rx"]) == {"cycles", "nic_cycles", "packets", "cycles_per_packet",
                               "syscall_cycles", "syscall_cycles_per_packet",
                               "throttles", "unfunded"}
    assert 0 < core["budget"] <= 9001 and core["debt"] == 0
    total = st["tenants"][0]["total"]
    assert {"cycles", "budget", "debt", "over_budget_drops", "doorbells"} <= set(total)
    assert {"over_budget_drop_cycles", "cycles_per_over_budget_drop"} <= set(st["tenants"][0])
    assert {"unattributed_cycles", "flushes"} <= set(st["cores"][0])
    assert "rx" in daemon.hgctl("stats").stdout
    daemon.hgctl("tenant", "del", "life")
    assert "life" not in daemon.tenants()
    daemon.hgctl("tenant", "add", "life", "--ports", "9000-9009")   # range is free again
    daemon.hgctl("tenant", "del", "life")


def test_another_thread_on_the_fast_path_cpu_shows_as_stolen(daemon):
    """A busy loop pinned to the fast-path core's CPU for half a second:
    the core's thread, woken from its naps, waits on that CPU's run queue,
    and stolen_cycles (the scheduler's count, read each tick) says so."""
    cpu = "1" if os.cpu_count() > 1 else "0"     # Daemon's lcore 1
    before = daemon.stats()["cores"][0]["stolen_cycles"]
    subprocess.run(["taskset", "-c", cpu, sys.executable, "-c",
                    "import time\nt = time.time()\nwhile time.time() - t < 0.5: pass"],
                   check=True, timeout=30)
    assert wait_for(lambda: daemon.stats()["cores"][0]["stolen_cycles"] > before)


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
    (("tenant", "set", "dup", "--quantum-factor", "0"), "quantum-factor must be [0.1, 1000]"),
    (("tenant", "set", "dup", "--steal-threshold", "100000"), "steal-threshold must be"),
    (("tenant", "set", "dup", "--thresh-wqd-us", "2000000"), "thresh-wqd-us must be"),
    (("tenant", "add", "bad name!"), "may only hold"),
    (("tenant", "add", "x" * 40), "1..31 characters"),
    (("tenant", "set", "dup", "--steer", "random"), "steer must be flow|jsq, not 'random'"),
    (("tenant", "set", "dup", "--preempt", "maybe"), "preempt must be off|on|always"),
    (("tenant", "set", "dup", "--ports", "9100-9101"), "ports is set when the tenant is added"),
    (("tenant", "set", "dup", "--frobs", "3"), "no tenant setting 'frobs'"),
    (("tenant", "set", "dup", "--dt-us", "500"), "ddrop-us (100) must be at least dt-us (500)"),
    (("tenant", "get", "dup", "frobs"), "no tenant setting 'frobs'"),
    (("tenant", "get", "ghost"), "unknown tenant 'ghost'"),
    (("tenant", "add", "a", "--ports", "9-3"), "ports must be PORT or LO-HI"),
    (("tenant", "add", "a", "--ports", "0-10"), "ports must be PORT or LO-HI"),
    (("tenant", "add", "a", "--ports", "70000-70001"), "ports must be PORT or LO-HI"),
    (("tenant", "add", "a", "--weight", "lots"), "weight must be"),
    (("tenant", "add", "a", "--cap", "-1"), "cap must be"),
    (("tenant", "add", "a", "--uid", "no-such-user-here"), "uid must be a user name"),
    (("config", "reload",), "no config file to reload"),
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
    (("tenant", "set", "a", "--weight"), "--weight needs a value"),
    (("tenant", "del", "a", "--weight", "2"), "unknown option '--weight' for 'tenant del'"),
    (("tenant", "get"), "usage"),
    (("tenant", "add", "a", "--cap"), "needs a value"),
    (("stats", "--bogus", "1"), "unknown option '--bogus' for 'stats'"),
    (("tenant", "list", "--tenant", "x"), "unknown option '--tenant'"),
    (("config", "reload", "now"), "usage"),
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


# A value other than the default for the settings this test knows; every
# other key of the table is given its default, so a new setting needs no
# change here and `tenant add` is still shown to take every key.
NOT_DEFAULT = {
    "weight": "2.5", "cap": "25000", "ports": "9500-9509", "extra-cycles": "10",
    "steer": "jsq", "quantum-factor": "3", "congested-factor": "12",
    "thresh-wqd-us": "40", "steal-threshold": "3", "quantum-us": "25",
    "preempt": "always", "wait-queue": "off", "steal": "off",
    "rpc-ports": "9500-9501", "dt-us": "70", "ddrop-us": "150", "alpha": "2",
    "beta": "0.05", "update-us": "20", "max-sessions": "100", "uid": "nobody",
    "gid": "0",
}


def table(daemon):
    """The table's defaults, from the daemon: hgctl tenant add --help --json."""
    return json.loads(daemon.hgctl("tenant", "add", "--help", "--json").stdout)


def test_tenant_add_takes_every_key(daemon):
    defaults = table(daemon)
    assert len(defaults) >= 20 and defaults["weight"] == 1 and defaults["ports"] == "none"
    args = []
    for key, default in defaults.items():
        args += [f"--{key}", NOT_DEFAULT.get(key, str(default))]
    daemon.hgctl("tenant", "add", "every", *args)
    got = json.loads(daemon.hgctl("tenant", "get", "every", "--json").stdout)
    assert set(got) == set(defaults)
    want = {k: NOT_DEFAULT.get(k, str(v)) for k, v in defaults.items()}
    want["uid"] = str(pwd.getpwnam("nobody").pw_uid)      # names come back as numbers
    assert {k: str(v) for k, v in got.items()} == want
    listed = daemon.tenants()["every"]
    assert all(listed[k] == v for k, v in got.items()), "list shows the same keys"
    stats = daemon.tenant_stats("every")
    assert all(stats[k] == v for k, v in got.items()), "so does stats"
    human = daemon.hgctl("tenant", "list").stdout
    assert "preempt=always" in human and "weight=2.5" in human
    daemon.hgctl("tenant", "del", "every")


def test_tenant_get_and_help(daemon):
    daemon.hgctl("tenant", "add", "getme", "--ports", "9520-9520", "--weight", "4")
    assert daemon.hgctl("tenant", "get", "getme", "weight").stdout == "4\n"
    assert json.loads(daemon.hgctl("tenant", "get", "getme", "ports", "--json").stdout) == \
        {"ports": "9520-9520"}
    text = daemon.hgctl("tenant", "get", "getme").stdout.splitlines()
    assert text[0].split()[:4] == ["KEY", "VALUE", "DEFAULT", "LIVE"]
    row = next(line for line in text if line.startswith("weight "))
    assert row.split()[:4] == ["weight", "4", "1", "live"] and "[0.01, 10000]" in row
    assert next(line for line in text if line.startswith("ports ")).split()[3] == "add"
    helptext = daemon.hgctl("tenant", "set", "getme", "--help").stdout
    assert helptext.startswith("usage: hgctl tenant set NAME")
    assert "ddrop-us" in helptext and "off|on|always" in helptext
    daemon.hgctl("tenant", "del", "getme")


def test_a_set_is_all_or_nothing(daemon):
    daemon.hgctl("tenant", "add", "atomic", "--ports", "9530-9530")
    fails(daemon, "tenant", "set", "atomic", "--weight", "7", "--dt-us", "900",
          has="ddrop-us (100) must be at least dt-us (900)")
    fails(daemon, "tenant", "set", "atomic", "--weight", "7", "--steal", "maybe",
          has="steal must be off|on")
    t = daemon.tenants()["atomic"]
    assert (t["weight"], t["dt-us"], t["steal"]) == (1, 50, "on"), "nothing applied"
    daemon.hgctl("tenant", "set", "atomic", "--dt-us=900", "--ddrop-us", "1000")
    t = daemon.tenants()["atomic"]
    assert (t["dt-us"], t["ddrop-us"]) == (900, 1000), "checked together"
    daemon.hgctl("tenant", "del", "atomic")


def test_max_apps_bounds_attaches(daemon, cleanup):
    """The first setting added after the table: a row, a field
    and the check at attach."""
    daemon.hgctl("tenant", "add", "few", "--ports", "9540-9549", "--max-apps", "1")
    cleanup.append(daemon.echo("few", 9540))
    echo = os.path.join(BIN, "hg-echo")
    r = run(echo, "--ctl", daemon.app_ctl, "--tenant", "few", "--port", "9541", check=False)
    assert r.returncode == 1
    assert r.stderr.strip() == "hg-echo: tenant 'few' has too many apps attached (max-apps 1)"
    daemon.hgctl("tenant", "set", "few", "--max-apps", "2")
    cleanup.append(daemon.echo("few", 9541))
    assert daemon.tenants()["few"]["apps"] == 2

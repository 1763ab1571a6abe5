"""What a new user gets wrong first: every case answers with one
line that says what is wrong and what to do, and the help and version
flags work on a machine without hugepages. Each case here was a silent
exit, a misleading line or EAL's own usage before."""
import json
import os
import re
import subprocess

from hg import BIN, DAEMON_IP, Daemon, run, wait_for

TAG = str(os.getpid() % 10000)

HGD = os.path.join(BIN, "hourglassd")
HGCTL = os.path.join(BIN, "hgctl")
TOOLS = ["hourglassd", "hgctl", "hgload", "hg-memif-bridge", "hg-echo", "hg-idle",
         "hg-kv", "udp-echo", "be-sqrt", "hg-policy-sim"]


def eal(prefix, *rest):
    """hourglassd with --no-huge EAL options on the loopback-free null
    device, then rest (the daemon's own flags, after --)."""
    return [HGD, "--no-huge", "-m", "256", "--no-pci", "--file-prefix", prefix,
            "--lcores", "0@0,1@0", "--vdev", "net_null0", "--", "--ip",
            f"{DAEMON_IP}/24", "--idle", "sleep", *rest]


def one_error(cmd, has, code=1):
    """cmd fails with code, and its own (non-EAL) output is one line with has."""
    r = run(*cmd, check=False)
    assert r.returncode == code, (r.stdout, r.stderr)
    lines = [re.sub(r"^\d{4}-\d\d-\d\dT[\d:.]+ ", "", ln)       # the log's time
             for ln in (r.stdout + r.stderr).splitlines()]
    own = [ln for ln in lines
           if ln and not ln.startswith(("EAL:", "TELEMETRY:", "hourglass: port", "  "))]
    assert len(own) == 1 and has in own[0], own
    return own[0]


def test_every_binary_has_version():
    for tool in TOOLS:
        r = run(os.path.join(BIN, tool), "--version")
        assert re.fullmatch(rf"{tool} \(Hourglass\) \d+\.\d+\.\d+\n", r.stdout), (tool, r.stdout)


def test_daemon_help_without_eal():
    for args in (["--help"], ["--", "--help"], ["-h"]):
        r = run(HGD, *args)
        assert "--ip ADDR/PREFIX" in r.stdout and "--idle" in r.stdout, r.stdout
        assert "EAL:" not in r.stdout + r.stderr       # EAL never ran
    assert "--vdev" in run(HGD, "--help-eal").stdout + run(HGD, "--help-eal", check=False).stderr


def test_daemon_flag_errors_before_eal():
    # checked before EAL: no hugepages, no --no-huge, still the daemon's line
    one_error([HGD, "--", "--ip", "198.18.0.1/24", "--bogus", "1"], "unknown option '--bogus' (see hourglassd --help)",
              code=1)
    one_error([HGD, "--", "--idle", "sleep"], "--ip ADDR/PREFIX is required")


def test_no_hugepages_named():
    huge = int(re.search(r"HugePages_Total:\s+(\d+)", open("/proc/meminfo").read()).group(1))
    r = run(HGD, "--file-prefix", f"hgnh{TAG}", "--", "--ip", "198.18.0.1/24", check=False)
    assert r.returncode == 1
    if huge == 0:
        assert "no hugepages; add --no-huge -m 512" in r.stderr, r.stderr
    assert "EAL init failed: Success" not in r.stderr


def test_a_file_prefix_in_use_is_named():
    prefix = f"hgfp{TAG}"
    first = subprocess.Popen(eal(prefix, "--ctl", f"/tmp/{prefix}.sock"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: os.path.exists(f"/tmp/{prefix}.sock") or first.poll() is not None)
        assert first.poll() is None
        line = one_error(eal(prefix, "--ctl", f"/tmp/{prefix}b.sock"),
                         f"already runs with --file-prefix {prefix}")
        assert str(first.pid) in line
    finally:
        first.terminate()
        first.wait(10)


def test_socket_paths_are_named():
    prefix = f"hgsp{TAG}"
    one_error(eal(prefix, "--ctl", "/nonexistent/dir/x.sock"),
              "--ctl /nonexistent/dir/x.sock: cannot make its directory /nonexistent/dir")
    one_error(eal(prefix, "--ctl", f"/tmp/{prefix}.sock", "--app-ctl", "/nonexistent/dir/a.sock"),
              "--app-ctl /nonexistent/dir/a.sock: cannot make its directory")


def test_hgctl_options_per_command(daemon):
    c = ["--ctl", daemon.ctl]
    one_error([HGCTL, *c, "stats", "--bogus"], "unknown option '--bogus' for 'stats'", code=2)
    r = run(HGCTL, *c, "tenant", check=False)
    assert r.returncode == 2 and "'tenant' needs a subcommand" in r.stderr
    assert "tenant list" in r.stderr
    assert run(HGCTL, "stats", "--help").stdout.startswith("usage: hgctl stats")
    assert "tenant del NAME" in run(HGCTL, "tenant", "--help").stdout
    one_error([HGCTL, *c, "stats", "--tenant"], "--tenant needs a value", code=2)
    # a single port is a range of one
    daemon.hgctl("tenant", "add", "single", "--ports", "9700")
    assert daemon.tenants()["single"]["ports"] == "9700-9700"
    daemon.hgctl("tenant", "del", "single")


def test_log_lines_carry_their_time_and_live_changes_are_logged(daemon):
    daemon.hgctl("tenant", "add", "logged", "--ports", "9710")
    daemon.hgctl("tenant", "set", "logged", "--weight", "2")
    daemon.hgctl("tenant", "del", "logged")
    lines = [ln for ln in daemon.logtext().splitlines() if "hourglass:" in ln]
    assert lines and all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} ", ln)
                         for ln in lines), lines[:3]
    assert any(ln.endswith("hourglass: tenant logged set: weight=2") for ln in lines), lines


def test_stats_interval_is_a_live_view(daemon):
    r = run(HGCTL, "--ctl", daemon.ctl, "stats", "--interval", "0.1", "--count", "3")
    assert len(re.findall(r"^== \d\d:\d\d:\d\d$", r.stdout, re.M)) == 3, r.stdout
    one_error([HGCTL, "--ctl", daemon.ctl, "stats", "--interval", "0"],
              "--interval must be a number in [0.1, 3600]", code=2)
    one_error([HGCTL, "--ctl", daemon.ctl, "stats", "--count", "2"],
              "--count goes with --interval", code=2)


def test_reload_refuses_a_line_the_command_line_set(tmp_path):
    conf = tmp_path / "hg.conf"
    conf.write_text("boost 0.8\nidle poll\n")     # --idle sleep wins at startup
    d = Daemon(f"{TAG}rl", "net_null0", extra=("--config", str(conf)))
    try:
        conf.write_text("boost 0.8\nidle poll\nip 198.18.0.9/24\n")
        r = d.hgctl("config", "reload", check=False)
        assert r.returncode == 1
        assert f"{conf}:3: ip is given on the command line (--ip {DAEMON_IP}/24)" in r.stderr
        # what runs, and the line the daemon started with: fine
        conf.write_text(f"boost 0.7\nidle poll\nip {DAEMON_IP}/24\n")
        d.hgctl("config", "reload")
        assert json.loads(d.hgctl("config", "get", "boost", "--json").stdout) == {"boost": "0.7"}
    finally:
        assert d.stop() == 0, d.logtext()

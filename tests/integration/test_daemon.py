"""Daemon lifecycle: signals, the tap PMD, telemetry, more than one core."""
import json
import os
import signal
import socket

import pytest

from hg import DAEMON_IP, Daemon, run, udp_roundtrip, veth_vdev, wait_for


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_exits_zero_and_removes_the_socket(net, sig):
    d = Daemon(net.ns[3:] + "s", veth_vdev(net))
    d.hgctl("tenant", "add", "x", "--ports", "8000-8001")
    e = d.echo("x", 8000)
    assert d.stop(sig) == 0, d.logtext()
    assert not os.path.exists(d.ctl)
    e.stop()


def test_telemetry_views(net):
    d = Daemon(net.ns[3:] + "t", veth_vdev(net))
    try:
        d.hgctl("tenant", "add", "tele", "--ports", "8100-8100", "--weight", "2")
        path = f"/var/run/dpdk/{d.prefix}/dpdk_telemetry.v2"
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        json.loads(s.recv(16384))
        s.send(b"/hourglass/tenants")
        reply = json.loads(s.recv(65536))
        tele = reply["/hourglass/tenants"]["tele"]
        assert (tele["weight"], tele["ports"], tele["steer"]) == (2, "8100-8100", "flow")
        # every setting, hyphenated ones too (telemetry dropped them), '-' as '_'
        keys = json.loads(d.hgctl("tenant", "get", "tele", "--json").stdout)
        assert {k.replace("-", "_") for k in keys} <= set(tele), set(keys) ^ set(tele)
        assert tele["max_sessions"] == 2048 and tele["rpc_ports"] == "none"
        s.send(b"/hourglass/config")
        conf = json.loads(s.recv(65536))["/hourglass/config"]
        keys = json.loads(d.hgctl("config", "get", "--json").stdout)
        assert {k.replace("-", "_") for k in keys} == set(conf)
        assert conf["refill_ns"] == 1000 and conf["tick_us"] == 10 and conf["idle"] == "sleep"
        s.send(b"/hourglass/stats")
        tele = json.loads(s.recv(65536))["/hourglass/stats"]["tele"]
        assert tele["weight"] == 2 and tele["cap"] == 15000
        assert tele["rx_packets"] == 0 and tele["drops"]["unbound_port"] == 0
        s.close()
    finally:
        assert d.stop() == 0


def test_tap_pmd_answers_ping(net):
    tap = f"hgtap{net.ns[3:]}"[:15]
    d = Daemon(net.ns[3:] + "p", f"net_tap0,iface={tap}")
    try:
        # the tap device appears in our namespace; move it to a fresh one
        ns = f"{net.ns}p"
        run("ip", "netns", "add", ns)
        try:
            run("ip", "link", "set", tap, "netns", ns)
            run("ip", "-n", ns, "addr", "add", "198.18.0.2/24", "dev", tap)
            run("ip", "-n", ns, "link", "set", tap, "up")
            r = run("ip", "netns", "exec", ns, "ping", "-c", "2", "-W", "2", DAEMON_IP, check=False)
            assert r.returncode == 0, r.stdout + d.logtext()
        finally:
            run("ip", "netns", "del", ns, check=False)
    finally:
        assert d.stop() == 0


def test_two_fast_path_cores(net, cleanup):
    d = Daemon(net.ns[3:] + "m", f"net_af_packet0,iface={net.host_if},qpairs=2", fp_cores=2)
    cleanup.append(d)
    d.hgctl("tenant", "add", "multi", "--ports", "8200-8200")
    cleanup.append(d.echo("multi", 8200, threads=2))
    socks = [net.socket() for _ in range(16)]
    for i, s in enumerate(socks):
        assert udp_roundtrip(s, 8200, b"flow%d" % i) == b"flow%d" % i
        s.close()
    assert len(d.tenant_stats("multi")["cores"]) == 2


def test_fp_cores_beyond_the_port_queues_is_a_clear_error(net):
    with pytest.raises(RuntimeError, match="qpairs=2"):
        Daemon(net.ns[3:] + "q", f"net_af_packet0,iface={net.host_if}", fp_cores=2)


def test_config_file_with_flags_winning(net, tmp_path):
    cfg = tmp_path / "hg.conf"
    cfg.write_text("# settings\nboost 0.7\nrefill-ns = 2000\nidle poll\n")
    d = Daemon(net.ns[3:] + "c", f"net_af_packet0,iface={net.host_if}",
               extra=("--config", str(cfg)))
    try:
        got = json.loads(d.hgctl("config", "get", "--json").stdout)
        assert got["boost"] == "0.7" and got["refill-ns"] == "2000"
        assert got["idle"] == "sleep", "the --idle flag beats the file"
    finally:
        assert d.stop() == 0
    cfg.write_text("boost 9\n")
    with pytest.raises(RuntimeError, match=r"hg.conf:1: boost must be"):
        Daemon(net.ns[3:] + "c", f"net_af_packet0,iface={net.host_if}",
               extra=("--config", str(cfg)))

"""The daemon reached by plain Linux sockets from the test namespace: its
port net_af_packet on the veth, or net_memif behind hg-memif-bridge."""
import os
import signal
import socket
import struct
import subprocess
import time

import pytest

from hg import BIN, DAEMON_IP, PEER_IP, udp_roundtrip, wait_for


@pytest.fixture(scope="module")
def daemon(pmd_daemon):
    """Every test here runs over net_af_packet and over net_memif."""
    return pmd_daemon


def test_arp_resolves_and_ping_answers(net, daemon):
    r = net.exec("ping", "-c", "3", "-i", "0.2", "-W", "2", DAEMON_IP, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 received" in r.stdout
    neigh = net.exec("ip", "neigh", "show", DAEMON_IP).stdout
    assert net.mac in neigh.lower(), neigh


def test_udp_echo_every_size_byte_exact(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "sizes", "--ports", "7000-7000")
    cleanup.append(daemon.echo("sizes", 7000, threads=2))
    s = net.socket()
    try:
        for size in range(1, 1473):
            payload = os.urandom(size)
            assert udp_roundtrip(s, 7000, payload) == payload, f"size {size}"
    finally:
        s.close()
    ts = daemon.tenant_stats("sizes")["total"]
    assert ts["rx"]["packets"] >= 1472 and ts["sched"]["packets"] >= 1472


def test_burst_echo_answers_every_request_byte_exact(net, daemon, cleanup):
    """hg-echo --burst takes many requests at once and answers them in one
    hg_send_burst; each echo is its own, and none is lost but those the
    daemon counted (check_accounted)."""
    import json
    daemon.hgctl("tenant", "add", "bursty", "--ports", "7020-7020")
    cleanup.append(daemon.echo("bursty", 7020, threads=2, extra=("--burst", "32")))
    s = net.socket()
    try:
        for size in (1, 64, 1472):
            payload = os.urandom(size)
            assert udp_roundtrip(s, 7020, payload) == payload, f"size {size}"
    finally:
        s.close()
    before = daemon.request_counts("bursty")
    p = net.popen(os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:7020",
                  "--rate", "20000", "--duration", "2", "--flows", "16",
                  "--timeout-ms", "2000", "--json", stdout=subprocess.PIPE, text=True)
    r = json.loads(p.communicate(timeout=60)[0])
    assert r["sent"] > 10000, r
    daemon.check_accounted("bursty", r, before, net)


def test_synthetic_work_header_is_served_and_echoed(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "work", "--ports", "7010-7010")
    cleanup.append(daemon.echo("work", 7010))
    s = net.socket()
    hdr = struct.pack("!IBBHIIQQ", 0x48475752, 1, 3, 0, 2_000_000, 0, 77, 123)
    t0 = time.monotonic()
    reply = udp_roundtrip(s, 7010, hdr + b"tail", tries=1, timeout=5)
    elapsed = time.monotonic() - t0
    s.close()
    assert reply == hdr + b"tail"
    assert elapsed >= 0.002, "the 2 ms of service time was not spent"


def test_two_tenants_see_only_their_own_traffic(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "ta", "--ports", "7100-7109")
    daemon.hgctl("tenant", "add", "tb", "--ports", "7200-7209")
    cleanup.append(daemon.echo("ta", 7100))
    cleanup.append(daemon.echo("tb", 7200))
    sa, sb = net.socket(), net.socket()
    for i in range(30):
        assert udp_roundtrip(sa, 7100, b"a%d" % i) == b"a%d" % i
    for i in range(50):
        assert udp_roundtrip(sb, 7200, b"b%d" % i) == b"b%d" % i
    sa.close()
    sb.close()
    a, b = daemon.tenant_stats("ta")["total"], daemon.tenant_stats("tb")["total"]
    assert a["rx"]["packets"] == 30 and a["sched"]["packets"] == 30
    assert b["rx"]["packets"] == 50 and b["sched"]["packets"] == 50
    assert a["rx"]["cycles"] > 0 and b["rx"]["cycles"] > 0


def test_port_without_tenant_gets_nothing_and_is_counted(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "unb", "--ports", "7300-7301")
    before = daemon.core_drops().get("no_tenant", 0)
    s = net.socket()
    assert udp_roundtrip(s, 9999, b"nobody", tries=1, timeout=0.3) is None
    assert wait_for(lambda: daemon.core_drops()["no_tenant"] >= before + 1)
    # owned by a tenant but bound by no app: charged to that tenant
    assert udp_roundtrip(s, 7301, b"unbound", tries=1, timeout=0.3) is None
    s.close()
    assert wait_for(lambda: daemon.tenant_stats("unb")["cores"][0]["drops"]["unbound_port"] == 1)


def _csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _frame(net, port=7400, payload=b"malformed?", ihl=5, total=None, frag=0,
           ip_csum=None, udp_csum=None, ethertype=0x0800, proto=17, udp_len=None):
    src, dst = socket.inet_aton(PEER_IP), socket.inet_aton(DAEMON_IP)
    udp_len = 8 + len(payload) if udp_len is None else udp_len
    pseudo = src + dst + struct.pack("!BBH", 0, 17, udp_len)
    udp = struct.pack("!HHHH", 40000, port, udp_len, 0) + payload
    uc = _csum(pseudo + udp) if udp_csum is None else udp_csum
    udp = udp[:6] + struct.pack("!H", uc) + udp[8:]
    opts = b"\x01" * (max(ihl, 5) * 4 - 20)
    tot = 20 + len(opts) + len(udp) if total is None else total
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tot, 1, frag, 64, proto, 0, src, dst) + opts
    ic = _csum(ip) if ip_csum is None else ip_csum
    ip = ip[:10] + struct.pack("!H", ic) + ip[12:]
    eth = bytes.fromhex(net.mac.replace(":", "")) + bytes.fromhex("020000000002") + \
        struct.pack("!H", ethertype)
    return eth + ip + udp


def test_malformed_frames_are_dropped_counted_and_service_continues(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "mal", "--ports", "7400-7400")
    cleanup.append(daemon.echo("mal", 7400))
    raw = net.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    raw.bind((net.peer_if, 0))
    good = _frame(net)
    # (frames shorter than an Ethernet header cannot be sent on a veth; the
    # unit tests cover them)
    cases = {
        "bad_ip_header": [good[:14 + 12], _frame(net, ihl=4), _frame(net, ihl=15)[:60]],
        "bad_ip_length": [_frame(net, total=1400), _frame(net, total=12)],
        "bad_ip_checksum": [_frame(net, ip_csum=0x1234)],
        "bad_udp_header": [_frame(net, total=20 + 6), _frame(net, udp_len=100)],
        "bad_udp_checksum": [_frame(net, udp_csum=0x4321)],
        "bad_ethertype": [_frame(net, ethertype=0x86DD), _frame(net, ethertype=0x1234)],
        "bad_ip_proto": [_frame(net, proto=6)],
    }
    # net_af_packet joins a PACKET_FANOUT group with the DEFRAG flag, so the
    # kernel holds fragments back and they never reach the daemon; they must
    # still never reach a tenant (the parser's own count is unit-tested)
    fragments = [_frame(net, frag=0x2000), _frame(net, frag=0x0020)]
    before = daemon.core_drops()
    for frames in list(cases.values()) + [fragments]:
        for f in frames:
            raw.send(f)
    raw.close()

    def counted():
        now = daemon.core_drops()
        return all(now[k] - before.get(k, 0) >= len(v) for k, v in cases.items())

    now = daemon.core_drops() if not wait_for(counted) else None
    assert now is None, str(({k: (now[k] - before.get(k, 0), len(v)) for k, v in cases.items()}, now))
    assert daemon.tenant_stats("mal")["total"]["rx"]["packets"] == 0
    s = net.socket()
    assert udp_roundtrip(s, 7400, b"still here") == b"still here"
    s.close()
    assert daemon.proc.poll() is None


def test_kill9_of_one_app_leaves_the_other_tenant_working(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "victim", "--ports", "7500-7500")
    daemon.hgctl("tenant", "add", "doomed", "--ports", "7600-7600")
    cleanup.append(daemon.echo("victim", 7500))
    doomed = daemon.echo("doomed", 7600, threads=2)
    cleanup.append(doomed)
    load = net.popen(os.path.join(BIN, "hgload"),
                     "--target", f"{DAEMON_IP}:7600", "--rate", "3000", "--duration", "3",
                     "--flows", "16", "--timeout-ms", "200",
                     stdout=open(os.devnull, "w"), stderr=open(os.devnull, "w"))
    time.sleep(1.0)
    os.kill(doomed.proc.pid, signal.SIGKILL)
    doomed.proc.wait()
    s = net.socket()
    for i in range(20):
        assert udp_roundtrip(s, 7500, b"v%d" % i) == b"v%d" % i
    load.wait(20)
    assert daemon.proc.poll() is None
    # the dead app's contexts and port come back; a new app can use them
    assert wait_for(lambda: daemon.tenants()["doomed"]["apps"] == 0
                    and daemon.tenants()["doomed"]["contexts"] == 0)
    assert daemon.tenants()["doomed"]["bound_ports"] == []
    again = daemon.echo("doomed", 7600, threads=2)
    cleanup.append(again)
    assert udp_roundtrip(s, 7600, b"reborn") == b"reborn"
    s.close()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("mode", [(), ("--event-loop",)], ids=["hg_recv", "event_loop"])
def test_idle_workers_block_and_each_request_rings_them(net, daemon, cleanup, mode):
    """An idle worker neither polls forever nor sleeps in steps;
    it blocks on its context's doorbell and the fast path wakes it."""
    name = "bell" + ("ev" if mode else "")
    port = 7700 if not mode else 7710
    daemon.hgctl("tenant", "add", name, "--ports", f"{port}-{port}")
    echo = daemon.echo(name, port, threads=2, extra=mode)
    cleanup.append(echo)
    time.sleep(0.3)
    cpu0 = cpu_seconds(echo.proc.pid)
    time.sleep(1.0)
    idle_cpu = cpu_seconds(echo.proc.pid) - cpu0
    assert idle_cpu < 0.1, f"idle workers used {idle_cpu:.2f} s of CPU in 1 s"
    s = net.socket()
    try:
        for i in range(20):
            time.sleep(0.05)            # the worker has gone to sleep
            assert udp_roundtrip(s, port, b"ring%d" % i, tries=1) == b"ring%d" % i
    finally:
        s.close()
    bells = daemon.tenant_stats(name)["total"]["doorbells"]
    assert bells >= 10, bells

"""Isolation of memory and control (design.md §7 and §11): a hostile
app cannot crash the daemon or reach another tenant; refused adds leave
nothing behind; only owners attach; apps change nothing; the control
sockets' bounds hold; neighbours are not poisoned by one spoofed frame."""
import json
import os
import resource
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import pytest

from hg import BIN, BUILD, DAEMON_IP, PEER_IP, run, udp_roundtrip, wait_for

HOSTILE = os.path.join(BUILD, "tests", "hg-hostile")
NOBODY = 65534


def echo_ok(sock, port, n=20):
    """n round trips to an echo app, each with its own payload."""
    for i in range(n):
        msg = f"victim-{port}-{i}".encode()
        if udp_roundtrip(sock, port, msg) != msg:
            return False
    return True


def hostile(daemon, tenant, port, *args):
    p = subprocess.Popen([HOSTILE, "--ctl", daemon.app_ctl, "--tenant", tenant,
                          "--port", str(port), *args],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = p.stdout.readline()
    assert "scribbling" in line, line + p.stdout.read()
    return p


@pytest.mark.parametrize("pattern", ["ff", "rand"])
def test_a_scribbling_app_cannot_crash_the_daemon_or_reach_a_neighbour(
        net, daemon, cleanup, pattern):
    v, e = f"victim{pattern}", f"evil{pattern}"
    base = 9500 if pattern == "ff" else 9520
    daemon.hgctl("tenant", "add", v, "--ports", f"{base}-{base + 9}")
    daemon.hgctl("tenant", "add", e, "--ports", f"{base + 10}-{base + 19}")
    cleanup.append(daemon.echo(v, base))
    evil = hostile(daemon, e, base + 10, "--pattern", pattern, "--seconds", "4",
                   "--pages", "512")
    s = net.socket()
    try:
        deadline = time.time() + 3
        while time.time() < deadline:
            # datagrams to the scribbler's port: RX copies into its buffers
            # at offsets the daemon must not take from the header page
            s.sendto(b"x" * 1000, (DAEMON_IP, base + 10))
            assert echo_ok(s, base, 5)
            daemon.hgctl("tenant", "list", "--json")
            daemon.stats()
        # the scribbler's own exit status is its business (an ASan build
        # reports the attachment it never detached); the daemon's is ours
        evil.wait(10)
        assert daemon.proc.poll() is None, daemon.logtext()
        assert echo_ok(s, base)
    finally:
        s.close()
        evil.kill()
    daemon.hgctl("tenant", "del", e)


def test_refused_adds_leave_every_other_tenant_working(net, daemon, cleanup):
    fd0 = os.readlink(f"/proc/{daemon.proc.pid}/fd/0")
    bad = ("tenant", "add", "bad", "--ports", "9600-9601", "--rpc-ports", "9700-9701")
    assert daemon.hgctl(*bad, check=False).returncode == 1
    daemon.hgctl("tenant", "add", "tt", "--ports", "9610-9610")
    assert daemon.hgctl(*bad, check=False).returncode == 1
    daemon.hgctl("tenant", "add", "uu", "--ports", "9620-9620")
    # fd 0 is still what it was: a refused add closed nothing of ours
    assert os.readlink(f"/proc/{daemon.proc.pid}/fd/0") == fd0
    cleanup.append(daemon.echo("tt", 9610))
    cleanup.append(daemon.echo("uu", 9620))
    s = net.socket()
    assert echo_ok(s, 9610) and echo_ok(s, 9620)
    s.close()


@pytest.fixture(scope="module")
def nobody_bin():
    """hg-echo and hgctl where uid 65534 can run them: a checkout under a
    0700 home directory (or pytest's own 0700 temporary root) is out of
    that user's reach. Removed with the module."""
    d = tempfile.mkdtemp(prefix="hg-nobody-", dir="/tmp")
    os.chmod(d, 0o755)
    for name in ("hg-echo", "hgctl"):
        shutil.copy2(os.path.join(BIN, name), d)
        os.chmod(os.path.join(d, name), 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def as_user(uid, gid):
    def drop():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    return drop


def echo_as(bindir, daemon, tenant, port, uid, gid):
    return subprocess.Popen(
        [os.path.join(bindir, "hg-echo"), "--ctl", daemon.app_ctl, "--tenant", tenant,
         "--port", str(port)], preexec_fn=as_user(uid, gid),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_only_owners_attach(net, daemon, nobody_bin):
    daemon.hgctl("tenant", "add", "mine", "--ports", "9630-9630", "--uid", str(NOBODY))
    daemon.hgctl("tenant", "add", "roots", "--ports", "9631-9631")
    daemon.hgctl("tenant", "add", "grp", "--ports", "9632-9632", "--gid", str(NOBODY))
    ok = echo_as(nobody_bin, daemon, "mine", 9630, NOBODY, NOBODY)
    grp = echo_as(nobody_bin, daemon, "grp", 9632, 12345, NOBODY)
    try:
        assert "ready" in ok.stdout.readline()
        assert "ready" in grp.stdout.readline()
        s = net.socket()
        assert echo_ok(s, 9630, 5) and echo_ok(s, 9632, 5)
        s.close()
        refused = echo_as(nobody_bin, daemon, "roots", 9631, NOBODY, NOBODY)
        out = refused.communicate(timeout=10)[0]
        assert refused.returncode != 0
        assert "tenant roots: permission denied" in out, out
        t = daemon.tenants()
        assert t["roots"]["attach_refused"] == 1 and t["roots"]["apps"] == 0
        assert (t["mine"]["uid"], t["mine"]["gid"]) == (NOBODY, "none")
        assert (t["grp"]["uid"], t["grp"]["gid"]) == (0, NOBODY)
        assert daemon.stats()["control"]["attach_refused"] >= 1
    finally:
        for p in (ok, grp):
            p.terminate()
            p.wait(10)


def test_an_app_changes_nothing_through_its_socket(net, daemon, nobody_bin):
    daemon.hgctl("tenant", "add", "appside", "--ports", "9640-9640")
    for args in (("tenant", "set", "appside", "--weight", "5"),
                 ("tenant", "del", "appside"), ("tenant", "list"),
                 ("config", "set", "protection", "off"), ("stats",),
                 ("tenant", "add", "x")):
        r = run(os.path.join(BIN, "hgctl"), "--ctl", daemon.app_ctl, *args, check=False)
        assert r.returncode == 1, args
        assert "not allowed on the app socket" in r.stderr, r.stderr
    assert daemon.tenants()["appside"]["weight"] == 1.0
    # and the operator socket is root's alone (mode 0600)
    assert os.stat(daemon.ctl).st_mode & 0o777 == 0o600
    assert os.stat(daemon.app_ctl).st_mode & 0o777 == 0o666
    r = subprocess.run([os.path.join(nobody_bin, "hgctl"), "--ctl", daemon.ctl, "tenant", "list"],
                       preexec_fn=as_user(NOBODY, NOBODY), capture_output=True, text=True)
    assert r.returncode == 1 and "Permission denied" in r.stderr, r.stderr


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def frame_stats_request(i):
    # Request{id=i, stats=StatsGet{}}: field 1 varint, field 14 empty message
    body = bytes([0x08]) + varint(i) + bytes([0x72, 0x00])
    return struct.pack("!I", len(body)) + body


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def test_a_client_that_never_reads_cannot_grow_the_daemon(daemon):
    before = rss_kb(daemon.proc.pid)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(daemon.ctl)
    c.setblocking(False)
    reqs = b"".join(frame_stats_request(i + 1) for i in range(20000))
    sent, deadline = 0, time.time() + 10
    while sent < len(reqs) and time.time() < deadline:
        try:
            sent += c.send(reqs[sent:sent + 65536])
        except BlockingIOError:
            time.sleep(0.05)
    time.sleep(0.5)
    grown = rss_kb(daemon.proc.pid) - before
    # others are still served, promptly
    t0 = time.time()
    daemon.hgctl("tenant", "list")
    assert time.time() - t0 < 2
    assert daemon.stats()["control"]["reads_paused"] >= 1
    c.close()
    # Under AddressSanitizer freed memory stays in its quarantine (up to
    # 256 MiB), so every request handled shows as growth (~10 KiB each);
    # unbounded output would still fail that bound (all 20,000 handled
    # and their replies held).
    limit = 64 * 1024 if BUILD.rstrip("/").endswith("asan") else 16 * 1024
    assert grown < limit, f"daemon grew by {grown} KiB"


def test_connections_are_capped(daemon):
    daemon.hgctl("tenant", "add", "capped", "--ports", "9650-9650")
    daemon.hgctl("config", "set", "max-app-conns", "3")
    held = []
    try:
        for _ in range(3):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(daemon.app_ctl)
            held.append(c)
        time.sleep(0.2)
        r = run(os.path.join(BIN, "hg-echo"), "--ctl", daemon.app_ctl, "--tenant",
                "capped", "--port", "9650", check=False, timeout=10)
        assert r.returncode != 0 and "too many app connections (max 3)" in r.stdout + r.stderr
        assert daemon.stats()["control"]["conns_refused"] >= 1
    finally:
        for c in held:
            c.close()
        daemon.hgctl("config", "set", "max-app-conns", "1024")


def cpu_ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def test_out_of_descriptors_the_daemon_neither_spins_nor_locks_out(daemon):
    pid = daemon.proc.pid
    old = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    n_open = len(os.listdir(f"/proc/{pid}/fd"))
    held = []
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (n_open + 4, old[1]))
    try:
        for _ in range(12):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(daemon.app_ctl)
            held.append(c)
        time.sleep(0.3)
        t0, c0 = time.time(), cpu_ticks(pid)
        time.sleep(1.0)
        busy = (cpu_ticks(pid) - c0) / os.sysconf("SC_CLK_TCK") / (time.time() - t0)
        assert busy < 0.5, f"daemon used {busy:.0%} of a CPU while out of descriptors"
    finally:
        for c in held:
            c.close()
        resource.prlimit(pid, resource.RLIMIT_NOFILE, old)
    assert wait_for(lambda: daemon.hgctl("stats", "--json", check=False).returncode == 0)
    assert daemon.stats()["control"]["accept_errors"] >= 1


def ip_csum(b):
    s = sum(struct.unpack("!10H", b))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def mac_bytes(m):
    return bytes(int(x, 16) for x in m.split(":"))


def spoofed_udp(dst_mac, src_mac, src_ip, dport, payload):
    udp = struct.pack("!HHHH", 40000, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     socket.inet_aton(src_ip), socket.inet_aton(DAEMON_IP))
    ip = ip[:10] + struct.pack("!H", ip_csum(ip)) + ip[12:]
    return dst_mac + src_mac + b"\x08\x00" + ip + udp


def arp_reply(dst_mac, src_mac, sender_ip, target_ip):
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2, src_mac,
                      socket.inet_aton(sender_ip), dst_mac, socket.inet_aton(target_ip))
    return dst_mac + src_mac + b"\x08\x06" + arp


def test_one_spoofed_frame_does_not_redirect_a_neighbours_traffic(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "nv", "--ports", "9660-9660")
    daemon.hgctl("tenant", "add", "na", "--ports", "9661-9661")
    cleanup.append(daemon.echo("nv", 9660))
    cleanup.append(daemon.echo("na", 9661))
    s = net.socket()
    assert echo_ok(s, 9660, 3)          # the daemon knows the peer's MAC
    fake = bytes.fromhex("020000000099")
    raw = net.socket(socket.AF_PACKET, socket.SOCK_RAW)
    raw.bind((net.peer_if, 0))
    ours = mac_bytes(net.mac)
    try:
        for _ in range(5):
            raw.send(spoofed_udp(ours, fake, PEER_IP, 9661, b"spoof"))
            raw.send(arp_reply(ours, fake, PEER_IP, DAEMON_IP))
        time.sleep(0.2)
        # the victim's replies still reach the real peer
        assert echo_ok(s, 9660)
        drops = daemon.core_drops()
        assert drops["unsolicited_arp"] >= 5, drops
    finally:
        raw.close()
        s.close()

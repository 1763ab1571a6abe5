"""net_af_xdp with the daemon's own XDP program: the link serves, the
program counts per tenant, a shed tenant's datagrams are dropped in the
driver, hostile frames are counted, and nothing stays attached to the
interface after an exit, a kill -9 included (the next start removes it)."""
import contextlib
import json
import os
import signal
import socket
import subprocess
import time

import pytest

from hg import (BIN, DAEMON_IP, LIVE_REFUSED, Daemon, Netns, fast_path_tids, run,
                udp_roundtrip)


def xdp_vdev(net):
    return f"net_af_xdp0,iface={net.host_if}"


def attached(net):
    """The XDP program id on the daemon's interface, or None."""
    out = run("ip", "-j", "link", "show", net.host_if).stdout
    link = json.loads(out)[0]
    return (link.get("xdp") or {}).get("prog", {}).get("id")


def echoes(net, d, tenant, port, payload):
    """A new tenant on port with an echo answers payload from the namespace."""
    d.hgctl("tenant", "add", tenant, "--ports", f"{port}-{port}")
    e = d.echo(tenant, port)
    try:
        s = net.socket()
        assert udp_roundtrip(s, port, payload) == payload
        s.close()
    finally:
        e.stop()


@pytest.fixture(scope="module")
def xdp(net):
    d = Daemon(net.ns[3:] + "x", xdp_vdev(net))
    yield d
    assert d.stop() == 0, d.logtext()
    assert "Sanitizer" not in d.logtext() and "runtime error" not in d.logtext()
    assert attached(net) is None, "the PMD detaches the program at exit"


def test_the_link_serves_and_says_xdp(net, xdp):
    assert "sheds in the driver" in xdp.logtext()
    assert "RX rings of 2048" in xdp.logtext(), "as deep as the queue's fill ring"
    assert attached(net) is not None
    echoes(net, xdp, "gold", 9400, b"over xdp")
    assert "(xdp)" in xdp.hgctl("tenant", "list").stdout
    t = xdp.tenant_stats("gold")
    assert t["xdp"]["passed"] >= 1 and t["xdp"]["dropped"] == 0, t["xdp"]
    assert "xdp:" in xdp.hgctl("stats", "--tenant", "gold").stdout


def fast_path_tid(d):
    """The thread id of the daemon's fast-path core (EAL's rte-worker-1)."""
    tids = fast_path_tids(d)
    assert tids, "no fast-path thread"
    return tids[0]


def test_on_a_veth_the_fast_path_makes_no_busy_poll_calls(net, xdp):
    """net_af_xdp's default busy polling made a recvfrom() at every RX
    poll that found the ring empty (thousands a second), and on a veth
    each polled nothing: the socket learns no NAPI id from a veth. On a
    veth the daemon turns it off, so the fast path's system calls are its
    naps, kicks and doorbells only; the link still serves."""
    assert "a veth: no busy polling" in xdp.logtext()
    echoes(net, xdp, "quiet", 9405, b"no recvfrom")
    st = subprocess.run(["timeout", "-s", "INT", "1", "strace", "-c", "-e", "trace=recvfrom",
                         "-p", fast_path_tid(xdp)], capture_output=True, text=True)
    assert "attached" in st.stderr or "total" in st.stderr, st.stderr
    assert "recvfrom" not in st.stderr, st.stderr


def test_a_busy_budget_of_the_operators_own_is_kept(net):
    """busy_budget= on the vdev is the operator's choice, on a veth too:
    the daemon adds none, and the fast path busy-polls its empty ring as
    asked (on a veth of its own: the module's daemon has the test's)."""
    other = f"{net.host_if}b"
    run("ip", "link", "add", other, "type", "veth", "peer", "name", other[:-1] + "c")
    try:
        run("ip", "link", "set", other, "up")
        d = Daemon(net.ns[3:] + "b", f"net_af_xdp0,iface={other},busy_budget=32")
        try:
            assert "no busy polling" not in d.logtext()
            st = subprocess.run(["timeout", "-s", "INT", "1", "strace", "-c", "-e",
                                 "trace=recvfrom", "-p", fast_path_tid(d)],
                                capture_output=True, text=True)
            assert "recvfrom" in st.stderr, st.stderr
        finally:
            assert d.stop() == 0, d.logtext()
    finally:
        run("ip", "link", "del", other, check=False)


def test_a_shed_tenant_is_dropped_in_the_driver(net, xdp):
    """An echo flooded beyond its budget (weight 0.01, its answers 100,000
    synthetic cycles each: one answer is ~4 ms of its refills, and the
    core saturates on this box), beside
    a victim that answers: RX marks the flooded tenant, and the program
    drops its datagrams before the socket; the victim loses nothing."""
    xdp.hgctl("tenant", "add", "victim", "--ports", "9410-9410")
    xdp.hgctl("tenant", "add", "flooded", "--ports", "9420-9420", "--weight", "0.01",
              "--extra-cycles", "100000")
    apps = [xdp.echo("victim", 9410, cpus="0"), xdp.echo("flooded", 9420, cpus="0")]
    try:
        flood = net.popen("taskset", "-c", "0", os.path.join(BIN, "hgload"),
                          "--target", f"{DAEMON_IP}:9420", "--blast", "--flows", "8",
                          "--size", "64", "--duration", "3", "--json",
                          stdout=subprocess.PIPE, text=True)
        victim = net.popen("taskset", "-c", "0", os.path.join(BIN, "hgload"),
                           "--target", f"{DAEMON_IP}:9410", "--rate", "1000",
                           "--duration", "3", "--json", stdout=subprocess.PIPE, text=True)
        v = json.loads(victim.communicate(timeout=30)[0])
        f = json.loads(flood.communicate(timeout=30)[0])
    finally:
        for a in apps:
            a.stop()
    flooded = xdp.tenant_stats("flooded")["xdp"]
    marks = sum(c["xdp_marks"] for c in xdp.stats()["cores"])
    assert marks > 0 and flooded["dropped"] > 0, (marks, flooded, f)
    assert v["lost"] == 0 and v["received"] == v["sent"], v
    assert xdp.tenant_stats("victim")["xdp"]["dropped"] == 0


def skip_if_live_refused(returncode, stderr):
    """A link replay this kernel cannot run is skipped, not failed; any
    other error is the test's to report."""
    if returncode != 0 and LIVE_REFUSED in stderr:
        pytest.skip("this kernel refuses BPF_F_TEST_XDP_LIVE_FRAMES: " + stderr.strip())


def lo_prog(net):
    """The XDP program on the namespace's loopback, or None."""
    out = net.exec("ip", "-j", "link", "show", "lo").stdout
    return (json.loads(out)[0].get("xdp") or {}).get("prog", {}).get("id")


def shed_beside_a_victim(net, xdp, tag, victim_port, flood_port, flood, skip=None):
    """Tenants TAGvictim and TAGflood, their echoes on CPU 0; the flood
    (hgload with the options `flood`, 16 flows of 1400 B for 3 s) beside
    the victim at 1,000 req/s, both from CPU 0. Asserts the flood's tenant
    was shed in the driver and the victim lost nothing and was never
    dropped there; returns the flood's report (skip: called first with the
    flood's exit code and stderr)."""
    victim_t, flood_t = f"{tag}victim", f"{tag}flood"
    xdp.hgctl("tenant", "add", victim_t, "--ports", f"{victim_port}-{victim_port}")
    xdp.hgctl("tenant", "add", flood_t, "--ports", f"{flood_port}-{flood_port}")
    apps = [xdp.echo(victim_t, victim_port, cpus="0"), xdp.echo(flood_t, flood_port, cpus="0")]
    try:
        fl = net.popen("taskset", "-c", "0", os.path.join(BIN, "hgload"),
                       "--target", f"{DAEMON_IP}:{flood_port}", *flood,
                       "--flows", "16", "--size", "1400", "--duration", "3", "--json",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        victim = net.popen("taskset", "-c", "0", os.path.join(BIN, "hgload"),
                           "--target", f"{DAEMON_IP}:{victim_port}", "--rate", "1000",
                           "--duration", "3", "--json", stdout=subprocess.PIPE, text=True)
        v = json.loads(victim.communicate(timeout=30)[0])
        out, err = fl.communicate(timeout=30)
        if skip is not None:
            skip(fl.returncode, err)
        assert fl.returncode == 0, err
    finally:
        for a in apps:
            a.stop()
    flooded = xdp.tenant_stats(flood_t)["xdp"]
    assert flooded["dropped"] > 0 and flooded["passed"] > 0, flooded
    assert v["lost"] == 0 and v["received"] == v["sent"], v
    quiet = xdp.tenant_stats(victim_t)["xdp"]
    assert quiet["dropped"] == 0 and quiet["over_share"] == 0, quiet
    return json.loads(out)


def test_a_link_replay_saturates_the_core_and_is_shed_in_the_driver(net, xdp):
    """hgload --replay: the kernel puts one prebuilt 1400 B frame on the
    link 600,000 times a second, with no synthetic work anywhere. That is
    more than one core can echo, so RX sheds the flooded tenant and the
    program drops its datagrams in the driver, while a victim beside it
    loses nothing. It lost 1-7 of 2,933 in 4 runs of 10 before the program
    held a tenant to its share of a ring that backs up: the flood filled
    the socket's ring between the core's looks, and the kernel dropped the
    victim's next datagram (xdp_redirect_err, -ENOMEM: the fill ring
    empty). The replay leaves nothing attached behind it."""
    f = shed_beside_a_victim(net, xdp, "r", 9440, 9450,
                             ["--replay", "--rate", "600000"], skip_if_live_refused)
    assert f["mode"] == "blast" and f["sent"] > 100000 and f["received"] > 0, f
    assert lo_prog(net) is None, "hgload's link leaves with it"


def test_a_link_replay_is_refused_where_it_cannot_run(net):
    """Outside a namespace of its own (its program would sit on the host's
    loopback), over memif, without a rate, while another replay holds
    the namespace's loopback, or on a kernel that refuses a live test run:
    a clear error, nothing attached."""
    base = [os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:9", "--replay",
            "--duration", "0.2"]
    r = run(*base, "--rate", "1000", check=False)
    assert r.returncode != 0 and "network namespace of its own" in r.stderr, r.stderr
    r = run(*base, "--memif", "@nowhere", "--rate", "1000", check=False)
    assert r.returncode != 0 and "over kernel sockets" in r.stderr, r.stderr
    r = net.exec(*base, check=False)
    assert r.returncode != 0 and "--rate FRAMES_PER_S" in r.stderr, r.stderr
    holder = net.popen(os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:9",
                       "--replay", "--rate", "1000", "--duration", "2",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if lo_prog(net) is not None or holder.poll() is not None:
                break
            time.sleep(0.01)
        if holder.poll() is not None:
            # a kernel that refuses a live test run: that refusal is as
            # clear, and comes before anything is attached
            err = holder.communicate()[1]
            assert LIVE_REFUSED in err and lo_prog(net) is None, err
            return
        assert lo_prog(net) is not None
        r = net.exec(*base, "--rate", "1000", check=False)
        assert r.returncode != 0 and "XDP program already" in r.stderr, r.stderr
    finally:
        holder.kill()
        holder.communicate()
    assert lo_prog(net) is None


def test_a_link_replay_nobody_takes_says_why():
    """A veth whose other end has neither an XDP program nor GRO drops
    every frame the replay transmits, and no counter shows it: hgload says
    so when not one answer came back, and where to look."""
    n = Netns("rq")
    try:
        run("ip", "addr", "add", f"{DAEMON_IP}/24", "dev", n.host_if)
        run("ethtool", "-K", n.host_if, "gro", "off")
        r = n.exec(os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:9", "--replay",
                   "--blast", "--rate", "20000", "--duration", "0.3", "--json", check=False)
        skip_if_live_refused(r.returncode, r.stderr)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["sent"] > 1000
        assert "not one answer" in r.stderr and "gro on" in r.stderr, r.stderr
    finally:
        n.close()


def peer_prog(net):
    """The XDP program on the namespace's end of the link, or None."""
    out = net.exec("ip", "-j", "link", "show", net.peer_if).stdout
    return (json.loads(out)[0].get("xdp") or {}).get("prog", {}).get("id")


def test_a_link_bounce_keeps_requests_going_round(net, xdp):
    """hgload --bounce: an XDP program on the namespace's end of the link
    sends every answer back to the daemon as a new request, so that each
    request the top-up sent is answered many times over (the echo's
    throughput, not the sender's), for two loads at once, each counted
    apart; turned requests carry no UDP checksum and the daemon takes
    them. The program goes when hgload does."""
    ports = {"bounced": 9460, "bounced2": 9461}
    apps = []
    for t, port in ports.items():
        xdp.hgctl("tenant", "add", t, "--ports", f"{port}-{port}")
        apps.append(xdp.echo(t, port, cpus="0"))
    try:
        load = ["--bounce", "--rate", "2000", "--flows", "4", "--duration", "1"]
        r = net.exec("taskset", "-c", "0", os.path.join(BIN, "hgload"), "--json",
                     "--target", f"{DAEMON_IP}:9460", *load,
                     "--and", "--target", f"{DAEMON_IP}:9461", *load)
    finally:
        for a in apps:
            a.stop()
    res = json.loads(r.stdout)
    for t, b in zip(ports, res):
        assert b["mode"] == "bounce" and b["sent"] >= 1000, b
        assert b["received"] >= 3 * b["sent"], b
        rx = xdp.tenant_stats(t)["total"]["rx"]["packets"]
        assert rx >= b["received"] * 0.9, (t, rx, b)
    assert peer_prog(net) is None, "hgload's program leaves with it"


def test_a_link_bounce_saturates_the_core_and_is_shed_in_the_driver(net, xdp):
    """What the replay test above checks, on a kernel that refuses the
    replay: a tenant's requests kept going round by hgload --bounce (1400
    B, 16 flows, its top-up making up what is shed) take every cycle the
    core has, so RX sheds that tenant and the program drops its datagrams
    in the driver, while a victim beside it loses nothing and is never
    dropped."""
    f = shed_beside_a_victim(net, xdp, "b", 9442, 9452, ["--bounce", "--rate", "20000"])
    assert f["mode"] == "bounce" and f["received"] > 3 * f["sent"], f
    assert peer_prog(net) is None, "hgload's program leaves with it"


@contextlib.contextmanager
def kernel_echo(tag, port, gro, batch=1):
    """A namespace of its own whose veth's host end has the daemon's
    address, GRO on or off, and udp-echo on port behind it (the kernel's
    stack, as bench/versus-kernel's baseline); yields the namespace."""
    n = Netns(tag)
    echo = None
    try:
        run("ip", "addr", "add", f"{DAEMON_IP}/24", "dev", n.host_if)
        run("ethtool", "-K", n.host_if, "gro", "on" if gro else "off")
        echo = subprocess.Popen([os.path.join(BIN, "udp-echo"), "--bind", DAEMON_IP,
                                 "--port", str(port), "--seconds", "20",
                                 "--batch", str(batch)], stdout=subprocess.PIPE, text=True)
        assert "ready" in echo.stdout.readline()
        yield n
    finally:
        if echo is not None:
            echo.terminate()
            echo.wait(10)
        n.close()


def bounce(n, port, duration):
    """hgload --bounce from namespace n to port at 2,000 top-ups a second."""
    return n.exec(os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:{port}",
                  "--bounce", "--rate", "2000", "--flows", "4", "--duration", str(duration),
                  "--json")


@pytest.mark.parametrize("batch", [1, 32])
def test_the_kernel_baseline_echoes_and_the_bounce_turns_its_answers(batch):
    """udp-echo, plain and batched (recvmmsg/sendmmsg), answers every
    datagram byte-exact; and hgload --bounce keeps requests going round
    through the kernel's stack too (the host end with GRO: its NAPI). It
    did not, twice: XDP_TX's frames never woke that NAPI (256 filled its
    ring and stayed), and the kernel's answers, checksummed by offload,
    failed its own check once turned."""
    with kernel_echo("ke", 9470, gro=True, batch=batch) as n:
        s = n.socket()
        payload = bytes(range(256)) * 6
        for size in (1, 64, 1400):
            assert udp_roundtrip(s, 9470, payload[:size]) == payload[:size]
        s.close()
        b = json.loads(bounce(n, 9470, 1).stdout)
        assert b["sent"] >= 1000 and b["received"] >= 3 * b["sent"], b
        assert peer_prog(n) is None


def test_a_link_bounce_nobody_takes_says_why():
    """A veth whose other end has neither an XDP program nor GRO drops
    every frame the bounce turns, unseen by any counter: each top-up's
    answer is turned once, and hgload says where to look."""
    with kernel_echo("kg", 9471, gro=False) as n:
        r = bounce(n, 9471, 0.5)
        b = json.loads(r.stdout)
        assert b["received"] < 2 * b["sent"], b
        assert "do not come round" in r.stderr and "gro on" in r.stderr, r.stderr


def test_a_link_bounce_is_refused_where_it_cannot_run(net):
    """Over memif, with --replay, or to a target it cannot reach: a clear
    error, nothing attached."""
    base = [os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:9", "--bounce",
            "--rate", "100", "--duration", "0.2"]
    r = run(*base, "--memif", "@nowhere", check=False)
    assert r.returncode != 0 and "over kernel sockets" in r.stderr, r.stderr
    r = net.exec(*base, "--replay", check=False)
    assert r.returncode != 0 and "not with --replay" in r.stderr, r.stderr
    r = net.exec(os.path.join(BIN, "hgload"), "--target", "198.18.0.77:9", *base[3:],
                 check=False)
    assert r.returncode != 0 and "not in the ARP table" in r.stderr, r.stderr
    assert peer_prog(net) is None


def test_hostile_frames_are_counted_and_the_link_serves_on(net, xdp):
    """Truncated headers, IP options, fragments, wrong versions and
    lengths, to the daemon's MAC: counted, never a crash."""
    import random
    rnd = random.Random(7)
    mac = bytes.fromhex(net.mac.replace(":", ""))
    s = net.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((net.peer_if, 0))
    ip = socket.inet_aton(DAEMON_IP)
    for i in range(2000):
        head = bytearray(b"\x45\x00\x00\x1c\x00\x01\x00\x00\x40\x11\x00\x00" +
                         socket.inet_aton("198.18.0.2") + ip +
                         b"\x9c\x40\x24\xc2\x00\x08\x00\x00")
        for _ in range(rnd.randrange(1, 4)):
            head[rnd.randrange(len(head))] = rnd.randrange(256)
        s.send(mac + b"\x02\x00\x00\x00\x00\x02\x08\x00" + bytes(head[:rnd.randrange(len(head) + 1)]))
    s.close()
    assert xdp.proc.poll() is None
    other = xdp.stats()["xdp_other"]
    assert other["passed"] > 0, "frames of no tenant are counted too"
    echoes(net, xdp, "after", 9430, b"still here")


def test_a_second_daemon_on_the_interface_is_refused(net, xdp):
    with pytest.raises(RuntimeError, match="another hourglassd serves this interface"):
        Daemon(net.ns[3:] + "y", xdp_vdev(net))


def test_a_killed_daemons_program_is_removed_at_the_next_start(net):
    other = f"{net.host_if}k"
    run("ip", "link", "add", other, "type", "veth", "peer", "name", other[:-1] + "l")
    try:
        run("ip", "link", "set", other, "up")
        d = Daemon(net.ns[3:] + "k", f"net_af_xdp0,iface={other}")
        d.stop(signal.SIGKILL)
        prog = json.loads(run("ip", "-j", "link", "show", other).stdout)[0].get("xdp")
        assert prog is not None, "a killed daemon's PMD could not detach it"
        d = Daemon(net.ns[3:] + "k", f"net_af_xdp0,iface={other}")
        assert "detached the XDP program a daemon that died left" in d.logtext()
        assert d.stop() == 0, d.logtext()
        assert json.loads(run("ip", "-j", "link", "show", other).stdout)[0].get("xdp") is None
    finally:
        run("ip", "link", "del", other, check=False)


def test_every_queue_of_a_multiqueue_interface_is_read():
    """A veth of four queues: the namespace hashes each flow to one, and
    the device hands a queue's frames to that queue's socket only. With
    one vdev the daemon read queue 0 alone, and the flows hashed to the
    others went to the kernel's stack unanswered; it says so now. With a
    vdev per queue (start_queue=0..3; the later sockets join the first's
    program through libxdp) every flow is answered and every queue
    carries some. Each queue's fill ring keeps 2,048 mbufs: the fourth
    found the pool empty until the pool counted them."""
    net = Netns(f"{os.getpid() % 10000}mq", queues=4)
    try:
        one = Daemon(net.ns[3:] + "1", f"net_af_xdp0,iface={net.host_if}")
        assert one.stop() == 0, one.logtext()
        assert "has 4 RX queues, the daemon reads 1" in one.logtext()
        d = Daemon(net.ns[3:], [f"net_af_xdp{q},iface={net.host_if},start_queue={q}"
                                for q in range(4)])
        try:
            assert "(4 vdevs)" in d.logtext() and "the daemon reads" not in d.logtext()
            d.hgctl("tenant", "add", "gold", "--ports", "9450-9450")
            assert "4 link queues read, each shared" in d.hgctl("tenant", "list").stdout
            e = d.echo("gold", 9450)
            try:
                socks = [net.socket() for _ in range(64)]
                got = [udp_roundtrip(s, 9450, b"flow %d" % i) for i, s in enumerate(socks)]
                for s in socks:
                    s.close()
            finally:
                e.stop()
            queues = d.stats()["cores"][0]["rx_queues"]
        finally:
            assert d.stop() == 0, d.logtext()
        assert got == [b"flow %d" % i for i in range(64)]
        assert sorted(q["port"] for q in queues) == [0, 1, 2, 3]
        assert all(q["packets"] > 0 for q in queues), queues
        assert attached(net) is None, "the PMD detaches the program at exit"
    finally:
        net.close()


def test_vdevs_of_two_interfaces_or_one_queue_twice_are_refused():
    """Several net_af_xdp vdevs are the queues of one interface: a vdev of
    another interface is refused before EAL starts, and two vdevs on one
    device queue (the second's socket would take the first's place in the
    program's map) once the ports are up, with the program removed."""
    net = Netns(f"{os.getpid() % 10000}rf", queues=2)
    other = f"{net.host_if}o"
    try:
        run("ip", "link", "add", other, "type", "veth", "peer", "name", other[:-1] + "p")
        with pytest.raises(RuntimeError, match="one interface is served"):
            Daemon(net.ns[3:] + "o", [f"net_af_xdp0,iface={net.host_if}",
                                      f"net_af_xdp1,iface={other}"])
        with pytest.raises(RuntimeError, match="start_queue|setup failed"):
            Daemon(net.ns[3:] + "q", [f"net_af_xdp{q},iface={net.host_if},start_queue=0"
                                      for q in (0, 1)])
        assert attached(net) is None, "a failed start leaves no program attached"
    finally:
        run("ip", "link", "del", other, check=False)
        net.close()

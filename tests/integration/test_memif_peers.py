"""The daemon's memif server against the peers a host can throw at it:
peers that come and go at random gaps with any ring count, under traffic
(DPDK's server crashed on this), and a hostile peer that lies in its
handshake and in its descriptors. The daemon stays up, serves the next
peer, and counts what it refused."""
import os
import random
import shutil
import stat
import subprocess
import time

import pytest

from hg import BIN, DAEMON_IP, PEER_IP, fast_path_tids, memif_daemon
from memif_peer import (ACK, ADD_REGION, COOKIE, NEXT, Peer, Refused, ring_bytes,
                        udp_frame)

DMAC = "02:48:47:00:00:01"      # the daemon's default on memif
PMAC = "02:00:00:00:00:02"
PORT = 7900


@pytest.fixture(scope="module")
def md():
    """A daemon offering 2 rings each way (--rx-queues 2: one per RX queue
    towards it, one per RX queue back), with an echo tenant on PORT."""
    d = memif_daemon(f"{os.getpid() % 10000}mp", extra=("--rx-queues", "2"))
    d.hgctl("tenant", "add", "pe", "--ports", f"{PORT}-{PORT}")
    echo = d.echo("pe", PORT, cpus="0")
    yield d
    echo.stop()
    assert d.stop() == 0, d.logtext()
    assert not os.path.exists(d.memif), "the daemon removes its memif socket"
    assert "Sanitizer" not in d.logtext() and "runtime error" not in d.logtext()


def requests(n, tag=0):
    return [udp_frame(DMAC, PMAC, PEER_IP, DAEMON_IP, 20000 + k % 8, PORT,
                      b"r%d-%05d" % (tag, k)) for k in range(n)]


def served(d, peer, n=32, tag=0):
    """Answers to n requests from peer (the first round may go to ARP)."""
    got = []
    for _ in range(3):
        got = peer.echo_round(requests(n, tag), PMAC, PEER_IP, wait=0.4)
        if got:
            break
    return got


def a_new_peer_is_served(d, tag):
    p = Peer(d.memif)
    try:
        return len(served(d, p, tag=tag)) > 0
    finally:
        p.close()


def hgload_answers(d, seconds=0.3):
    r = subprocess.run([os.path.join(BIN, "hgload"), "--memif", d.memif, "--target",
                        f"{DAEMON_IP}:{PORT}", "--rate", "2000", "--duration", str(seconds),
                        "--timeout-ms", "1000", "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    import json
    return json.loads(r.stdout)


def run_testpmd(d, queues, seconds):
    """dpdk-testpmd as the peer with `queues` queue pairs, sending to the
    echo's port for about `seconds`."""
    prefix = f"tpp{os.getpid() % 10000}"
    cmd = ["timeout", "-s", "INT", str(seconds), "dpdk-testpmd", "--no-huge", "-m", "512",
           "--no-pci", "--no-shconf", "--file-prefix", prefix, "--lcores", "0@0,1@0",
           f"--vdev=net_memif0,role=client,socket={d.memif},socket-abstract=no", "--",
           "--forward-mode=txonly", f"--tx-ip={PEER_IP},{DAEMON_IP}",
           f"--tx-udp=9,{PORT}", f"--eth-peer=0,{DMAC}", "--txpkts=64",
           f"--rxq={queues}", f"--txq={queues}", "--nb-cores=1",
           "--total-num-mbufs=16384", "--stats-period=1"]
    try:
        subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30)
    finally:
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)


def test_the_socket_is_a_file_only_its_owner_may_use(md):
    st = os.stat(md.memif)
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600


def test_peers_come_and_go_with_any_ring_count(md):
    """Twelve peers in a row, each of a random kind and ring count, each
    gone at a random moment, the next after a random gap (0 to 1.2 s):
    the daemon polls only the rings each gave, refuses a ring it does
    not have, and serves every peer that fits."""
    rng = random.Random(int(os.environ.get("HG_SEED", time.time())))
    # first what crashed DPDK's server: testpmd a second after hgload left
    kinds = ["hgload", "testpmd"] + [rng.choice(["py", "py", "testpmd", "hgload"])
                                     for _ in range(10)]
    for i, kind in enumerate(kinds):
        if kind == "py":
            n_rx, n_tx = rng.randint(1, 3), rng.randint(1, 3)
            if n_rx > 2 or n_tx > 2:
                with pytest.raises(Refused, match="Invalid ring index"):
                    Peer(md.memif, n_rx=n_rx, n_tx=n_tx).close()
                continue
            p = Peer(md.memif, n_rx=n_rx, n_tx=n_tx, log2=rng.choice([4, 8, 10]))
            try:
                assert served(md, p, tag=i), f"peer {i}: {n_rx} rings, no answer"
            finally:
                p.close(say_goodbye=rng.random() < 0.5)
        elif kind == "testpmd":
            run_testpmd(md, rng.randint(1, 3), 1)
        else:
            r = hgload_answers(md)
            assert r["received"] == r["sent"] > 0, r
        time.sleep(1 if i == 0 else rng.uniform(0, 1.2))
        assert md.proc.poll() is None, md.logtext()
    r = hgload_answers(md, 1)
    assert r["received"] == r["sent"] > 1000, r


def refused_for(md, why, setup):
    """A fresh peer that misbehaves as setup(peer) says is refused with a
    reason that contains why."""
    p = Peer(md.memif, connect=False)
    try:
        with pytest.raises(Refused, match=why):
            setup(p)
            p.recv()
    finally:
        p.close()


def region_of(p, size, seal=True, cookie=True, announce=None):
    fd = p.region(size, seal)
    if cookie:
        import mmap
        import struct
        with mmap.mmap(fd, size) as m:
            struct.pack_into("<I", m, 0, COOKIE)
    p.add_region(fd, announce or size)


def test_a_lying_handshake_is_refused_with_its_reason(md):
    size = 1 << 16
    refused_for(md, "Unexpected message", lambda p: p.add_region(p.region(size), size))
    refused_for(md, "Invalid message size", lambda p: p.sock.send(b"\x03\x00"))
    refused_for(md, "ID not found", lambda p: p.init(id_=7))
    refused_for(md, "Incompatible", lambda p: p.init(version=0x0100))

    def connect_with(region=size, ring=(0, 0), **lie):
        """INIT, one region (region_of's lies), one C2S ring (index,
        offset), CONNECT."""
        def go(p):
            p.init()
            region_of(p, region, **lie)
            p.add_ring(True, *ring)
            p.connect()
        return go

    refused_for(md, "sealed against shrinking", connect_with(seal=False))
    refused_for(md, "smaller than announced", connect_with(region=4096, announce=size))
    refused_for(md, "Ring outside its region", connect_with(ring=(0, size - 64)))
    refused_for(md, "Wrong ring cookie", connect_with(cookie=False))
    refused_for(md, "numbered from 0", connect_with(ring=(1, 0)))

    def twice(p):
        p.init()
        region_of(p, size)
        p.add_ring(True, 0, 0)
        p.add_ring(True, 0, 0)
    refused_for(md, "Ring given twice", twice)

    def huge(p):
        p.init()
        p.add_ring(True, 0, 0, log2=15)
    refused_for(md, "Ring too large", huge)

    def region_without_fd(p):
        p.init()
        import struct
        p.send(ADD_REGION, struct.pack("<HQ", 0, size))
        p.recv(ACK)
    refused_for(md, "Missing region fd", region_without_fd)

    # a second peer while one holds the link
    holder = Peer(md.memif)
    try:
        refused_for(md, "Already connected", lambda p: p.init())
    finally:
        holder.close()
    assert md.proc.poll() is None
    assert a_new_peer_is_served(md, 99)


def test_lying_descriptors_are_counted_and_hurt_nobody(md):
    """A connected peer whose descriptors point outside its region, claim
    4 GiB, chain, or whose head jumps ahead by 60,000 slots; and whose
    posted receive buffers are out of bounds or too small. Each is
    counted as bad_link_descriptor; the daemon stays up and the next peer
    is served."""
    before = md.core_drops().get("bad_link_descriptor", 0)
    p = Peer(md.memif, log2=6)
    try:
        size = p.buf_off(p.n_rx + p.n_tx, 0)
        good = requests(1)[0]
        off = p.buf_off(0, 0)
        p.map[off:off + len(good)] = good
        lies = [(0, 3, len(good), off),                  # no region 3
                (0, 0, 4096, size - 100),               # past the region's end
                (0, 0, 0xffffffff, off),                # 4 GiB
                (0, 0, 0, off),                         # empty
                (0, 0, 9000, off),                      # more than an mbuf holds
                (NEXT, 0, len(good), off), (0, 0, len(good), off)]   # a chain
        for k, dsc in enumerate(lies):
            p.desc(0, k, *dsc)
        p.set_head(0, len(lies))
        time.sleep(0.3)
        # receive buffers the daemon cannot use, then a head far ahead
        ring = p.n_rx
        for k in range(p.slots):
            p.desc(ring, k, 0, 0, 10 if k % 2 else 64, size + 4096 * (k % 2 == 0))
        p.set_head(ring, p.tail(ring) + p.slots)
        p.set_head(0, p.head(0) + 60000)
        time.sleep(0.3)
        p.echo_round(requests(16), PMAC, PEER_IP, wait=0.3)
    finally:
        p.close()
    assert md.proc.poll() is None, md.logtext()
    assert md.core_drops().get("bad_link_descriptor", 0) - before >= 6
    assert a_new_peer_is_served(md, 98)
    r = hgload_answers(md)
    assert r["received"] == r["sent"] > 0, r


def test_stats_show_the_peer_and_the_handshakes_refused(md):
    """`hgctl stats` shows the memif link: the peer connected, with its
    rings, and the handshakes served and refused, the last refusal's
    reason too; once the peer leaves, no peer."""
    before = md.stats()["memif"]
    refused_for(md, "ID not found", lambda p: p.init(id_=7))
    p = Peer(md.memif)
    try:
        assert served(md, p)
        m = md.stats()["memif"]
        assert m["connected"] and m["peer"] == "pytest0", m
        assert (m["rx_rings"], m["tx_rings"], m["ring_slots"]) == (1, 1, 256), m
        assert m["connects"] == before["connects"] + 1, (before, m)
        assert m["refused"] == before["refused"] + 1 and "ID not found" in m["refusal"], m
        assert "memif link: peer 'pytest0'" in md.hgctl("stats").stdout
    finally:
        p.close()
    deadline = time.monotonic() + 5
    while md.stats()["memif"]["connected"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not md.stats()["memif"]["connected"]


def fast_path_faults(d):
    """Page faults the daemon's fast-path threads have taken (minflt and
    majflt of each)."""
    total = 0
    for tid in fast_path_tids(d):
        try:
            with open(f"/proc/{d.proc.pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[7]) + int(fields[9])     # minflt, majflt
    return total


def test_a_new_peer_costs_the_fast_path_no_page_faults(md):
    """The daemon maps a peer's allocated pages at the handshake (and
    hgload allocates its region at once, as a NIC's buffers are pinned):
    the fast path, which reads every request from a fresh peer's buffers
    and writes every answer into them, takes no page fault on them. Before,
    each of the 2 x 1,024 buffers of 2 KB cost it one fault per page."""
    assert hgload_answers(md)["received"] > 0      # the daemon's own memory warm
    before = fast_path_faults(md)
    r = hgload_answers(md, seconds=1.0)
    faults = fast_path_faults(md) - before
    assert r["received"] >= 1500, r
    assert faults < 200, f"{faults} page faults on the fast path for {r['received']} answers"

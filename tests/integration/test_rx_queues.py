"""Per-tenant RX queues (design.md §3): where the link can
steer by UDP port, tenants get RX queues of their own, `hgctl tenant
list` shows the map, memif peers (hgload, hg-memif-bridge) steer by it,
and RX polls a funded tenant's queue before an out-of-budget one's.
Where the link cannot steer (af_packet), the daemon says "shared queue"."""
import json
import os
import subprocess

import pytest

from hg import BIN, DAEMON_IP, Bridge, Daemon, tenant_drops as drops, victim_and_sink

VICTIM, SINK, PINNED, NOISY, BIG = 7500, 7600, 7700, 7850, 7870


def rx_queues(d):
    return {q["group"]: q for q in d.stats()["cores"][0]["rx_queues"]}


def tx_queues(d):
    """Frames sent on each TX group's own ring of core 0, by group."""
    return d.stats()["cores"][0]["tx_queues"]


def test_af_packet_reports_a_shared_queue(net):
    d = Daemon(f"{net.ns[3:]}q", f"net_af_packet0,iface={net.host_if}",
               extra=["--rx-queues", "4"])
    try:
        d.hgctl("tenant", "add", "a", "--ports", "7000-7001", "--rx-queue", "2")
        lst = json.loads(d.hgctl("tenant", "list", "--json").stdout)
        human = d.hgctl("tenant", "list").stdout
        cores = d.stats()["cores"]
    finally:
        assert d.stop() == 0, d.logtext()
    assert (lst["rx_steering"], lst["rx_queues_per_core"], lst["fp_cores"]) == \
        ("shared queue", 1, 1)
    assert lst["tenants"][0]["rx_queue"] == 0       # the setting cannot apply here
    assert "1 queue per fast-path core x 1 core (shared queue)" in human
    assert "cannot steer by UDP port" in d.logtext()
    assert [q["queue"] for q in cores[0]["rx_queues"]] == [0]


@pytest.fixture(scope="module")
def mq(net):
    """A memif daemon with four RX queues per core, a victim (hg-echo),
    an RX-only sink and a tenant pinned to queue 3."""
    def pinned(d, apps):
        d.hgctl("tenant", "add", "pinned", "--ports", f"{PINNED}-{PINNED}", "--rx-queue", "3")
        apps.append(d.echo("pinned", PINNED))
    with victim_and_sink(f"{os.getpid() % 10000}rxq", VICTIM, SINK, extra=["--rx-queues", "4"],
                         mac=net.mac, more=pinned) as d:
        yield d


def test_tenants_get_queues_of_their_own_and_the_list_shows_the_map(mq):
    lst = json.loads(mq.hgctl("tenant", "list", "--json").stdout)
    q = {t["name"]: t["rx_queue"] for t in lst["tenants"]}
    assert (lst["rx_steering"], lst["rx_queues_per_core"]) == ("memif peer", 4)
    # auto: the queue fewest tenants share; a setting: that queue
    assert q["victim"] != q["sink0"] and q["pinned"] == 3, q
    assert mq.hgctl("tenant", "get", "pinned", "rx-queue").stdout == "3\n"
    assert "rx queue 3" in mq.logtext()
    assert [c["queue"] for c in mq.stats()["cores"][0]["rx_queues"]] == [0, 1, 2, 3]


def test_a_queue_that_does_not_exist_is_refused(mq):
    r = mq.hgctl("tenant", "add", "far", "--ports", "7800-7800", "--rx-queue", "5",
                 check=False)
    assert r.returncode != 0 and "rx-queue 5: the port has 4 RX queues per core" in r.stderr
    r = mq.hgctl("tenant", "set", "pinned", "--rx-queue", "1", check=False)
    assert r.returncode != 0 and "rx-queue" in r.stderr    # fixed once added


def test_the_bridge_steers_each_tenant_to_its_queue(net, mq):
    """Datagrams from the namespace's kernel sockets arrive on the queue of
    the tenant they are for: the bridge read the map. (The memif socket
    takes one peer: the bridge is gone before the next test's hgload.)"""
    q = {t["name"]: t["rx_queue"] for t in mq.tenants().values()}
    bridge = Bridge(net, mq.memif, rx_map=mq.rx_map())
    try:
        before = rx_queues(mq)
        out = net.exec(os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:{PINNED}",
                      "--rate", "500", "--duration", "0.4", "--json").stdout
        after = rx_queues(mq)
    finally:
        assert bridge.stop() == 0, bridge.said
    # what is asserted is where datagrams arrived; the bridge, slow under
    # the sanitizers, may drop a few of a burst
    assert json.loads(out)["received"] >= 0.9 * json.loads(out)["sent"], out
    grew = {g for g in after if after[g]["packets"] > before[g]["packets"]}
    assert q["pinned"] in grew and q["victim"] not in grew and q["sink0"] not in grew, \
        (before, after)


def test_each_queue_answers_on_a_tx_ring_of_its_own(mq):
    """hgload gives a ring back per TX group, as many as RX queues by
    default, each tenant's its RX queue's: each tenant's answers leave on
    its own, as from a NIC's TX queue per tenant, and wait behind nobody
    else's; the sink, which answers nothing, sends none."""
    q = {t["name"]: t["tx_queue"] for t in mq.tenants().values()}
    assert q == {t["name"]: t["rx_queue"] for t in mq.tenants().values()}
    before = tx_queues(mq)
    cmd = ["taskset", "-c", "0", os.path.join(BIN, "hgload"), "--memif", mq.memif,
           "--rx-map", mq.rx_map(), "--target", f"{DAEMON_IP}:{VICTIM}", "--rate", "500",
           "--duration", "0.5", "--json", "--and", "--target", f"{DAEMON_IP}:{PINNED}",
           "--rate", "300", "--duration", "0.5"]
    victim, pinned = json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                                               check=True).stdout)
    after = tx_queues(mq)
    sent = [a - b for a, b in zip(after, before)]
    assert sent[q["victim"]] >= victim["received"] > 0, (sent, victim)
    assert sent[q["pinned"]] >= pinned["received"] > 0, (sent, pinned)
    assert sent[q["sink0"]] == 0, sent
    # only the core's own frames (ARP) on queue 0's, which no tenant has
    assert sent[0] < 10, sent


def run(d, rx_map, secs=2.0, port=SINK, size=64):
    """The victim at 2,000 req/s and a 16-flow blast of size-byte
    datagrams to port (the sink's), through one hgload on the daemon's
    memif port that steers by rx_map."""
    cmd = ["taskset", "-c", "0", os.path.join(BIN, "hgload"), "--memif", d.memif,
           "--rx-map", rx_map, "--source", "198.18.0.9",
           "--target", f"{DAEMON_IP}:{VICTIM}", "--rate", "2000", "--duration", str(secs),
           "--timeout-ms", "500", "--json",
           "--and", "--target", f"{DAEMON_IP}:{port}", "--blast", "--flows", "16",
           "--size", str(size), "--duration", str(secs), "--timeout-ms", "100"]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                                     check=True).stdout)


def test_a_floods_answers_are_counted_unread_on_a_ring_of_their_own(mq):
    """A flood's answers go to the flood's host, not to the prober's: on
    a ring back that carries one blast's answers and no timed load's,
    hgload's replay gives them back unread and counts them, and its
    receiver, which times the victim, never sees them. Every answer
    counted is one the daemon sent on that queue's ring."""
    q = {t["name"]: t["tx_queue"] for t in mq.tenants().values()}
    before = tx_queues(mq)
    victim, blast = run(mq, mq.rx_map(), secs=1.0, port=PINNED)
    after = tx_queues(mq)
    sent = after[q["pinned"]] - before[q["pinned"]]
    assert victim["lost"] == 0 and victim["send_errors"] == 0, victim
    # what still came after the replay's last look is not counted
    assert 0.5 * sent <= blast["received"] <= sent, (sent, blast)
    assert blast["received"] > 1000, blast


def test_a_flood_its_app_cannot_take_stays_in_the_link(mq):
    """The sink never reads: once its ring is full, RX leaves its queue
    unread (held) and the link keeps or drops the flood, at no cost to
    the core. Before, RX took every frame of it only to drop it at the
    full ring (bench/isolation's echoed flood: 65% of its frames so)."""
    q = {t["name"]: t["rx_queue"] for t in mq.tenants().values()}
    sink0 = lambda: drops(mq.tenant_stats("sink0"))          # noqa: E731
    before, d0 = rx_queues(mq), sink0()
    victim, blast = run(mq, mq.rx_map())
    after, d1 = rx_queues(mq), sink0()
    assert victim["lost"] == 0 and victim["send_errors"] == 0, victim
    assert after[q["sink0"]]["held"] > before[q["sink0"]]["held"], (before, after)
    # the daemon took no more of the flood than the ring had room for
    # (its 511 slots; hgload counts what the daemon consumed: the same),
    # and dropped none of it
    took = after[q["sink0"]]["packets"] - before[q["sink0"]]["packets"]
    assert took <= 1024 and blast["sent"] <= 1024, (took, blast)
    assert {k: d1[k] - d0.get(k, 0) for k in d1 if d1[k] != d0.get(k, 0)} == {}, (d0, d1)
    # nobody else's queue is held: the victim's ring always had room
    assert all(after[g]["held"] == before[g]["held"] for g in after if g != q["sink0"])
    assert victim["latency_us"]["p99"] < 50_000, victim


def test_an_over_budget_tenant_waits_in_its_own_queue(mq, cleanup):
    """A neighbour that answers its flood and is far over its share
    (weight 0.1, 20,000 cycles of synthetic work a datagram, so that the
    core saturates): while it is out of budget, its queue waits for the
    passes in which the victim's had nothing, and the victim loses
    nothing. (The sink's flood showed this before held queues; a flood
    into an app that never reads now stays in the link.)"""
    # on the pinned tenant's queue (idle here), not the victim's
    mq.hgctl("tenant", "add", "noisy", "--ports", f"{NOISY}-{NOISY}", "--weight", "0.1",
             "--extra-cycles", "20000", "--rx-queue", "3")
    try:
        cleanup.append(mq.echo("noisy", NOISY, cpus="0"))
        q = {t["name"]: t["rx_queue"] for t in mq.tenants().values()}
        before = rx_queues(mq)
        victim, blast = run(mq, mq.rx_map(), port=NOISY)
        after = rx_queues(mq)
    finally:
        while cleanup:
            cleanup.pop().stop()
        mq.hgctl("tenant", "del", "noisy")
    assert blast["received"] > 0, blast
    assert victim["lost"] == 0 and victim["send_errors"] == 0, victim
    waited = {n: after[q[n]]["deferred"] - before[q[n]]["deferred"] for n in ("victim", "noisy")}
    assert waited["noisy"] > 0.1 * victim["sent"], (waited, victim)
    # the victim may run out of budget for a moment (one slow doorbell
    # costs more than a quantum); its queue waits at most a few percent
    # of the neighbour's
    assert waited["victim"] <= 0.05 * waited["noisy"], waited
    assert victim["latency_us"]["p99"] < 50_000, victim


def test_a_flood_burst_stops_for_a_neighbours_work(mq, cleanup):
    """RX reads a flood's own queue in bursts of 32 frames; at 1400 B one
    is ~12 us, and a victim's datagram or answer that came meanwhile
    waited it out. With protection on, the burst looks every 2 us and
    stops there once another tenant has work (rx_cuts), leaving the rest
    of the flood in the link for the next pass; with it off, it never
    does. The victim loses nothing. The flood gets the queue nobody has:
    on the pinned tenant's (3), it shared it, no burst of it was ever
    its own, and the cuts counted were the victim's bursts, stopped for
    the flood's work whenever the core lost its CPU mid-burst.

    The flood's SCHED batches are cut the same way (sched_yields), and
    the pass then serves the work they were cut for before its send
    (cut_passes), never more often than batches were cut; with
    protection off, neither happens."""
    used = {t["rx_queue"] for t in mq.tenants().values()}
    free = sorted(set(range(4)) - used)
    assert free, used
    mq.hgctl("tenant", "add", "big", "--ports", f"{BIG}-{BIG}", "--rx-queue", str(free[0]))
    core = lambda: mq.stats()["cores"][0]                     # noqa: E731
    cuts = lambda: core()["rx_cuts"]                          # noqa: E731
    passes = lambda: (core()["cut_passes"], core()["sched_yields"])  # noqa: E731
    try:
        cleanup.append(mq.echo("big", BIG, cpus="0"))
        c0, p0 = cuts(), passes()
        on, blast = run(mq, mq.rx_map(), port=BIG, size=1400)
        c1, p1 = cuts(), passes()
        mq.hgctl("config", "set", "protection", "off")
        try:
            off, _ = run(mq, mq.rx_map(), secs=1.0, port=BIG, size=1400)
            c2, p2 = cuts(), passes()
        finally:
            mq.hgctl("config", "set", "protection", "on")
    finally:
        while cleanup:
            cleanup.pop().stop()
        mq.hgctl("tenant", "del", "big")
    assert blast["received"] > 0, blast
    assert c1 > c0, (c0, c1)
    assert c2 == c1, (c1, c2)
    served, cut = p1[0] - p0[0], p1[1] - p0[1]
    assert 0 < served <= cut, (p0, p1)
    assert p2 == p1, (p1, p2)
    assert on["lost"] == 0 and on["send_errors"] == 0, on
    assert off["received"] > 0, off


def test_without_protection_no_queue_waits(mq):
    mq.hgctl("config", "set", "protection", "off")
    try:
        before = rx_queues(mq)
        run(mq, mq.rx_map(), secs=1.0)
        after = rx_queues(mq)
    finally:
        mq.hgctl("config", "set", "protection", "on")
    assert all(after[g]["deferred"] == before[g]["deferred"] for g in after), (before, after)


ECHOED = 7650


@pytest.fixture(scope="module")
def shared_rx(net):
    """A memif daemon with one shared RX queue and three TX groups per
    core: a victim (hg-echo), an RX-only sink and an echoed flood's
    tenant."""
    def echoed(d, apps):
        d.hgctl("tenant", "add", "echoed", "--ports", f"{ECHOED}-{ECHOED}")
        apps.append(d.echo("echoed", ECHOED, cpus="0"))
    with victim_and_sink(f"{os.getpid() % 10000}txq", VICTIM, SINK,
                         extra=["--rx-queues", "1", "--tx-queues", "3"], mac=net.mac,
                         more=echoed) as d:
        yield d


def test_on_a_shared_queue_each_tenant_answers_on_a_ring_of_its_own(shared_rx):
    """TX groups are the link's, whatever RX can steer: on one shared RX
    queue, each tenant still has a ring back of its own (the fewest
    shared; group 0's also carries ARP), `tenant list` says which, and a
    flood's answers on theirs are given back unread by hgload while the
    victim's come on the victim's."""
    lst = json.loads(shared_rx.hgctl("tenant", "list", "--json").stdout)
    g = {t["name"]: t["tx_queue"] for t in lst["tenants"]}
    assert (lst["rx_queues_per_core"], lst["tx_queues_per_core"]) == (1, 3), lst
    assert {t["rx_queue"] for t in lst["tenants"]} == {0}, lst
    assert sorted(g.values()) == [0, 1, 2], g
    assert "TX: 3 groups per core" in shared_rx.hgctl("tenant", "list").stdout
    before = tx_queues(shared_rx)
    victim, blast = run(shared_rx, shared_rx.rx_map(), secs=1.0, port=ECHOED)
    after = tx_queues(shared_rx)
    sent = [a - b for a, b in zip(after, before)]
    assert victim["lost"] == 0 and victim["send_errors"] == 0, victim
    assert sent[g["victim"]] >= victim["received"] > 0, (sent, victim)
    assert sent[g["sink0"]] == 0, sent
    # counted unread on the flood's ring; what came after the replay's
    # last look is not counted
    assert 1000 < blast["received"] <= sent[g["echoed"]], (sent, blast)

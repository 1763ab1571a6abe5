"""Time protection when a neighbour's flood saturates the fast-path core:
hgload --blast over the daemon's own memif port, a flood of
prebuilt frames from a SCHED_IDLE sender. What is asserted is what the
daemon did (its counters) and what the victim saw (lost requests, a
generous bound on its p99), never a timing of the datapath itself."""
import json
import os
import subprocess

import pytest

from hg import BIN, DAEMON_IP, memif_daemon, tenant_drops as drops, victim_and_sink, warm_up

VICTIM, SINK = 7300, 7400


@pytest.fixture(scope="module")
def flood(request):
    """A memif daemon with a victim (hg-echo) and an RX-only sink."""
    with victim_and_sink(f"{os.getpid() % 10000}sat", VICTIM, SINK) as d:
        yield d


def run(d, secs=2.0, blast_port=SINK, size=64, rx_map=None):
    """The victim at 2,000 req/s and a blast of 16 flows at once, through
    one hgload over the daemon's memif port (rx_map: each tenant's frames
    on its own queue, as the daemon's map says); their reports."""
    cmd = ["taskset", "-c", "0", os.path.join(BIN, "hgload"), "--memif", d.memif,
           *(("--rx-map", rx_map) if rx_map else ()),
           "--target", f"{DAEMON_IP}:{VICTIM}", "--rate", "2000", "--duration", str(secs),
           "--timeout-ms", "500", "--json",
           "--and", "--target", f"{DAEMON_IP}:{blast_port}", "--blast", "--flows", "16",
           "--size", str(size), "--duration", str(secs), "--timeout-ms", "100"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)


def assert_victim_kept(d, victim):
    """The daemon dropped none of the victim's datagrams, for any reason,
    and the client got back all it put on the link but for one in a
    thousand (a reply may miss hgload's 500 ms window when CPU 0 stalls:
    seen once in ~15 runs of this module in a full `make test`, with no
    drop at the daemon)."""
    assert not any(drops(d.tenant_stats("victim")).values()), drops(d.tenant_stats("victim"))
    assert victim["lost"] - victim["send_errors"] <= victim["sent"] // 1000, \
        (victim, d.core_drops())


def test_a_blast_is_counted_not_timed(flood):
    junk = flood.core_drops().get("bad_ethertype", 0)
    victim, blast = run(flood, secs=1.0)
    assert blast["mode"] == "blast" and blast["sent"] > 0, blast
    assert blast["offered_rps"] > 10 * victim["throughput_rps"], (victim, blast)
    assert blast["received"] == 0          # the sink never answers
    # each of the victim's requests reached the daemon once: its frames
    # share the replay's ring (one queue), and hgload's replay had sent
    # them again on every lap of the ring (5,360 duplicate answers to
    # 1,963 requests in a 1 s run)
    assert victim["invalid"] == 0, victim
    # and every slot of that ring the daemon took held a frame: a slot
    # the replay had not yet pointed at its frames went out as its own
    # empty buffer (190 in a 1 s run while the replay rewrote its whole
    # room after each of the victim's sends; a quarter of the ring, the
    # room it leaves the victim, once it no longer did)
    assert flood.core_drops().get("bad_ethertype", 0) == junk, flood.core_drops()
    assert_victim_kept(flood, victim)


def test_an_rx_only_flood_is_shed_at_rx_and_the_victim_loses_nothing(flood):
    """The sink never reads: its flood is dropped at RX, where the link
    left it, before a copy. Shed for its budget (rx_over_budget, billed
    to it), or at its full ring while the shared queue backs up
    (rx_ring_full, the drain's, billed to no budget: rx_gate.h's
    hg_rx_drain). Which of the two depends on how often the queue backs
    up, not on the victim, which loses nothing either way."""
    flood.hgctl("config", "set", "protection", "on")
    before = {t["name"]: t for t in flood.stats()["tenants"]}
    victim, blast = run(flood)
    after = {t["name"]: t for t in flood.stats()["tenants"]}

    def grew(key, name="sink0"):
        return after[name]["total"].get(key, 0) - before[name]["total"].get(key, 0)

    def dropped(why, name="sink0"):
        return drops(after[name]).get(why, 0) - drops(before[name]).get(why, 0)

    shed = dropped("rx_over_budget") + dropped("rx_ring_full")
    assert shed > 0, (drops(after["sink0"]), blast)
    # each drop's cycles went to the sink's shedding or to the drain
    assert grew("over_budget_drop_cycles") + grew("drain_cycles") > 0, after["sink0"]
    # every victim request that reached the daemon came back, none shed;
    # the ones hgload could not put on the link at all (the one ring the
    # blast shares with it stayed full: send_errors) never got there
    assert_victim_kept(flood, victim)
    assert dropped("rx_over_budget", "victim") == 0
    # a bound a protected victim stays far below even on a loaded CI box
    assert victim["latency_us"]["p99"] < 50_000, victim


def test_without_protection_nothing_is_shed_for_budget(flood):
    flood.hgctl("config", "set", "protection", "off")
    try:
        before = drops(flood.tenant_stats("sink0"))
        run(flood, secs=1.0)
        after = drops(flood.tenant_stats("sink0"))
    finally:
        flood.hgctl("config", "set", "protection", "on")
    assert after["rx_over_budget"] == before["rx_over_budget"]
    assert after["rx_ring_full"] > before["rx_ring_full"]   # the work was done


def test_the_pass_sends_once_and_every_frame_is_billed(flood):
    """TX is staged per core: the NIC's send is one call per pass, and each
    tenant's point shows what it spent in system calls."""
    st0 = flood.stats()
    run(flood, secs=1.0, blast_port=VICTIM)        # the victim answers a flood
    st1 = flood.stats()
    c0, c1 = st0["cores"][0], st1["cores"][0]
    sent = c1["tx_packets"] - c0["tx_packets"]
    flushes = c1["flushes"] - c0["flushes"]
    assert sent > 0 and 0 < flushes <= sent
    assert sent / flushes > 1.5, (sent, flushes)     # batched across tenants' work
    v = flood.tenant_stats("victim")["total"]
    assert v["sched"]["syscall_cycles"] > 0 and v["sched"]["syscall_cycles_per_packet"] > 0


def test_the_queueing_delay_reject_fires_under_overload(net, daemon, cleanup):
    """An RPC tenant whose app falls behind: once its queueing delay passes
    D_drop, RX answers new requests with a reject (credits 0) instead of
    queueing them (design.md §6), and says so in its own counter."""
    daemon.hgctl("tenant", "add", "slow", "--ports", "8910-8910", "--rpc-ports", "8910-8910")
    cleanup.append(daemon.echo("slow", 8910))
    before = drops(daemon.tenant_stats("slow"))
    load = net.popen(os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:8910",
                     "--rpc", "--rate", "20000", "--duration", "2", "--flows", "16",
                     "--workload", "fixed:200000", "--timeout-ms", "300", "--json",
                     stdout=subprocess.PIPE, text=True)
    out = json.loads(load.communicate(timeout=30)[0])
    after = drops(daemon.tenant_stats("slow"))
    assert after["rpc_reject_overload"] > before["rpc_reject_overload"], (after, out)
    assert out["rejected"] > 0 and out["received"] > 0, out


@pytest.mark.parametrize("rx_queues", [1, 4])
def test_weights_hold_under_saturation(rx_queues):
    """Two tenants at weights 3:1, both flooded with 1400 B datagrams that
    each cost the fast path 200,000 cycles (extra-cycles: so that the
    fast-path core, not the apps' CPU, is what saturates on a 2-CPU box),
    get 3:1 of the charged cycles: 0.75 +- 0.10 for the heavy one.
    Over one shared RX queue and over a queue each."""
    d = memif_daemon(f"{os.getpid() % 10000}w{rx_queues}", extra=["--rx-queues", str(rx_queues)])
    apps = []
    try:
        for name, port, w in (("heavy0", 7310, "3"), ("light0", 7410, "1")):
            d.hgctl("tenant", "add", name, "--ports", f"{port}-{port}", "--weight", w,
                    "--extra-cycles", "200000")
            apps.append(d.echo(name, port, cpus="0"))
        rx_map = d.rx_map()

        def held():
            """Passes each tenant's own RX queue was left unread, its
            rings full; {} over one shared queue."""
            if rx_queues == 1:
                return {}
            q = {t["name"]: t["rx_queue"] for t in d.tenants().values()}
            by_group = {x["group"]: x["held"] for x in d.stats()["cores"][0]["rx_queues"]}
            return {n: by_group[q[n]] for n in ("heavy0", "light0")}

        def charged():
            return {t["name"]: sum(t["total"][p]["cycles"] for p in ("rx", "tx", "sched"))
                    for t in d.stats()["tenants"]}

        def drain():
            """The core's slack_held and the tenants' drain_cycles."""
            st = d.stats()
            return (st["cores"][0].get("slack_held", 0),
                    sum(t["total"].get("drain_cycles", 0) for t in st["tenants"]))
        before, held0, drain0 = charged(), held(), drain()
        cmd = ["taskset", "-c", "0", os.path.join(BIN, "hgload"), "--memif", d.memif,
               "--rx-map", rx_map, "--json",
               "--target", f"{DAEMON_IP}:7310", "--blast", "--flows", "8", "--size", "1400",
               "--duration", "2",
               "--and", "--target", f"{DAEMON_IP}:7410", "--blast", "--flows", "8",
               "--size", "1400", "--duration", "2"]
        heavy, light = json.loads(subprocess.run(cmd, capture_output=True, text=True,
                                                 timeout=60, check=True).stdout)
        after, held1, drain1 = charged(), held(), drain()
    finally:
        for a in apps:
            a.stop()
        assert d.stop() == 0, d.logtext()
    got = {n: after[n] - before[n] for n in after}
    share = got["heavy0"] / (got["heavy0"] + got["light0"])
    assert 0.65 <= share <= 0.85, (share, got, heavy, light)
    # both floods went past what the core serves; the shares are the
    # weights', not the offered loads'. Over one shared queue the daemon
    # took more of each one's frames than it answered; over queues of
    # their own, what their apps' full rings could not take stayed in the
    # link (each queue was held)
    if rx_queues == 1:
        for f in (heavy, light):
            assert f["sent"] > 1.5 * f["received"], f
        # the shared queue backed up, and the drops that drained it were
        # billed to nobody (rx_gate.h). Whether SCHED also held slack back
        # meanwhile (slack_held) depends on whether a pass found no
        # funded tenant with work while it backed up: in one make asan
        # run none did (slack_held stayed 0) while the drain took 722 M
        # cycles. test_sched_pick.c checks that rule itself.
        assert drain1[1] > drain0[1], (drain0, drain1)
    else:
        assert drain1 == drain0, "a queue of its own never backs up for another"
        assert all(held1[n] > held0[n] for n in held1), (held0, held1, heavy, light)


def test_tx_serves_funded_tenants_first():
    """An adversary whose answers each cost the fast path 200,000 cycles
    floods its echo; the victim's answers are admitted first at TX: the
    adversary's transmit queue is passed over (TX throttles) while the
    victim has work, the victim's next to never. With protection off, TX
    passes over nobody."""
    d = memif_daemon(f"{os.getpid() % 10000}txf")
    apps = []

    def tx_throttles(name):
        return sum(c["tx"]["throttles"] for c in d.tenant_stats(name)["cores"])
    try:
        d.hgctl("tenant", "add", "victim", "--ports", "7320-7320")
        d.hgctl("tenant", "add", "adv0", "--ports", "7420-7420", "--extra-cycles", "200000")
        apps += [d.echo("victim", 7320, cpus="0"), d.echo("adv0", 7420, cpus="0")]
        warm_up(d, 7320)
        rx_map = d.rx_map()
        cmd = ["taskset", "-c", "0", os.path.join(BIN, "hgload"), "--memif", d.memif,
               "--rx-map", rx_map, "--json",
               "--target", f"{DAEMON_IP}:7320", "--rate", "2000", "--duration", "2",
               "--timeout-ms", "500",
               "--and", "--target", f"{DAEMON_IP}:7420", "--blast", "--flows", "8",
               "--duration", "2", "--timeout-ms", "100"]
        result = {}
        for mode in ("on", "off"):
            d.hgctl("config", "set", "protection", mode)
            before = (tx_throttles("victim"), tx_throttles("adv0"))
            victim, _ = json.loads(subprocess.run(cmd, capture_output=True, text=True,
                                                  timeout=60, check=True).stdout)
            result[mode] = (tx_throttles("victim") - before[0],
                            tx_throttles("adv0") - before[1], victim)
    finally:
        for a in apps:
            a.stop()
        assert d.stop() == 0, d.logtext()
    v_thr, adv_thr, victim = result["on"]
    # the victim is funded but for moments (a doorbell's cost can take
    # its small budget below zero): passed over at most 3% as often
    # (within 1% in every full run but one: 17 against 1,690, 1.006%)
    assert adv_thr > 0 and v_thr * 100 <= 3 * adv_thr, result["on"]
    # the answers share the one ring back to hgload with the flood's; a
    # few may find it full (nic_tx_full) while hgload's receiver waits
    # for CPU 0
    assert victim["lost"] <= victim["sent"] // 100, victim
    assert result["off"][:2] == (0, 0), result["off"]


def test_an_unsaturated_core_sheds_nothing():
    """Work conservation at RX: a tenant far over its share (weight 0.01)
    next to a busy victim, on a core with time to spare, gets every
    datagram served; shedding waits for a saturated core."""
    d = memif_daemon(f"{os.getpid() % 10000}wc")
    apps = []
    try:
        d.hgctl("tenant", "add", "victim", "--ports", "7330-7330")
        d.hgctl("tenant", "add", "small", "--ports", "7430-7430", "--weight", "0.01")
        apps += [d.echo("victim", 7330, cpus="0"), d.echo("small", 7430, cpus="0")]
        # until a tenant's cost is measured its cap is less than a datagram:
        # what that sheds is a new tenant's, not this test's
        warm_up(d, 7330)
        warm_up(d, 7430)
        shed0 = drops(d.tenant_stats("small")).get("rx_over_budget", 0)
        cmd = ["taskset", "-c", "0", os.path.join(BIN, "hgload"), "--memif", d.memif, "--json",
               "--target", f"{DAEMON_IP}:7330", "--rate", "5000", "--duration", "2",
               "--and", "--target", f"{DAEMON_IP}:7430", "--rate", "20000", "--flows", "4",
               "--duration", "2"]
        st0 = d.stats()
        _, small = json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                                             check=True).stdout)
        st1 = d.stats()
        shed = drops(d.tenant_stats("small")).get("rx_over_budget", 0) - shed0
    finally:
        for a in apps:
            a.stop()
        assert d.stop() == 0, d.logtext()
    busy = (st1["cores"][0]["busy_cycles"] - st0["cores"][0]["busy_cycles"]) / st1["tsc_hz"] / 2
    assert busy < 0.5, busy                 # the premise: time to spare
    assert shed == 0 and small["lost"] <= small["sent"] // 1000, (shed, small)


def test_an_echoed_flood_fills_the_link_and_the_victim_loses_no_answer(flood, cleanup):
    """The neighbour answers its flood (hg-echo): its answers and the
    victim's share the link. What the link refuses is kept for the next
    pass, and when there is no room the heaviest tenant's frames go, so
    the victim's answers are not dropped (nic_tx_full). A guard: this
    setup did not make the old code drop them here, where `make demo` (a
    shared queue, both tenants of weight 1) lost 1-56 of them per step."""
    flood.hgctl("tenant", "add", "echoed", "--ports", "7500")
    cleanup.append(flood.echo("echoed", 7500, threads=2, cpus="0", extra=("--burst", "32")))
    warm_up(flood, 7500)
    before = drops(flood.tenant_stats("victim")).get("nic_tx_full", 0)
    victim, blast = run(flood, secs=3.0, blast_port=7500, size=1400)
    assert blast["received"] > 0, blast
    noisy = drops(flood.tenant_stats("echoed"))
    assert drops(flood.tenant_stats("victim")).get("nic_tx_full", 0) == before, \
        (drops(flood.tenant_stats("victim")), noisy, victim)
    assert victim["lost"] <= victim["sent"] // 100, (victim, noisy)


@pytest.mark.parametrize("rt", [False, True])
def test_hgloads_receiver_yields_only_when_it_runs_sched_fifo(flood, cleanup, tmp_path, rt):
    """hgload's receiver, busy with a flood's answers, yields CPU 0 every
    20 us only when it runs SCHED_FIFO (--rt), to let the app it measures
    at its priority run. A normal one yielded too (8,309 times in this
    setup), CFS handed the rest of its slice to the flood's echo threads,
    and make demo's protected victim had a p99 of ~40 ms instead of ~4."""
    port = 7510 + rt
    flood.hgctl("tenant", "add", f"yielder{int(rt)}", "--ports", str(port))
    cleanup.append(flood.echo(f"yielder{int(rt)}", port, threads=2, cpus="0",
                              extra=("--burst", "32")))
    warm_up(flood, port)
    trace = tmp_path / "yields"
    cmd = ["strace", "-f", "--seccomp-bpf", "-e", "trace=sched_yield", "-o", str(trace),
           "taskset", "-c", "0", os.path.join(BIN, "hgload"), "--memif", flood.memif,
           "--target", f"{DAEMON_IP}:{VICTIM}", "--rate", "2000", "--duration", "1",
           "--timeout-ms", "500", "--json", *(["--rt"] if rt else []),
           "--and", "--target", f"{DAEMON_IP}:{port}", "--blast", "--flows", "16",
           "--size", "1400", "--duration", "1", "--timeout-ms", "100"]
    # LeakSanitizer cannot run under ptrace (make asan's build): the leak
    # check is off for this one traced hgload, the rest of ASan stays on
    env = dict(os.environ, ASAN_OPTIONS=":".join(
        o for o in (os.environ.get("ASAN_OPTIONS"), "detect_leaks=0") if o))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True,
                         env=env).stdout
    victim, blast = json.loads(out)
    yields = sum("sched_yield" in line for line in trace.read_text().splitlines())
    assert blast["received"] > 10_000, blast        # the receiver was busy
    assert (yields > 0) == rt, (yields, blast)


# a SCHED_FIFO thread on the fast path's CPU: 2 ms of it every 10 ms
HOG = """
import time
end = time.monotonic() + {secs}
while time.monotonic() < end:
    t = time.monotonic() + 0.002
    while time.monotonic() < t:
        pass
    time.sleep(0.008)
"""


def test_a_core_the_os_preempts_says_so_and_its_victim_keeps_everything(flood):
    """The OS takes the fast path's CPU from it, over and over, during a
    flood: the core sees each departure without a system call (rseq,
    fastpath/offcpu.h), books what its charges lost as the OS's, and the
    victim, billed only for its own work, loses nothing."""
    flood.hgctl("config", "set", "protection", "on")
    core = flood.stats()["cores"][0]
    before = drops(flood.tenant_stats("victim"))
    hog = subprocess.Popen(["chrt", "-f", "50", "taskset", "-c", "1", "python3", "-c",
                            HOG.format(secs=2.5)])
    try:
        victim, _ = run(flood, secs=2.0)
    finally:
        try:
            hog.wait(timeout=30)
        except subprocess.TimeoutExpired:
            hog.kill()
            hog.wait()
    after = flood.stats()["cores"][0]
    assert after["left_cpu"] - core["left_cpu"] >= 50, (core, after)
    assert after["preempted_cycles"] > core["preempted_cycles"]
    # none of its datagrams dropped, for any reason (earlier tests of the
    # module flood it too: compared with before), and none lost but for
    # one in a thousand (assert_victim_kept)
    assert drops(flood.tenant_stats("victim")) == before
    assert victim["lost"] - victim["send_errors"] <= victim["sent"] // 1000, victim


def test_own_burst_bounds_a_flood_s_bursts_beside_a_victim():
    """own-burst N: with protection on and another tenant active, a burst
    of a tenant's own RX queue takes at most N frames, so the flood's
    passes are short (design.md §3); at 0 (the default) it takes full
    bursts. own-bytes B bounds it the same in bytes of frames. Over queues
    of their own, a victim at 2,000 req/s beside an echoed blast: the
    flood queue's frames per burst, from its own counters, its workers'
    doorbells, and the victim served whole each time."""
    d = memif_daemon(f"{os.getpid() % 10000}ob", extra=["--rx-queues", "3"])
    apps = []
    try:
        d.hgctl("tenant", "add", "victim", "--ports", f"{VICTIM}-{VICTIM}")
        d.hgctl("tenant", "add", "flood0", "--ports", f"{SINK}-{SINK}")
        apps.append(d.echo("victim", VICTIM, cpus="0"))
        apps.append(d.echo("flood0", SINK, threads=2, cpus="0"))
        rx_map = d.rx_map()
        warm_up(d, VICTIM)
        group = {t["name"]: t["rx_queue"] for t in d.tenants().values()}["flood0"]

        def flood_queue():
            """The flood's queue's (packets, bursts) so far."""
            q = [x for x in d.stats()["cores"][0]["rx_queues"] if x["group"] == group]
            return q[0]["packets"], q[0]["bursts"]

        def per_burst(own_burst, own_bytes=0):
            d.hgctl("config", "set", "own-burst", str(own_burst))
            d.hgctl("config", "set", "own-bytes", str(own_bytes))
            p0, b0 = flood_queue()
            r0 = d.tenant_stats("flood0")["total"]["doorbells"]
            victim, blast = run(d, secs=1.5, size=1400, rx_map=rx_map)
            p1, b1 = flood_queue()
            r1 = d.tenant_stats("flood0")["total"]["doorbells"]
            assert b1 > b0 and blast["sent"] > 0, (b0, b1, blast)
            assert_victim_kept(d, victim)
            return p1 - p0, b1 - b0, r1 - r0

        capped = per_burst(4)
        # 4 frames of 1400 B datagrams (1442 B on the wire)
        in_bytes = per_burst(0, 4 * (1400 + 42))
        full = per_burst(0)
    finally:
        for a in apps:
            a.stop()
        assert d.stop() == 0, d.logtext()
    # every burst took 4 at most but the queue's first, read in full to
    # learn whose it is (24 frames beyond 4 x bursts in one run)
    assert capped[0] - 4 * capped[1] <= 32 - 4, capped
    assert in_bytes[0] - 4 * in_bytes[1] <= 32 - 4, in_bytes
    # told that more comes (hg_ctx_shm.more_until), the flood's workers
    # poll between its short passes instead of parking: 20-116 doorbells
    # in a 1.5 s run (93-596 under ASan), where they were rung 4,600-10,000
    # times (one per 30-70 bursts) before
    for bound in (capped, in_bytes):
        assert bound[2] < 1500, bound
    # bursts of the default were full but where the victim's looks cut them
    assert full[0] / full[1] > 8, (full, capped)

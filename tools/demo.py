#!/usr/bin/env python3
"""make demo: what Hourglass is for, in under a minute.

A victim tenant answers a steady 2,000 requests a second. A noisy
neighbour on the same fast-path core gets a flood that saturates it:
hgload --blast over memif, a replay (frames built once, the ring refilled
by moving its head, as a flood from another host fills a NIC's ring at
no cost to the host; 1-3% of CPU 0), answered by the neighbour's own echo
app. No synthetic work per datagram. The victim's latency is measured
alone, then under the flood with time protection off and on (hgctl
config set protection off|on, live); both share the port's one RX queue,
as tenants behind a NIC without flow steering do. Each tenant's answers
leave by a ring back of its own (--tx-queues 2, read from the daemon's
RX map), as they would go to two hosts: hgload counts the neighbour's
unread, and the victim's never wait behind them in hgload's receiver.

The daemon serves memif itself (--memif: hgload is its peer on the same
host), so what is measured is the datapath, not the kernel's veth. The
daemon, apps and socket it makes are removed at the end, also on ^C."""
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from hg import BIN, DAEMON_IP, memif_daemon, tenant_drops, warm_up  # noqa: E402

VICTIM, NOISY = 7000, 7100
RATE, SECONDS = 2000, 4
NOISY_SIZE = int(os.environ.get("HG_DEMO_SIZE", "1400"))


def stopped(signum, frame):
    raise SystemExit(128 + signum)


def load(d, blast, rx_map):
    """One hgload over the daemon's memif port, steered by rx_map (the
    daemon's map's file): the victim's timed load and, with blast, the
    neighbour's flood beside it. Their results."""
    cmd = ["taskset", "-c", "0", os.path.join(BIN, "hgload"), "--memif", d.memif,
           "--rx-map", rx_map, "--target", f"{DAEMON_IP}:{VICTIM}", "--rate", str(RATE),
           "--duration", str(SECONDS), "--flows", "1", "--size", "64", "--timeout-ms",
           "1000", "--json"]
    if blast:
        cmd += ["--and", "--target", f"{DAEMON_IP}:{NOISY}", "--blast", "--rate", "1",
                "--duration", str(SECONDS), "--flows", "16", "--size", str(NOISY_SIZE), "--json"]
    res = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True,
                                    timeout=60).stdout)
    return res if isinstance(res, list) else [res]


def busy(d):
    st = d.stats()
    return st["cores"][0]["busy_cycles"], st["tsc_hz"]


def victim_drops(d):
    """The victim's drops by reason, summed over cores."""
    return tenant_drops(d.tenant_stats("victim"))


def step(d, rx_map, label, blast):
    b0, hz = busy(d)
    dr0 = victim_drops(d)
    res = load(d, blast, rx_map)
    b1, _ = busy(d)
    dr1 = victim_drops(d)
    v = res[0]
    row = {"label": label, "p50": v["latency_us"]["p50"], "p99": v["latency_us"]["p99"],
           "lost": v["lost"], "busy": (b1 - b0) / (hz * SECONDS),
           "noisy_sent": res[1]["sent"] / SECONDS if blast else 0,
           "noisy_served": res[1]["throughput_rps"] if blast else 0}
    print(f"  {label:<26} victim p50 {row['p50']:>7.0f} us  p99 {row['p99']:>7.0f} us  "
          f"lost {row['lost']:>3}  |  neighbour offered {row['noisy_sent']:>9,.0f}/s "
          f"answered {row['noisy_served']:>7,.0f}/s  |  fast path busy {row['busy']:.2f}",
          flush=True)
    if row["lost"]:
        # where they went: the daemon's drops of the victim by reason; the
        # rest never reached it (the link's ring) or its answer was late
        why = {k: dr1[k] - dr0.get(k, 0) for k in dr1 if dr1[k] != dr0.get(k, 0)}
        print(f"  {'':<26} the victim's lost requests: daemon drops {why or 'none'}",
              flush=True)
    return row


SATURATED = 0.95


def verdict(alone, off, on):
    """What the difference means, from the figures above: the comparison
    counts only when the flood saturated the fast-path core."""
    if min(off["busy"], on["busy"]) < SATURATED:
        return (f"\nThe flood did not saturate the fast-path core this time (busy "
                f"{min(off['busy'], on['busy']):.2f} < {SATURATED}): the comparison does not count.")
    if on["p99"] >= off["p99"]:
        return (f"\nProtection did not lower the victim's p99 this time ({off['p99'] / 1000:.1f} "
                f"-> {on['p99'] / 1000:.1f} ms, the core {on['busy']:.2f} busy): a regression, "
                f"or the host stalled CPU 0 during the protected step (run it again).")
    return (f"\nProtection bought the victim a {off['p99'] / on['p99']:.1f}x lower p99 "
            f"({off['p99'] / 1000:.1f} -> {on['p99'] / 1000:.1f} ms) under a flood that kept the "
            f"core {on['busy']:.2f} busy: the neighbour's datagrams beyond its share are dropped "
            f"where the link left them.")


def main():
    signal.signal(signal.SIGTERM, stopped)
    d = memif_daemon(f"demo{os.getpid() % 1000}", extra=("--idle", "sleep", "--tx-queues", "2"))
    apps = []
    try:
        d.hgctl("tenant", "add", "victim", "--ports", str(VICTIM))
        d.hgctl("tenant", "add", "noisy", "--ports", str(NOISY))
        apps.append(d.echo("victim", VICTIM, cpus="0"))
        apps.append(d.echo("noisy", NOISY, threads=2, cpus="0", extra=("--burst", "32")))
        warm_up(d, VICTIM)
        warm_up(d, NOISY)
        print(f"Two tenants on one fast-path core (CPU 1); apps and clients on CPU 0.\n"
              f"victim: {RATE:,} req/s of 64 B; noisy neighbour: a flood of {NOISY_SIZE} B "
              f"datagrams (16 flows), echoed.\n", flush=True)
        rx_map = d.rx_map()
        rows = [step(d, rx_map, "alone", False)]
        d.hgctl("config", "set", "protection", "off")
        rows.append(step(d, rx_map, "flooded, protection off", True))
        d.hgctl("config", "set", "protection", "on")
        rows.append(step(d, rx_map, "flooded, protection on", True))
        print(verdict(*rows))
    finally:
        for a in apps:
            a.stop()
        d.stop()


if __name__ == "__main__":
    main()

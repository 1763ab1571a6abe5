"""--idle sleep blocks on RX interrupts: over net_tap, whose
queue fd the PMD hands out, an idle core waits in epoll on it and on the
slow path's wake-up, so a datagram to an idle daemon cuts the nap short
instead of waiting out its timeout. net_af_packet and net_memif keep
their fds to themselves: there the core sleeps the timeout out. The test
host is a namespace that holds the tap interface, 198.18.0.2/24."""
import os
import statistics
import time

import pytest

from hg import DAEMON_IP, PEER_IP, Daemon, run, udp_roundtrip


class TapNet:
    """The daemon's tap interface, moved into a namespace of its own."""

    def __init__(self, tag):
        self.ns = f"hgt{tag}"
        self.tap = f"hg{tag}t"
        run("ip", "netns", "del", self.ns, check=False)
        run("ip", "netns", "add", self.ns)

    def take(self):
        run("ip", "link", "set", self.tap, "netns", self.ns)
        run("ip", "-n", self.ns, "addr", "add", f"{PEER_IP}/24", "dev", self.tap)
        run("ip", "-n", self.ns, "link", "set", self.tap, "up")
        run("ip", "netns", "exec", self.ns, "sysctl", "-qw",
            f"net.ipv6.conf.{self.tap}.disable_ipv6=1", check=False)

    def socket(self):
        from hg import Netns
        return Netns.socket(self)

    def close(self):
        run("ip", "netns", "del", self.ns, check=False)


@pytest.fixture
def tapd():
    tag = f"{os.getpid() % 10000}np"
    net = TapNet(tag)
    d = None
    try:
        d = Daemon(tag, f"net_tap0,iface={net.tap}")
        net.take()
        yield d, net
    finally:
        if d is not None:
            assert d.stop() == 0, d.logtext()
        net.close()


def core(d):
    return d.stats()["cores"][0]


def test_an_idle_core_naps_on_the_tap_queue_and_a_datagram_wakes_it(tapd, cleanup):
    d, net = tapd
    assert core(d)["rx_interrupts"] == 1, core(d)
    d.hgctl("tenant", "add", "nap", "--ports", "7900-7900")
    cleanup.append(d.echo("nap", 7900, threads=1, cpus="0"))
    s = net.socket()
    s.bind((PEER_IP, 0))
    assert udp_roundtrip(s, 7900, b"first", tries=20, timeout=0.5) == b"first"
    before = core(d)
    rtt = []
    for i in range(20):
        time.sleep(0.05)	# long enough for the core to nap
        t0 = time.perf_counter()
        assert udp_roundtrip(s, 7900, b"%d" % i) == b"%d" % i
        rtt.append((time.perf_counter() - t0) * 1e6)
    after = core(d)
    s.close()
    assert after["naps"] > before["naps"]
    # every datagram found the core napping; most cut the nap short (one
    # that lands between the core's last look and its arming waits the
    # nap's timeout out, as without interrupts)
    assert after["nap_wakes"] - before["nap_wakes"] >= 10, (before, after)
    print(f"\nround trip to an idle daemon over net_tap: median "
          f"{statistics.median(rtt):.0f} us, max {max(rtt):.0f} us")


def test_a_command_from_the_slow_path_wakes_a_napping_core(tapd):
    """The slow path rings the core after a command (a tenant's release):
    the core runs it at once instead of after its nap."""
    d, _ = tapd
    d.hgctl("tenant", "add", "gone", "--ports", "7901-7901")
    time.sleep(0.2)		# idle: the core naps its longest
    before = core(d)
    d.hgctl("tenant", "del", "gone")
    after = core(d)
    assert "gone" not in d.tenants()
    assert after["nap_wakes"] > before["nap_wakes"], (before, after)

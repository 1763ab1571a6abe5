import os
import subprocess

import pytest

from hg import BIN, DAEMON_IP, VETH_PMD, Bridge, Daemon, Netns, memif_daemon, veth_vdev


def pytest_configure(config):
    if os.geteuid() != 0:
        raise pytest.UsageError("integration tests make network namespaces: run as root")


@pytest.fixture(scope="module")
def net(request):
    tag = f"{os.getpid() % 10000}{abs(hash(request.module.__name__)) % 100}"
    n = Netns(tag)
    yield n
    n.close()


@pytest.fixture(scope="module")
def daemon(net):
    d = Daemon(net.ns[3:], veth_vdev(net))
    yield d
    _check_stop(d)


def _check_stop(d):
    assert d.stop() == 0, d.logtext()
    assert "Sanitizer" not in d.logtext() and "runtime error" not in d.logtext()


@pytest.fixture(scope="module", params=[VETH_PMD, "memif"])
def pmd_daemon(request, net):
    """A daemon the namespace reaches through the kernel either way: its
    port is on the veth (net_af_xdp, or HG_VETH_PMD's), or the daemon's
    memif server with hg-memif-bridge between the veth and it (same MAC),
    so one test's sockets and raw frames exercise both links. A module
    asks for it by defining its daemon fixture as this one."""
    if request.param == VETH_PMD:
        d = Daemon(net.ns[3:], veth_vdev(net))
        yield d
        _check_stop(d)
        return
    d = memif_daemon(f"{net.ns[3:]}m", mac=net.mac)
    try:
        bridge = Bridge(net, d.memif)
    except Exception:
        d.stop()
        raise
    d.bridge = bridge       # a test that lost datagrams asks it for its drops
    yield d
    assert bridge.stop() == 0, bridge.said
    assert "Sanitizer" not in bridge.said and "runtime error" not in bridge.said
    _check_stop(d)


@pytest.fixture
def cleanup():
    """Things to stop at the end of a test, even a failing one."""
    items = []
    yield items
    for it in reversed(items):
        it.stop()


class Link:
    """A daemon and how a load generator reaches it: hgload from the
    namespace through the kernel (the veth's PMD), or hgload --memif with
    a memif port of its own (net_memif)."""

    def __init__(self, pmd, net, daemon):
        self.pmd, self.net, self.daemon = pmd, net, daemon

    def hgload(self, port, *args, cpu0=False):
        """Starts hgload against port (cpu0: pinned to CPU 0 with the
        apps); a Popen whose stdout is its output."""
        # --memif belongs to the first load (args may hold more: --and)
        via = ["--memif", self.daemon.memif] if self.pmd == "memif" else []
        cmd = [os.path.join(BIN, "hgload"), *via, "--target", f"{DAEMON_IP}:{port}", *args]
        if cpu0:
            cmd = ["taskset", "-c", "0", *cmd]
        if self.pmd == "memif":
            return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        return self.net.popen(*cmd, stdout=subprocess.PIPE, text=True)


@pytest.fixture(scope="module", params=[VETH_PMD, "memif"])
def link(request, net):
    """The datapath tests that drive load run over both links."""
    if request.param == VETH_PMD:
        yield Link(VETH_PMD, net, request.getfixturevalue("daemon"))
        return
    d = memif_daemon(f"{os.getpid() % 10000}{abs(hash(request.module.__name__)) % 100}m")
    yield Link("memif", net, d)
    assert d.stop() == 0, d.logtext()
    assert "Sanitizer" not in d.logtext() and "runtime error" not in d.logtext()

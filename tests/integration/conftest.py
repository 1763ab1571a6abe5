import os
import subprocess

import pytest

from hg import BIN, DAEMON_IP, Daemon, Netns, memif_daemon


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
    d = Daemon(net.ns[3:], f"net_af_packet0,iface={net.host_if}")
    yield d
    assert d.stop() == 0, d.logtext()
    assert "Sanitizer" not in d.logtext() and "runtime error" not in d.logtext()


@pytest.fixture
def cleanup():
    """Things to stop at the end of a test, even a failing one."""
    items = []
    yield items
    for it in reversed(items):
        it.stop()


class Link:
    """A daemon and how a load generator reaches it: hgload from the
    namespace through the kernel (net_af_packet), or hgload --memif with
    a memif port of its own (net_memif, issue 14)."""

    def __init__(self, pmd, net, daemon):
        self.pmd, self.net, self.daemon = pmd, net, daemon

    def hgload(self, port, *args, cpu0=False):
        """Starts hgload against port (cpu0: pinned to CPU 0 with the
        apps); a Popen whose stdout is its output."""
        cmd = [os.path.join(BIN, "hgload"), "--target", f"{DAEMON_IP}:{port}", *args]
        if cpu0:
            cmd = ["taskset", "-c", "0", *cmd]
        if self.pmd == "memif":
            return subprocess.Popen(cmd + ["--memif", self.daemon.memif],
                                    stdout=subprocess.PIPE, text=True)
        return self.net.popen(*cmd, stdout=subprocess.PIPE, text=True)


@pytest.fixture(scope="module", params=["af_packet", "memif"])
def link(request, net):
    """The datapath tests that drive load run over both PMDs."""
    if request.param == "af_packet":
        yield Link("af_packet", net, request.getfixturevalue("daemon"))
        return
    d = memif_daemon(f"{os.getpid() % 10000}{abs(hash(request.module.__name__)) % 100}m")
    yield Link("memif", net, d)
    assert d.stop() == 0, d.logtext()
    assert "Sanitizer" not in d.logtext() and "runtime error" not in d.logtext()

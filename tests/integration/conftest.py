import os

import pytest

from hg import Daemon, Netns


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

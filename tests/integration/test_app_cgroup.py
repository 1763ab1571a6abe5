"""A tenant's weight over its apps' CPU (--app-cgroup): the daemon makes a
cgroup per tenant in the cpu controller's hierarchy, weighted as the
tenant, and runs the apps it admits in it; a weight change follows, a
deleted tenant's group goes, and the daemon's exit leaves nothing."""
import os

import pytest

from hg import memif_daemon, wait_for

GROUP = "hgtcgroup"


def cpu_hierarchy():
    """(mount point, v2) of the hierarchy with the cpu controller, as the
    daemon finds it, or None."""
    with open("/proc/self/mounts") as f:
        mounts = [line.split() for line in f]
    for dev, path, kind, opts, *_ in mounts:
        if kind == "cgroup2":
            try:
                if "cpu" in open(os.path.join(path, "cgroup.controllers")).read().split():
                    return path, True, "rw" in opts.split(",")
            except OSError:
                pass
    for dev, path, kind, opts, *_ in mounts:
        if kind == "cgroup" and "cpu" in opts.split(","):
            return path, False, "rw" in opts.split(",")
    return None


HIER = cpu_hierarchy()
pytestmark = pytest.mark.skipif(HIER is None or not HIER[2],
                                reason="no writable cgroup hierarchy with the cpu controller")


def group_of(pid):
    """pid's group in the cpu hierarchy, as a directory."""
    mount, v2, _ = HIER
    for line in open(f"/proc/{pid}/cgroup"):
        num, ctrl, path = line.rstrip("\n").split(":", 2)
        if (v2 and num == "0") or (not v2 and "cpu" in ctrl.split(",")):
            return os.path.normpath(mount + path)
    raise AssertionError(f"pid {pid} has no cpu group")


def weight_of(group):
    mount, v2, _ = HIER
    return int(open(os.path.join(group, "cpu.weight" if v2 else "cpu.shares")).read())


def expected(weight):
    """The daemon's value for a tenant weight (v2 cpu.weight 100 = 1)."""
    return round(weight * 100) if HIER[1] else round(weight * 1024)


def procs(group):
    return open(os.path.join(group, "cgroup.procs")).read().split()


def test_apps_run_in_their_tenants_group_with_its_weight():
    mount = HIER[0]
    root = os.path.join(mount, GROUP)
    d = memif_daemon("cg", extra=("--app-cgroup", "/" + GROUP))
    apps = []
    try:
        d.hgctl("tenant", "add", "gold", "--ports", "9300-9300", "--weight", "3")
        d.hgctl("tenant", "add", "bronze", "--ports", "9301-9301")
        before = group_of(os.getpid())
        apps += [d.echo("gold", 9300), d.echo("bronze", 9301)]
        gold, bronze = (group_of(a.proc.pid) for a in apps)
        assert gold == os.path.join(root, "tenant-gold"), gold
        assert bronze == os.path.join(root, "tenant-bronze"), bronze
        assert (weight_of(gold), weight_of(bronze)) == (expected(3), expected(1))
        # a live weight change reaches the group
        d.hgctl("tenant", "set", "gold", "--weight", "1.5")
        assert weight_of(gold) == expected(1.5)
        # the test itself was left where it was
        assert group_of(os.getpid()) == before
        # an app that leaves leaves the group empty; its tenant's
        # deletion removes the group
        apps.pop(0).stop()
        assert wait_for(lambda: procs(gold) == [], 5)
        d.hgctl("tenant", "del", "gold")
        assert not os.path.exists(gold)
    finally:
        for a in apps:
            a.stop()
        assert d.stop() == 0, d.logtext()
    # the daemon's exit removes every group it made
    assert wait_for(lambda: not os.path.exists(root), 2), os.listdir(root)


def test_a_group_the_daemon_cannot_make_stops_it_with_the_reason():
    # a path under a file: no cgroup can be made there
    with pytest.raises(RuntimeError, match="app-cgroup: cannot make"):
        memif_daemon("cgbad", extra=("--app-cgroup", "/cgroup.procs/x"))

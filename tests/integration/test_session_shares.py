"""Per-tenant shares of each core's RPC session table
(design.md §6): every tenant with RPC ports reserves its max-sessions of the
table (--sessions), a tenant whose share does not fit is refused with the
reason, and one tenant's clients never block another's new sessions.
Before, nine flooded RPC tenants filled the table that all shared, and a
tenth tenant's new client got 0 answers of 10."""
import json
import time

import pytest

from hg import DAEMON_IP, Daemon, Sink, veth_vdev, wait_for
from test_credits import REJECT, RESPONSE, credits, recv_answer, rpc_request

SLOTS, SHARE = 100, 10
FIRST = 9100            # tenants R0..R8 on FIRST..FIRST+8, the tenth on FIRST+9


@pytest.fixture(scope="module")
def daemon(net):
    d = Daemon(net.ns[3:] + "ss", veth_vdev(net),
               extra=("--sessions", str(SLOTS)))
    yield d
    assert d.stop() == 0, d.logtext()


def add_rpc(d, name, port, share=SHARE, check=True, more=()):
    return d.hgctl("tenant", "add", name, "--ports", str(port), "--rpc-ports", str(port),
                   "--max-sessions", str(share), *more, check=check)


def open_sessions(s, port, first_id, n):
    """n requests, each of a new session. A sink's requests are never
    answered: only its rejects come back."""
    for i in range(n):
        s.sendto(rpc_request(first_id + i, 0, 1000), (DAEMON_IP, port))


def test_a_share_that_does_not_fit_is_refused(daemon):
    for k in range(SLOTS // SHARE):
        add_rpc(daemon, f"f{k}", 9000 + k)
    r = add_rpc(daemon, "f10", 9010, share=1, check=False)
    assert r.returncode != 0 and "max-sessions 1 does not fit" in r.stderr, r.stderr
    assert "100 of 100 session slots per core are reserved" in r.stderr, r.stderr
    # a tenant without RPC ports reserves nothing
    daemon.hgctl("tenant", "add", "plain", "--ports", "9011")
    r = daemon.hgctl("tenant", "set", "plain", "--rpc-ports", "9011", check=False)
    assert r.returncode != 0 and "does not fit" in r.stderr, r.stderr
    r = daemon.hgctl("tenant", "set", "f0", "--max-sessions", str(SHARE + 1), check=False)
    assert r.returncode != 0 and "does not fit" in r.stderr, r.stderr
    # a share given back is free for another
    daemon.hgctl("tenant", "set", "f0", "--max-sessions", str(SHARE - 1))
    daemon.hgctl("tenant", "set", "plain", "--rpc-ports", "9011", "--max-sessions", "1")
    for name in ["plain"] + [f"f{k}" for k in range(SLOTS // SHARE)]:
        daemon.hgctl("tenant", "del", name)


def test_a_tenth_tenant_opens_sessions_while_nine_hold_theirs_full(net, daemon, cleanup):
    # their requests wait in a sink's ring: a D_drop of a second keeps
    # the sessions that follow from being turned away as overload
    for k in range(9):
        add_rpc(daemon, f"R{k}", FIRST + k, more=("--dt-us", "500000", "--ddrop-us", "1000000"))
    add_rpc(daemon, "tenth", FIRST + 9)
    # sinks: a request waits unanswered, so its session stays (stuck, 10 s)
    cleanup.append(Sink(daemon, "R", FIRST, count=9))
    cleanup.append(daemon.echo("tenth", FIRST + 9))
    s = net.socket()
    s.settimeout(2)
    # a tenant at a time: 108 datagrams at once would be two full RX
    # bursts in a row, which sheds (over budget) what the test counts
    for k in range(9):
        open_sessions(s, FIRST + k, 1000 * (k + 1), SHARE + 2)
        # each gets its share; the two over it are rejected (no session)
        rejects = [recv_answer(s) for _ in range(2)]
        assert all(r[2] & REJECT for r in rejects), (k, rejects)
    held = {f"R{k}": daemon.tenant_stats(f"R{k}")["credits"]["sessions"] for k in range(9)}
    assert all(v == SHARE for v in held.values()), held
    open_sessions(s, FIRST + 9, 50_000, SHARE)
    answers = [recv_answer(s) for _ in range(SHARE)]
    s.close()
    assert all(r[2] & RESPONSE for r in answers), (answers, daemon.tenant_stats("tenth"))
    st = daemon.tenant_stats("tenth")
    assert st["cores"][0]["drops"]["rpc_reject_no_session"] == 0, st
    assert sum(daemon.tenant_stats(f"R{k}")["cores"][0]["drops"]["rpc_reject_no_session"]
               for k in range(9)) == 9 * 2


def test_a_lowered_share_is_trimmed_and_promised_again(net, daemon, cleanup):
    """S0 and S1 hold 50 sessions each, the whole table. The operator
    lowers S0's share to 10 and adds `late` with 40: S0's sessions past 10
    go (counted; their clients are told to start over) and late's new
    clients get sessions. Before, S0 kept all 50 (a session with a request
    out stays 10 s, one whose client sends once a second for ever) and
    late's clients got none (rpc_reject_no_session)."""
    for name in daemon.tenants():
        daemon.hgctl("tenant", "del", name)
    port, half = 9200, SLOTS // 2
    # a deleted tenant's share is free once the cores have released it
    for k in range(2):
        assert wait_for(lambda: add_rpc(
            daemon, f"S{k}", port + k, share=half, check=False,
            more=("--dt-us", "500000", "--ddrop-us", "1000000")).returncode == 0)
    cleanup.append(Sink(daemon, "S", port, count=2))
    s = net.socket()
    s.settimeout(2)
    try:
        for k in range(2):
            for first in range(0, half, 25):     # under a full RX burst each
                open_sessions(s, port + k, 10_000 * (k + 1) + first, 25)
                time.sleep(0.05)
        assert wait_for(lambda: [credits(daemon, f"S{k}")["sessions"] for k in range(2)]
                        == [half, half]), daemon.tenants()
        daemon.hgctl("tenant", "set", "S0", "--max-sessions", "10")
        # overload control is not the subject: its first requests wait for
        # an app that wakes up (a D_drop of 100 us rejected some)
        add_rpc(daemon, "late", port + 2, share=SLOTS - half - 10,
                more=("--dt-us", "500000", "--ddrop-us", "1000000"))
        cleanup.append(daemon.echo("late", port + 2))
        assert wait_for(lambda: credits(daemon, "S0")["sessions"] == 10, timeout=5), \
            credits(daemon, "S0")
        assert credits(daemon, "S1")["sessions"] == half
        open_sessions(s, port + 2, 50_000, 10)
        answers = [recv_answer(s) for _ in range(10)]
    finally:
        s.close()
    assert all(r[2] & RESPONSE for r in answers), json.dumps([[a[2] for a in answers], {k: v for k, v in daemon.tenant_stats("late")["cores"][0]["drops"].items() if v}, credits(daemon, "late"), credits(daemon, "S0")])
    assert daemon.tenant_stats("S0")["total"]["sessions_trimmed"] == half - 10
    st = daemon.tenant_stats("late")
    assert st["cores"][0]["drops"]["rpc_reject_no_session"] == 0, st

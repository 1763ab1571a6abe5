"""hg-kv, the LevelDB server, answers an independent client that
speaks only the documented RPC header (proto/hg_rpc.h) and kv format
(proto/hg_kv.h): GET and SCAN return the right values, also after PUT and
DELETE, under each dispatch policy."""
import os
import shutil
import socket
import struct
import subprocess

import pytest

from hg import BIN, DAEMON_IP


@pytest.fixture(scope="module")
def daemon(pmd_daemon):
    """Every test here runs over net_af_packet and over net_memif."""
    return pmd_daemon


RPC = struct.Struct("!HBBBBHIIQQ")       # magic, version, flags, type, pad, credits,
KVREQ = struct.Struct("!HHHH")           # session, pad, req_id, ts; key_len, val_len, count
KVREP = struct.Struct("!BBH")            # status, more, n
GET, PUT, DELETE, SCAN = range(4)
OK, NOT_FOUND, BAD = 0, 1, 2


class Kv:
    def __init__(self, daemon, tenant, port, keys=200, threads=2):
        self.proc = subprocess.Popen(
            [os.path.join(BIN, "hg-kv"), "--ctl", daemon.app_ctl, "--tenant", tenant,
             "--port", str(port), "--threads", str(threads), "--keys", str(keys),
             "--value-size", "40"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        if "ready" not in line:
            self.proc.kill()
            raise RuntimeError(f"hg-kv did not start: {line}{self.proc.stdout.read()}")
        # its temporary database, which it removes at exit
        self.db = line.split(" in ")[-1].split(":")[0].strip()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        said = self.proc.stdout.read()
        # one that did not exit by itself left it
        if self.db.startswith("/tmp/hg-kv.") and os.path.isdir(self.db):
            shutil.rmtree(self.db, ignore_errors=True)
        return said


class Client:
    """One RPC session, as the protocol asks of a client: it waits for each
    answer, and a reject (credits 0) means "not now": it waits for the
    credit update the daemon sends a drained session, then sends again.
    The daemon's AQM may reject a request at any time on the delay it
    last measured (a queue that drained a moment ago), also at a tenant
    that is idle by the time the request arrives."""

    RETRIES = 20

    def __init__(self, net, port, why=lambda: ""):
        self.s, self.port, self.rid = net.socket(), port, 0
        self.why = why          # what the daemon says, for a failure
        self.s.settimeout(2)
        self.rejects = 0

    def call(self, op, key, value=b"", count=0):
        body = KVREQ.pack(len(key), len(value), count, 0) + key + value
        for _ in range(self.RETRIES):
            self.rid += 1
            self.s.sendto(RPC.pack(0x4852, 1, 1, op, 0, 0, 77, 0, self.rid, 0) + body,
                          (DAEMON_IP, self.port))
            answer = self.answer()
            if answer is not None:
                return answer
            self.rejects += 1
        raise AssertionError(f"{self.RETRIES} rejects in a row: {self.why()}")

    def answer(self):
        """The answer to request rid: (kv reply, rest), or None once it
        was rejected and a credit came back (or 0.2 s passed)."""
        rejected = False
        while True:
            try:
                data = self.s.recvfrom(4096)[0]
            except socket.timeout:
                self.s.settimeout(2)
                if rejected:
                    return None
                raise
            h = RPC.unpack(data[:32])
            if h[2] & 0x02 and h[8] == self.rid:
                return KVREP.unpack(data[32:36]), data[36:]
            if h[2] & 0x04 and h[8] == self.rid:
                rejected = True
                self.s.settimeout(0.2)
                continue
            assert h[2] & 0x08, h                  # else only a credit update
            if rejected and h[5] > 0:
                self.s.settimeout(2)
                return None

    def get(self, key):
        (status, _, n), rest = self.call(GET, key)
        if status != OK:
            return status
        (vlen,) = struct.unpack("!H", rest[:2])
        return rest[2:2 + vlen]

    def scan(self, start, count):
        (status, more, n), rest = self.call(SCAN, start, count=count)
        assert status == OK
        out = []
        for _ in range(n):
            kl, vl = struct.unpack("!HH", rest[:4])
            out.append((rest[4:4 + kl], rest[4 + kl:4 + kl + vl]))
            rest = rest[4 + kl + vl:]
        return out, more


def key(i):
    return b"%020d" % i


def value(k, n=40):
    return bytes(k[i % 20] for i in range(n))


@pytest.mark.parametrize("policy", ["synergy", "darc"])
def test_get_scan_after_put_and_delete(net, daemon, cleanup, policy):
    port = 8950 + ["synergy", "darc"].index(policy)
    name = f"kv{policy}"
    daemon.hgctl("tenant", "add", name, "--ports", f"{port}-{port}",
                 "--rpc-ports", f"{port}-{port}", "--dispatch", policy)
    kv = Kv(daemon, name, port)
    cleanup.append(kv)
    c = Client(net, port, lambda: daemon.tenant_stats(name))
    assert c.get(key(7)) == value(key(7)), "a loaded key"
    assert c.get(key(999999)) == NOT_FOUND
    assert c.call(PUT, b"zz-new", b"hello")[0][0] == OK
    assert c.get(b"zz-new") == b"hello"
    assert c.call(PUT, key(7), b"changed")[0][0] == OK
    assert c.get(key(7)) == b"changed"
    assert c.call(DELETE, key(8))[0][0] == OK
    assert c.get(key(8)) == NOT_FOUND
    pairs, more = c.scan(key(5), 5)
    assert [k for k, _ in pairs] == [key(5), key(6), key(7), key(9), key(10)], "8 is gone"
    assert pairs[2][1] == b"changed" and pairs[0][1] == value(key(5)) and not more
    pairs, more = c.scan(key(0), 1000)
    assert more and 10 < len(pairs) < 200, "an answer holds what fits in one datagram"
    assert [k for k, _ in pairs] == sorted(k for k, _ in pairs)
    assert c.call(SCAN, key(0), count=0)[0][0] == BAD
    assert c.call(GET, b"")[0][0] == BAD
    c.s.close()
    st = daemon.tenant_stats(name)
    assert {x["class"] for x in st["classes"]} == {GET, PUT, DELETE, SCAN}
    assert "served get" in kv.stop()


def test_hgload_drives_kv_with_real_requests(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "kvload", "--ports", "8960-8960",
                 "--rpc-ports", "8960-8960", "--dt-us", "100000", "--ddrop-us", "200000")
    cleanup.append(Kv(daemon, "kvload", 8960, keys=2000))
    p = net.popen("taskset", "-c", "0", os.path.join(BIN, "hgload"),
                  "--target", f"{DAEMON_IP}:8960", "--rate", "1000", "--duration", "2",
                  "--flows", "4", "--credits", "--workload", "kv:get=90,scan=10@50000",
                  "--kv-keys", "2000", "--scan-count", "20", "--json",
                  stdout=subprocess.PIPE, text=True)
    out = __import__("json").loads(p.communicate(timeout=60)[0])
    assert out["sent"] > 1500 and out["lost"] == 0 and out["invalid"] == 0, out
    assert out["kv_errors"] == 0, out
    types = {t["name"]: t for t in out["types"]}
    assert set(types) == {"get", "scan"} and types["scan"]["received"] > 100, types
    assert types["scan"]["slowdown"]["p999"] is not None, "scan's service time was given"
    st = daemon.tenant_stats("kvload")
    assert {c["class"] for c in st["classes"]} == {GET, SCAN}

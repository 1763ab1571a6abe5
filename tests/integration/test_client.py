"""libhgclient.so driven through ctypes: the public API, and an app that
turns hostile and writes garbage into the shared region."""
import ctypes as C
import errno
import os
import socket
import struct
import time

import pytest

from hg import BUILD, DAEMON_IP, PEER_IP, udp_roundtrip, wait_for


class Addr(C.Structure):
    _fields_ = [("ip", C.c_uint32), ("port", C.c_uint16)]


class Msg(C.Structure):
    _fields_ = [("data", C.c_void_p), ("len", C.c_uint32), ("src", Addr),
                ("local_port", C.c_uint16), ("buf", C.c_uint32)]


@pytest.fixture(scope="module")
def lib():
    path = os.path.join(BUILD, "lib", "libhgclient.so")
    asan_built = b"libasan.so" in open(path, "rb").read()
    asan_loaded = any("libasan" in line for line in open("/proc/self/maps"))
    if asan_built and not asan_loaded:
        # make asan runs this file with libasan preloaded
        pytest.skip("an ASan libhgclient.so needs libasan preloaded (LD_PRELOAD)")
    lib = C.CDLL(path, use_errno=True)
    lib.hg_attach.restype = C.c_void_p
    lib.hg_attach.argtypes = [C.c_char_p, C.c_char_p]
    lib.hg_bind.argtypes = [C.c_void_p, C.c_uint16]
    lib.hg_ctx_open.restype = C.c_void_p
    lib.hg_ctx_open.argtypes = [C.c_void_p]
    lib.hg_recv.argtypes = [C.c_void_p, C.POINTER(Msg), C.c_long]
    lib.hg_send.argtypes = [C.c_void_p, C.POINTER(Msg), C.c_void_p, C.c_size_t]
    lib.hg_sendto.argtypes = [C.c_void_p, C.c_uint16, C.POINTER(Addr), C.c_char_p, C.c_size_t]
    lib.hg_msg_free.argtypes = [C.c_void_p, C.POINTER(Msg)]
    lib.hg_ctx_close.argtypes = [C.c_void_p]
    lib.hg_detach.argtypes = [C.c_void_p]
    lib.hg_strerror.restype = C.c_char_p
    return lib


def attach(lib, daemon, tenant):
    app = lib.hg_attach(daemon.app_ctl.encode(), tenant.encode())
    assert app, lib.hg_strerror()
    return app


def test_api_recv_send_sendto(lib, net, daemon):
    daemon.hgctl("tenant", "add", "lib", "--ports", "7700-7701")
    app = attach(lib, daemon, "lib")
    try:
        assert lib.hg_bind(app, 7700) == 0
        ctx = lib.hg_ctx_open(app)
        assert ctx
        m = Msg()
        assert lib.hg_recv(ctx, C.byref(m), 0) == 0            # non-blocking
        # a message hg_recv did not fill names no buffer: sending it is an
        # error, not a write outside the region (it was one before)
        assert lib.hg_send(ctx, C.byref(m), C.c_char_p(b"nothing"), 7) == -errno.EINVAL
        assert b"hg_recv did not fill it" in lib.hg_strerror()
        t0 = time.monotonic()
        assert lib.hg_recv(ctx, C.byref(m), 200_000) == 0      # 200 ms timeout
        assert time.monotonic() - t0 >= 0.19
        s = net.socket()
        s.bind((PEER_IP, 0))
        s.settimeout(2)
        s.sendto(b"request", (DAEMON_IP, 7700))
        assert lib.hg_recv(ctx, C.byref(m), 2_000_000) == 1
        assert C.string_at(m.data, m.len) == b"request"
        assert socket.ntohs(m.src.port) == s.getsockname()[1]
        assert socket.ntohs(m.local_port) == 7700
        assert lib.hg_send(ctx, C.byref(m), C.c_char_p(b"reply!"), 6) == 0
        assert s.recvfrom(100) == (b"reply!", (DAEMON_IP, 7700))
        to = Addr(struct.unpack("=I", socket.inet_aton(PEER_IP))[0],
                  socket.htons(s.getsockname()[1]))
        assert wait_for(lambda: lib.hg_sendto(ctx, socket.htons(7701), C.byref(to),
                                              b"pushed", 6) == 0, timeout=2)
        assert s.recvfrom(100) == (b"pushed", (DAEMON_IP, 7701))
        assert lib.hg_sendto(ctx, socket.htons(7701), C.byref(to), b"x" * 2000, 2000) \
            == -errno.EMSGSIZE
        s.close()
    finally:
        lib.hg_detach(app)
    assert wait_for(lambda: daemon.tenants()["lib"]["apps"] == 0)


def test_api_errors_carry_the_daemons_reason(lib, daemon):
    assert not lib.hg_attach(daemon.app_ctl.encode(), b"nobody")
    assert lib.hg_strerror() == b"unknown tenant 'nobody'"
    assert not lib.hg_attach(b"/tmp/hg-nothing-here.sock", b"x")
    assert b"cannot reach hourglassd" in lib.hg_strerror()
    daemon.hgctl("tenant", "add", "errs", "--ports", "7710-7710")
    app = attach(lib, daemon, "errs")
    try:
        assert lib.hg_bind(app, 7711) == -errno.EACCES
        assert b"not owned by tenant 'errs'" in lib.hg_strerror()
        assert lib.hg_bind(app, 7710) == 0
        other = attach(lib, daemon, "errs")
        assert lib.hg_bind(other, 7710) == -errno.EADDRINUSE
        lib.hg_detach(other)
    finally:
        lib.hg_detach(app)


# ---- a hostile app: raw writes into its own region ----

HDR = struct.Struct("<IIIIQIIIIIIIIQQQQ")
DESC = struct.Struct("<IHBBIHHQ")
RING_ELEMS = 384            # sizeof(struct rte_ring) in DPDK 22.11
PROD, CONS = 128, 256


def region_base(tenant):
    for line in open("/proc/self/maps"):
        if f"memfd:hourglass-{tenant} " in line + " ":
            return int(line.split("-")[0], 16)
    raise AssertionError("region not mapped")


class Region:
    def __init__(self, tenant):
        self.base = region_base(tenant)
        f = HDR.unpack(C.string_at(self.base, HDR.size))
        (self.magic, _, _, _, self.size, _, self.n_cores, _, self.ring_size,
         self.geom, _, self.n_bufs, _, _, self.ring_off, self.stride, _) = f

    def ring(self, ctx, core, kind):
        slot = (ctx * self.n_cores + core) * 3 + kind
        return self.base + self.ring_off + slot * self.stride + 4096 - self.geom

    def u32(self, addr, value=None):
        p = C.cast(addr, C.POINTER(C.c_uint32))
        if value is not None:
            p[0] = value & 0xFFFFFFFF
        return p[0]

    def fill_buffers(self, ring):
        """Dequeues what the daemon put on a fill ring (as the app may)."""
        head, tail = self.u32(ring + CONS), self.u32(ring + PROD + 4)
        bufs = [self.u32(ring + RING_ELEMS + 4 * (i & (self.ring_size - 1)))
                for i in range(head, tail)]
        self.u32(ring + CONS, tail)
        self.u32(ring + CONS + 4, tail)
        return bufs

    def push(self, ring, descs):
        head = self.u32(ring + PROD)
        for i, d in enumerate(descs):
            at = ring + RING_ELEMS + DESC.size * ((head + i) & (self.ring_size - 1))
            C.memmove(at, d, DESC.size)
        self.u32(ring + PROD, head + len(descs))
        self.u32(ring + PROD + 4, head + len(descs))


def test_hostile_app_cannot_hurt_the_daemon_or_other_tenants(lib, net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "good", "--ports", "7800-7800")
    daemon.hgctl("tenant", "add", "evil", "--ports", "7900-7901")
    cleanup.append(daemon.echo("good", 7800))
    app = attach(lib, daemon, "evil")
    assert lib.hg_bind(app, 7900) == 0
    ctx = lib.hg_ctx_open(app)
    ctx_id = C.cast(ctx + 8, C.POINTER(C.c_uint32))[0]
    r = Region("evil")
    assert r.magic == 0x48475348
    tx, rx, fill = (r.ring(ctx_id, 0, k) for k in (1, 0, 2))
    assert wait_for(lambda: r.u32(fill + PROD + 4) - r.u32(fill + CONS) > 0)
    held = r.fill_buffers(fill)
    assert len(held) >= 6
    peer = struct.unpack("=I", socket.inet_aton(PEER_IP))[0]
    off_link = struct.unpack("=I", socket.inet_aton("198.19.0.9"))[0]
    p9 = socket.htons(40000)
    port = socket.htons(7900)
    bad = [
        DESC.pack(held[0], 10, 9, 0, peer, p9, port, 0),            # bad op
        DESC.pack(0xFFFFFFFF, 10, 1, 0, peer, p9, port, 0),         # out of range
        DESC.pack(r.n_bufs - 1, 10, 1, 0, peer, p9, port, 0),      # not handed out
        DESC.pack(held[1], 5000, 1, 0, peer, p9, port, 0),          # too long
        DESC.pack(held[2], 10, 1, 0, peer, p9, socket.htons(7800), 0),  # good's port
        DESC.pack(held[3], 10, 1, 0, off_link, p9, port, 0),        # off-link peer
        DESC.pack(held[4], 0, 2, 0, 0, 0, 0, 0),                    # FREE: fine
        DESC.pack(held[4], 0, 2, 0, 0, 0, 0, 0),                    # double free
    ]
    r.push(tx, bad)
    wait_for(lambda: daemon.tenant_stats("evil")["cores"][0]["drops"]["bad_descriptor"] >= 7)
    st = daemon.tenant_stats("evil")
    assert st["cores"][0]["drops"]["bad_descriptor"] == 7, st
    # scribble over the geometry and head/tail words of its rings
    for ring in (tx, rx, fill):
        r.u32(ring - 128 + 0x30, 0xFFFFFFFF)    # size/mask/capacity live here
        r.u32(ring - 128 + 0x34, 0xFFFFFFFF)
        r.u32(ring - 128 + 0x38, 0x7FFFFFFF)
    r.u32(rx + CONS, 0x1234567)
    r.u32(rx + CONS + 4, 0x1234567)
    r.u32(tx + PROD + 4, r.u32(tx + CONS) + 0x7FFFFFFF)   # "2 billion descriptors"
    s = net.socket()
    for i in range(20):
        s.sendto(b"into the mess", (DAEMON_IP, 7900))
        assert udp_roundtrip(s, 7800, b"good%d" % i) == b"good%d" % i
    s.close()
    assert daemon.proc.poll() is None
    assert daemon.tenant_stats("good")["cores"][0]["drops"]["bad_descriptor"] == 0
    lib.hg_detach(app)
    assert wait_for(lambda: daemon.tenants()["evil"]["apps"] == 0)
    assert wait_for(lambda: daemon.tenants()["evil"]["contexts"] == 0)

#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/seeds/NAME/*): a few
valid inputs of each kind, so that a short run starts from the paths that
matter. Run once when a format changes; the seeds are kept in the tree."""
import os
import socket
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
US, PEER = "198.18.0.1", "198.18.0.2"
US_MAC, PEER_MAC = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4(proto, payload, src=PEER, dst=US):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst))
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return US_MAC + PEER_MAC + b"\x08\x00" + h + payload


def udp(dport, payload, sport=40000):
    return ipv4(17, struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload)


def arp(op, sender, target):
    a = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, PEER_MAC,
                    socket.inet_aton(sender), b"\0" * 6, socket.inet_aton(target))
    return b"\xff" * 6 + PEER_MAC + b"\x08\x06" + a


def icmp_echo():
    body = struct.pack("!BBHHH", 8, 0, 0, 1, 1) + b"ping"
    body = body[:2] + struct.pack("!H", csum(body)) + body[4:]
    return ipv4(1, body)


def rpc(session, req_id, flags=1, credits=0):
    return struct.pack("!HBBBBHIIQQ", 0x4852, 1, flags, 0, 0, credits, session, 0,
                       req_id, 0)


# ---- protobuf, by hand: just enough for the control messages ----
def varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7f) | (0x80 if n > 0x7f else 0))
        n >>= 7
        if not n:
            return bytes(out)


def fv(num, v):
    return varint(num << 3) + varint(v)


def fl(num, b):
    return varint(num << 3 | 2) + varint(len(b)) + b


def frame(body, align=1):
    pad = (-len(body)) % align
    if pad:
        pad = pad + 4 if pad == 1 else pad
        body += fl(15, b"\0" * (pad - 2))     # an unknown field
    return struct.pack("!I", len(body)) + body


def req(i, field, msg):
    return fv(1, i) + fl(field, msg)


def kv(key, value):
    """A KeyValue pair of TenantAdd/TenantSet (field 2, repeated)."""
    return fl(2, fl(1, key) + fl(2, value))


def tenant_add(name, lo, hi, rpc_lo=0, rpc_hi=0):
    m = fl(1, name) + kv(b"ports", b"%d-%d" % (lo, hi))
    if rpc_hi:
        m += kv(b"rpc-ports", b"%d-%d" % (rpc_lo, rpc_hi))
    return m


def memif_region(descs, log2=4, bsize=256):
    """fuzz_memif's region: a C2S ring at 0 whose descriptors (flags,
    region, frame) point into the buffers, an S2C ring after it with
    every buffer posted, then the buffers."""
    ring = 128 + (16 << log2)
    slots = 1 << log2
    buf0 = 2 * ring
    r = bytearray(buf0 + 2 * slots * bsize)
    for i in (0, 1):
        struct.pack_into("<I", r, i * ring, 0x3E31F20)
    for k, (flags, region, f) in enumerate(descs):
        off = buf0 + k * bsize
        r[off:off + len(f)] = f
        struct.pack_into("<HHII", r, 128 + 16 * k, flags, region, len(f), off)
    struct.pack_into("<H", r, 6, len(descs))
    for k in range(slots):
        struct.pack_into("<HHII", r, ring + 128 + 16 * k, 0, 0, bsize,
                         buf0 + (slots + k) * bsize)
    struct.pack_into("<H", r, ring + 6, slots)
    return bytes(r)


def write(target, name, data):
    d = os.path.join(HERE, "seeds", target)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, name), "wb").write(data)


def main():
    write("parse", "udp", udp(7000, b"hello"))
    write("parse", "arp_request", arp(1, PEER, US))
    write("parse", "arp_reply", arp(2, PEER, US))
    write("parse", "icmp", icmp_echo())
    write("parse", "rpc", udp(7000, rpc(7, 1)))

    # the XDP program's look: a datagram, one with IP options, a fragment
    write("xdp", "udp", udp(7000, b"hello"))
    opt = ipv4(17, struct.pack("!HHHH", 40000, 7001, 12, 0) + b"opts")
    write("xdp", "ip_options", opt[:14] + b"\x46" + opt[15:24] + b"\x00\x00" + opt[26:34]
          + b"\x01\x01\x01\x00" + opt[34:])
    frag = udp(7002, b"frag")
    write("xdp", "fragment", frag[:20] + b"\x20\x00" + frag[22:])
    write("xdp", "arp", arp(1, PEER, US))
    # hgload's link bounce: an answer from a port of the daemon's, to turn
    write("xdp", "answer", ipv4(17, struct.pack("!HHHH", 9000, 40000, 13, 0) + b"hello",
                                src=US, dst=PEER))

    d = struct.pack("<IHBBIHHQ", 300, 64, 1, 0, socket.htonl(0xC6120002), 0x3930,
                    0x581b, 0)
    write("desc", "send", bytes([0x81]) + d + bytes([0xc1]) + d + bytes([0xa2]) + d)

    def rec(kind, b):
        b += b"\0" * ((-len(b)) % 8)
        return bytes([kind, len(b) // 8]) + b
    r = rpc(9, 1, credits=4)
    write("rpc", "flow", rec(0, udp(7000, r)) + rec(0, udp(7000, rpc(9, 2))) +
          rec(1, rpc(9, 1, flags=2)) + rec(2, b"") + rec(4, udp(7001, rpc(10, 1))))

    write("ctl_frame", "tenant_add", frame(req(1, 10, tenant_add(b"a", 7000, 7009))))
    write("ctl_frame", "stats", frame(req(2, 14, b"")))
    write("ctl_frame", "attach", frame(req(3, 17, fl(1, b"a"))))
    write("ctl_frame", "set", frame(req(4, 11, fl(1, b"a") + kv(b"weight", b"2"))))
    write("ctl_frame", "get", frame(req(5, 20, fl(1, b"a") + fl(2, b"cap"))))
    write("ctl_frame", "reload", frame(req(6, 21, b"")))

    def crec(op, b):
        assert len(b) % 4 == 0
        return bytes([op, len(b) // 4]) + b
    add = frame(req(1, 10, tenant_add(b"a", 7000, 7009, 7000, 7001)), 4)
    add_u = frame(req(2, 10, tenant_add(b"u", 7100, 7109) + kv(b"uid", b"1000")), 4)
    attach = frame(req(3, 17, fl(1, b"a")), 4)
    attach_u = frame(req(3, 17, fl(1, b"u")), 4)
    ctx = frame(req(4, 18, b""), 4)
    bind = frame(req(5, 19, fv(1, 7000)), 4)
    setw = frame(req(6, 11, fl(1, b"a") + kv(b"weight", b"3") + kv(b"dt-us", b"70")), 4)
    get = frame(req(7, 20, fl(1, b"a")), 4)
    reload = frame(req(8, 21, b""), 4)
    park = frame(req(9, 22, b""), 4)
    scrib = b"\0" + b"\0\0\0\0" + b"\xff" * 59
    # context 0's park word (page 1, offset 44): a park request, granted
    # or not by the core tick, then one from the other policy
    scrib_park = b"\0" + bytes([0x2c, 0x10, 0, 0]) + b"\x07\0\0\0" + b"\0" * 3
    setpol = frame(req(10, 11, fl(1, b"a") + kv(b"policy", b"shenango")), 4)
    write("ctl_conn", "session",
          crec(0, add) + crec(0, add_u) + crec(1, attach) + crec(1, ctx) + crec(1, ctx) +
          crec(1, bind) + crec(2, attach_u) + crec(2, ctx) + crec(4, b"") +
          crec(3, scrib) + crec(4, b"") + crec(1, setw) + crec(0, setw) +
          crec(0x84, b"") + crec(1, attach) + crec(4, b"") + crec(0, get) +
          crec(0, reload))
    write("ctl_conn", "park",
          crec(0, add) + crec(1, attach) + crec(1, ctx) + crec(1, ctx) + crec(1, park) +
          crec(3, scrib_park) + crec(4, b"") + crec(4, b"") + crec(0, setpol) +
          crec(3, scrib_park) + crec(4, b"") + crec(1, park) + crec(4, b""))
    write("rx_map", "map", b'{"tenants": [{"name": "a", "ports": "7000-7009", '
          b'"rx_queue": 1}, {"name": "b", "ports": "none", "rx_queue": 0}], '
          b'"rx_queues_per_core": 4, "fp_cores": 2, "rx_steering": "memif peer"}')
    write("rx_map", "tx_groups", b'{"tenants": [{"name": "a", "ports": "7000", "rx_queue": 0, '
          b'"tx_queue": 2}, {"name": "b", "ports": "7100", "rx_queue": 0, "tx_queue": 1}], '
          b'"rx_queues_per_core": 1, "tx_queues_per_core": 3, "fp_cores": 2}')
    write("rx_map", "frame", udp(7000, b"hello"))
    write("memif", "frames", memif_region([(0, 0, udp(7000, b"hello"))] * 3))
    write("memif", "lies", memif_region([(1, 0, udp(7000, b"chained")),
                                         (0, 0, udp(7000, b"tail")),
                                         (0, 9, udp(7000, b"no region"))]))


if __name__ == "__main__":
    main()

"""A memif client written for the tests, in plain Python: the protocol of
proto/memif.h, with every field in the test's hands, so that a test can be
a well-behaved peer with any ring count, or a hostile one that lies in its
messages and its descriptors."""
import array
import fcntl
import mmap
import os
import socket
import struct

MSG = 128
ACK, HELLO, INIT, ADD_REGION, ADD_RING, CONNECT, CONNECTED, DISCONNECT = range(1, 9)
COOKIE = 0x3E31F20
VERSION = 0x0200
RING_C2S = 1
MASK_INT = 1
NEXT = 1
DESC = 128          # the first descriptor's offset in a ring


def ring_bytes(log2):
    return DESC + (16 << log2)


class Refused(Exception):
    """The daemon hung up; args[0] is the reason it gave, if any."""


class Peer:
    """Connects to the daemon's memif socket and, unless told otherwise,
    completes the handshake with n_rx rings towards the daemon and n_tx
    back, 2**log2 slots each, buffers of bsize bytes in one sealed memfd."""

    def __init__(self, path, n_rx=1, n_tx=1, log2=8, bsize=2048, connect=True):
        self.n_rx, self.n_tx, self.log2, self.bsize = n_rx, n_tx, log2, bsize
        self.slots = 1 << log2
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(5)
        self.sock.connect(path.replace("@", "\0", 1) if path.startswith("@") else path)
        self.hello = self.recv(HELLO)
        self.fds = []
        self.map = None
        self.rx_next = [0] * n_tx       # our read position on each S2C ring
        if connect:
            self.handshake()

    # ---- messages ----

    def send(self, mtype, body=b"", fd=None):
        msg = struct.pack("<H", mtype) + body
        msg += b"\0" * (MSG - len(msg))
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))] \
            if fd is not None else []
        self.sock.sendmsg([msg], anc)

    def recv(self, want=None):
        data = self.sock.recv(MSG)
        if len(data) < 2:
            raise Refused("")
        mtype = struct.unpack_from("<H", data)[0]
        if mtype == DISCONNECT:
            raise Refused(data[6:102].split(b"\0")[0].decode())
        if want is not None and mtype != want:
            raise AssertionError(f"expected message {want}, got {mtype}")
        return data

    def init(self, version=VERSION, id_=0, mode=0, name=b"pytest"):
        self.send(INIT, struct.pack("<HIB24s32s", version, id_, mode, b"", name))
        self.recv(ACK)

    def add_region(self, fd, size, index=0):
        self.send(ADD_REGION, struct.pack("<HQ", index, size), fd)
        self.recv(ACK)

    def add_ring(self, c2s, index, offset, log2=None, region=0):
        efd = os.eventfd(0, os.EFD_NONBLOCK)
        self.fds.append(efd)
        self.send(ADD_RING, struct.pack("<HHHIBH", RING_C2S if c2s else 0, index, region,
                                        offset, self.log2 if log2 is None else log2, 0),
                  efd)
        self.recv(ACK)

    def connect(self):
        self.send(CONNECT, struct.pack("<32s", b"pytest0"))
        self.recv(CONNECTED)

    # ---- memory ----

    def region(self, size, seal=True):
        fd = os.memfd_create("memif", os.MFD_ALLOW_SEALING if seal else 0)
        os.ftruncate(fd, size)
        if seal:
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
        self.fds.append(fd)
        return fd

    def ring_off(self, i):
        """Ring i: C2S rings first, then S2C."""
        return i * ring_bytes(self.log2)

    def buf_off(self, ring, slot):
        base = (self.n_rx + self.n_tx) * ring_bytes(self.log2)
        return base + (ring * self.slots + slot) * self.bsize

    def handshake(self):
        self.init()
        size = self.buf_off(self.n_rx + self.n_tx, 0)
        fd = self.region(size)
        self.map = mmap.mmap(fd, size)
        for i in range(self.n_rx + self.n_tx):
            struct.pack_into("<I", self.map, self.ring_off(i), COOKIE)
        self.add_region(fd, size)
        for i in range(self.n_rx):
            self.add_ring(True, i, self.ring_off(i))
        for i in range(self.n_tx):
            self.add_ring(False, i, self.ring_off(self.n_rx + i))
        self.connect()
        for i in range(self.n_tx):
            struct.pack_into("<H", self.map, self.ring_off(self.n_rx + i) + 4, MASK_INT)
            self.post(i)

    # ---- rings ----

    def head(self, ring):
        return struct.unpack_from("<H", self.map, self.ring_off(ring) + 6)[0]

    def tail(self, ring):
        return struct.unpack_from("<H", self.map, self.ring_off(ring) + 64)[0]

    def set_head(self, ring, v):
        struct.pack_into("<H", self.map, self.ring_off(ring) + 6, v & 0xffff)

    def desc(self, ring, slot, flags, region, length, offset):
        struct.pack_into("<HHII", self.map, self.ring_off(ring) + DESC + 16 * (slot % self.slots),
                         flags, region, length, offset)

    def send_frames(self, ring, frames):
        """Puts frames on C2S ring `ring` (as many as fit); how many."""
        head = self.head(ring)
        room = self.slots - ((head - self.tail(ring)) & 0xffff)
        n = min(room, len(frames))
        for k in range(n):
            slot = (head + k) % self.slots
            off = self.buf_off(ring, slot)
            self.map[off:off + len(frames[k])] = frames[k]
            self.desc(ring, slot, 0, 0, len(frames[k]), off)
        self.set_head(ring, head + n)
        return n

    def post(self, i):
        """Posts every free buffer of S2C ring i to the daemon."""
        ring = self.n_rx + i
        head = self.head(ring)
        free = self.slots - ((head - self.rx_next[i]) & 0xffff)
        for k in range(free):
            slot = (head + k) % self.slots
            self.desc(ring, slot, 0, 0, self.bsize, self.buf_off(ring, slot))
        self.set_head(ring, head + free)

    def recv_frames(self, i=0):
        """The frames the daemon put on S2C ring i since the last call."""
        ring, out = self.n_rx + i, []
        tail = self.tail(ring)
        while self.rx_next[i] != tail:
            slot = self.rx_next[i] % self.slots
            base = self.ring_off(ring) + DESC + 16 * slot
            _, _, length, off = struct.unpack_from("<HHII", self.map, base)
            out.append(bytes(self.map[off:off + length]))
            self.rx_next[i] = (self.rx_next[i] + 1) & 0xffff
        self.post(i)
        return out

    def echo_round(self, frames, mac, ip, wait=1.0, ring=0):
        """Sends frames on C2S ring `ring` and collects the UDP frames that
        come back for wait seconds, answering the daemon's ARP requests
        for ip (at mac) meanwhile; the UDP payloads it got."""
        import time
        self.send_frames(ring, frames)
        got, deadline = [], time.time() + wait
        while time.time() < deadline:
            for i in range(self.n_tx):
                for f in self.recv_frames(i):
                    if f[12:14] == b"\x08\x06" and f[20:22] == b"\x00\x01" and \
                            f[38:42] == socket.inet_aton(ip):
                        daemon_mac = f[22:28].hex(":")
                        self.send_frames(ring, [arp_reply(daemon_mac, mac, ip,
                                                          socket.inet_ntoa(f[28:32]))])
                    elif f[12:14] == b"\x08\x00" and f[23] == 17:
                        got.append(f[42:])
            time.sleep(0.005)
        return got

    def close(self, say_goodbye=False):
        if say_goodbye:
            try:
                self.send(DISCONNECT, struct.pack("<I96s", 0, b"bye"))
            except OSError:
                pass
        self.sock.close()
        if self.map is not None:
            self.map.close()
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def checksum(data):
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def udp_frame(dst_mac, src_mac, src_ip, dst_ip, sport, dport, payload):
    """An Ethernet/IPv4/UDP frame (UDP checksum 0: none)."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", "")) + \
        b"\x08\x00" + ip + udp


def arp_reply(dst_mac, src_mac, src_ip, dst_ip):
    """An ARP reply telling dst (the daemon) that src_ip is at src_mac."""
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2,
                      bytes.fromhex(src_mac.replace(":", "")), socket.inet_aton(src_ip),
                      bytes.fromhex(dst_mac.replace(":", "")), socket.inet_aton(dst_ip))
    return bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", "")) + \
        b"\x08\x06" + arp

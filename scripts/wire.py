#!/usr/bin/env python3
"""Bounded raw-frame sender and per-source counter for the demo sandbox.

  wire.py send IFACE DST_MAC SRC_IP COUNT   crafted UDP frames from SRC_IP
  wire.py recv IFACE READY DONE             counts arrivals per source;
                                            creates READY once listening,
                                            stops 0.5 s after DONE exists
                                            (60 s max), prints JSON
                                            {src: count}

Only ever run inside the demo's network namespaces (nsenter), with
addresses from 198.18.0.0/15.
"""
import ipaddress
import json
import os
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
PACKET_OUTGOING = 4
MAX_COUNT = 10000


def checksum(header):
    total = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def frame(dst_mac, src_mac, src_ip, dst_ip="198.19.0.1"):
    payload = bytes(18)
    udp = struct.pack("!HHHH", 9, 9, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64,
                     17, 0, socket.inet_aton(src_ip),
                     socket.inet_aton(dst_ip))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return dst_mac + src_mac + struct.pack("!H", ETH_P_IP) + ip + udp


def send(iface, dst_mac, src_ip, count):
    if not 0 < count <= MAX_COUNT:
        sys.exit("wire.py: count must be 1..%d" % MAX_COUNT)
    if ipaddress.ip_address(src_ip) not in ipaddress.ip_network(
            "198.18.0.0/15"):
        sys.exit("wire.py: sources must be in 198.18.0.0/15")
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0) as sock:
        sock.bind((iface, 0))
        src_mac = sock.getsockname()[4]
        data = frame(bytes.fromhex(dst_mac.replace(":", "")), src_mac, src_ip)
        for _ in range(count):
            sock.send(data)


def recv(iface, ready_file, done_file):
    counts = {}
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                       socket.htons(ETH_P_ALL)) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        sock.bind((iface, 0))
        open(ready_file, "w").close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([sock], [], [], 0.5)
            if not ready:
                if os.path.exists(done_file):
                    break
                continue
            data, addr = sock.recvfrom(2048)
            if addr[2] == PACKET_OUTGOING or len(data) < 34:
                continue
            if struct.unpack("!H", data[12:14])[0] != ETH_P_IP:
                continue
            src = socket.inet_ntoa(data[26:30])
            counts[src] = counts.get(src, 0) + 1
    print(json.dumps(counts))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "send":
        send(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif len(sys.argv) == 5 and sys.argv[1] == "recv":
        recv(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

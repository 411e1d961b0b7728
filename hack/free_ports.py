#!/usr/bin/env python3
"""Free TCP ports on 127.0.0.1 for servers a test or a local cluster is about to start.

Ports come from below the kernel's ephemeral range (ip_local_port_range), never from it: a port
the kernel hands out for bind(0) is also what it hands out for outgoing connections, so in the
seconds before a server binds it, a client connection of a parallel test could take it ("address
already in use"). Below the range only servers bind, and each candidate is checked free.

    hack/free_ports.py N        prints N distinct ports, space-separated
    from free_ports import free_ports   (Python callers)
"""
import random
import socket
import sys


def _ephemeral_start():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(n):
    """n distinct ports that were free a moment ago, below the ephemeral range."""
    high = _ephemeral_start()
    low = 10000 if high > 12000 else 1024
    ports = []
    for port in random.sample(range(low, high), high - low):  # one pass at most: bounded
        if len(ports) == n:
            break
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        ports.append(port)
    if len(ports) < n:
        raise SystemExit(f"free_ports: only {len(ports)} of {n} ports free in {low}-{high - 1}")
    return ports


if __name__ == "__main__":
    print(" ".join(str(p) for p in free_ports(int(sys.argv[1]))))

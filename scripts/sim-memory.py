#!/usr/bin/env python3
"""Simulator memory and request throughput, measured from outside the process.

Starts `cvo sim serve` (the binary in $CVO_BIN, default target/debug/cvo), creates N
ConfigMaps of ~1 KB (the same shape as benches/sim.rs: 3 labels, a 1000-byte payload and an
index) over one keep-alive HTTPS connection, then does M GETs, reading the server's VmRSS
(/proc/PID/status) before and after each phase. Prints one line per figure:

- JSON bytes of one stored ConfigMap (as GET returns it, managedFields included);
- RSS per object (KiB) = RSS delta over the creates / N, and its overhead over the JSON;
- RSS growth over the GETs (KiB; no growth with request count is the target);
- creates/s and gets/s (the debug binary is slower than the release one: compare like with
  like).

Usage: scripts/sim-memory.py [--objects N] [--gets M] [--event-window W]
Needs: python3 (stdlib only), kubectl (to read the kubeconfig). Stops the server on exit.
"""

import argparse
import base64
import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import tempfile
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def kubectl_view(kubeconfig, path):
    return subprocess.check_output(
        ["kubectl", "--kubeconfig", kubeconfig, "config", "view", "--raw", "-o",
         "jsonpath={" + path + "}"], text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--gets", type=int, default=100_000)
    ap.add_argument("--event-window", type=int, default=10_000,
                    help="cvo sim serve --event-window (benches/sim.rs keeps 10,000)")
    args = ap.parse_args()
    binary = os.environ.get("CVO_BIN", "target/debug/cvo")
    tmp = tempfile.mkdtemp(prefix="cvo-simmem-")
    kubeconfig = os.path.join(tmp, "kubeconfig")
    proc = subprocess.Popen(
        [binary, "sim", "serve", "--port", "0", "--kubeconfig-out", kubeconfig,
         "--event-window", str(args.event_window)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"https://127\.0\.0\.1:(\d+)", line)
        if not m:
            sys.exit(f"sim-memory: cvo sim serve did not start: {line!r}")
        port = int(m.group(1))
        token = kubectl_view(kubeconfig, ".users[0].user.token")
        ca = base64.b64decode(kubectl_view(kubeconfig, ".clusters[0].cluster.certificate-authority-data"))
        ctx = ssl.create_default_context(cadata=ca.decode())
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                   "Accept": "application/json", "User-Agent": "sim-memory"}

        def call(method, path, body=None, want=(200, 201)):
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
            if r.status not in want:
                sys.exit(f"sim-memory: {method} {path}: {r.status} {data[:200]!r}")
            return data

        call("POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": "bench"}}))
        payload = "x" * 1000
        base = "/api/v1/namespaces/bench/configmaps"
        time.sleep(0.5)
        rss0 = rss_kib(proc.pid)
        start = time.monotonic()
        for i in range(args.objects):
            cm = {"metadata": {"name": f"cm-{i:05}", "labels": {
                "app": "bench", "shard": str(i % 10), "tier": "data"}},
                "data": {"payload": payload, "index": str(i)}}
            call("POST", base, json.dumps(cm))
        took = time.monotonic() - start
        time.sleep(0.5)
        rss1 = rss_kib(proc.pid)
        size = len(call("GET", f"{base}/cm-00000"))
        per = (rss1 - rss0) / args.objects
        print(f"objects: {args.objects} ConfigMaps, event window {args.event_window}, binary {binary}")
        print(f"JSON of one ConfigMap (GET body): {size} bytes")
        print(f"VmRSS before / after creates: {rss0 / 1024:.1f} MiB / {rss1 / 1024:.1f} MiB")
        print(f"RSS per object: {per:.2f} KiB; overhead over its JSON: {per - size / 1024:.2f} KiB")
        print(f"creates: {args.objects / took:.0f}/s")
        start = time.monotonic()
        for i in range(args.gets):
            call("GET", f"{base}/cm-{(i * 7919) % args.objects:05}")
        took = time.monotonic() - start
        time.sleep(0.5)
        rss2 = rss_kib(proc.pid)
        print(f"gets: {args.gets / took:.0f}/s")
        print(f"VmRSS after {args.gets} GETs: {rss2 / 1024:.1f} MiB "
              f"(growth {rss2 - rss1} KiB, {(rss2 - rss1) * 1024 / max(args.gets, 1):.1f} bytes/GET)")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
        os.rmdir(tmp)


if __name__ == "__main__":
    main()

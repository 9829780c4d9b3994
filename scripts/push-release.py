#!/usr/bin/env python3
"""Builds a release image from a payload directory and pushes it to a registry over plain HTTP
(a local docker-registry on loopback), for measuring `cvo payload pull`.

    scripts/push-release.py 127.0.0.1:5000 ocp/release:4.16.4 PAYLOAD_DIR [--filler-mb N] [--zstd]

One gzip (with --zstd: zstd, by the `zstd` program, level 3) tar layer holds PAYLOAD_DIR's manifests/ and release-manifests/ plus, with
--filler-mb, an incompressible file of N MB under usr/share/ (outside the payload: it must be
streamed and hashed but never extracted). Prints the pushed image's pull spec by digest.
"""
import argparse, gzip, hashlib, io, json, os, subprocess, sys, tarfile, urllib.request

def blob_upload(reg, repo, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    req = urllib.request.Request(f"http://{reg}/v2/{repo}/blobs/uploads/", method="POST", data=b"")
    with urllib.request.urlopen(req) as r:
        loc = r.headers["Location"]
    if loc.startswith("/"):
        loc = f"http://{reg}{loc}"
    sep = "&" if "?" in loc else "?"
    req = urllib.request.Request(f"{loc}{sep}digest={digest}", method="PUT", data=data,
                                 headers={"Content-Type": "application/octet-stream"})
    urllib.request.urlopen(req).close()
    return digest

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("registry")
    ap.add_argument("ref")
    ap.add_argument("payload")
    ap.add_argument("--filler-mb", type=int, default=0)
    ap.add_argument("--zstd", action="store_true")
    a = ap.parse_args()
    repo, tag = a.ref.rsplit(":", 1)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as t:
        for d in ("manifests", "release-manifests"):
            t.add(os.path.join(a.payload, d), arcname=d)
        if a.filler_mb:
            data = os.urandom(a.filler_mb << 20)
            info = tarfile.TarInfo("usr/share/filler.bin")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    if a.zstd:
        layer = subprocess.run(["zstd", "-3", "-q", "-c"], input=raw.getvalue(), stdout=subprocess.PIPE, check=True).stdout
        layer_type = "application/vnd.oci.image.layer.v1.tar+zstd"
    else:
        layer = gzip.compress(raw.getvalue(), compresslevel=1)
        layer_type = "application/vnd.oci.image.layer.v1.tar+gzip"
    config = json.dumps({"architecture": "amd64", "os": "linux",
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(raw.getvalue()).hexdigest()]},
                         "config": {}}).encode()
    ld, cd = blob_upload(a.registry, repo, layer), blob_upload(a.registry, repo, config)
    manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": len(config)},
                           "layers": [{"mediaType": layer_type, "digest": ld, "size": len(layer)}]}).encode()
    req = urllib.request.Request(f"http://{a.registry}/v2/{repo}/manifests/{tag}", method="PUT", data=manifest,
                                 headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"})
    urllib.request.urlopen(req).close()
    print(f"{a.registry}/{repo}@sha256:{hashlib.sha256(manifest).hexdigest()}")
    print(f"layer {len(layer)} bytes", file=sys.stderr)

if __name__ == "__main__":
    main()

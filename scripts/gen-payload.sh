#!/usr/bin/env bash
# Writes a synthetic release payload for measuring `cvo reconcile`:
#   scripts/gen-payload.sh DIR [N] [VERSION]
# DIR gets manifests/ and release-manifests/ (release-metadata, image-references and N manifests:
# one Namespace per component, then ConfigMaps, ServiceAccounts and Secrets spread over 60
# components and 40 run levels). Defaults: N=1000, VERSION=4.16.0. PAD=K adds K keys of 90
# characters to every ConfigMap (PAD=300 makes a ~10 MB payload for timing `cvo payload inspect`).
set -euo pipefail
dir=${1:?usage: gen-payload.sh DIR [N] [VERSION]}
n=${2:-1000}
version=${3:-4.16.0}
pad=""
for k in $(seq 1 "${PAD:-0}"); do pad+=$(printf '\n  pad%d: "%090d"' "$k" 0); done
rm_dir="$dir/release-manifests"
mkdir -p "$dir/manifests" "$rm_dir"
printf '{"kind":"cincinnati-metadata-v0","version":"%s","previous":[],"metadata":{}}\n' "$version" \
    >"$rm_dir/release-metadata"
printf 'kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata:\n  name: %s\n' "$version" \
    >"$rm_dir/image-references"
ann='  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"'
components=60
for c in $(seq 0 $((components - 1))); do
    level=$((10 + c * 40 / components))
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-comp%02d\n%s\n' "$c" "$ann" \
        >"$rm_dir/0000_$(printf %02d "$level")_comp$(printf %02d "$c")_0-namespace.yaml"
done
for i in $(seq 0 $((n - components - 1))); do
    c=$((i % components))
    level=$((10 + c * 40 / components))
    ns=$(printf 'openshift-comp%02d' "$c")
    f="$rm_dir/0000_$(printf %02d "$level")_comp$(printf %02d "$c")_$(printf %04d "$i")"
    case $((i % 3)) in
    0) printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: %s\n%s\ndata:\n  index: "%d"\n  version: "%s"%s\n' \
        "$i" "$ns" "$ann" "$i" "$version" "$pad" >"$f-configmap.yaml" ;;
    1) printf 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa-%d\n  namespace: %s\n%s\n' \
        "$i" "$ns" "$ann" >"$f-serviceaccount.yaml" ;;
    2) printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret-%d\n  namespace: %s\n%s\ntype: Opaque\ndata:\n  index: %s\n' \
        "$i" "$ns" "$ann" "$(printf %s "$i" | base64)" >"$f-secret.yaml" ;;
    esac
done
echo "wrote $n manifests for $version to $dir"

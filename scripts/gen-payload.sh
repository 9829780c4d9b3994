#!/usr/bin/env bash
# Writes a synthetic release payload for measuring `cvo reconcile`:
#   scripts/gen-payload.sh DIR [N] [VERSION]
# DIR gets manifests/ and release-manifests/ (release-metadata, image-references and exactly N
# manifests). Defaults: N=1000, VERSION=4.16.0.
#
# MIX=full (the default) is the mix of a real payload: C = min(60, max(1, N/16)) components with
# one Namespace each (run levels 10-49), K = max(1, N*52/1000) CustomResourceDefinitions at run level
# 05, then the rest spread over the components, 20 in a cycle of
#   6 ConfigMaps, 4 Secrets, 2 ServiceAccounts, 2 Roles, 2 RoleBindings, 1 ClusterRole,
#   1 Service (ClusterIP or headless, alternately), 2 custom resources of the CRDs
# (N=1000: 60 namespaces, 52 CRDs, 88 custom resources, 47 Services, 188 Secrets, ...).
# MIX=simple is the older mix: one Namespace per component (60), then ConfigMaps,
# ServiceAccounts and Secrets over 40 run levels.
# PAD=K adds K keys of 90 characters to every ConfigMap (PAD=300 makes a ~10 MB payload for
# timing `cvo payload inspect`).
set -euo pipefail
dir=${1:?usage: gen-payload.sh DIR [N] [VERSION]}
n=${2:-1000}
version=${3:-4.16.0}
mix=${MIX:-full}
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

if [ "$mix" = simple ]; then
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
    echo "wrote $n manifests (simple mix) for $version to $dir"
    exit 0
fi
[ "$mix" = full ] || { echo "gen-payload.sh: MIX must be full or simple, not $mix" >&2; exit 2; }

components=$((n / 16))
[ "$components" -gt 60 ] && components=60
[ "$components" -lt 1 ] && components=1
crds=$((n * 52 / 1000))
[ "$crds" -lt 1 ] && crds=1
rest=$((n - components - crds))
[ "$rest" -ge 0 ] || { echo "gen-payload.sh: N=$n is too small for the full mix (at least 2)" >&2; exit 2; }
group=cvo.example.com
for k in $(seq 0 $((crds - 1))); do
    cat >"$rm_dir/0000_05_crds_$(printf %02d "$k")-widget$k.crd.yaml" <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widget$k.$group
$ann
spec:
  group: $group
  names:
    kind: Widget$k
    listKind: Widget${k}List
    plural: widget$k
    singular: widget$k
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
              color:
                type: string
YAML
done
for c in $(seq 0 $((components - 1))); do
    level=$((10 + c * 40 / components))
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-comp%02d\n%s\n' "$c" "$ann" \
        >"$rm_dir/0000_$(printf %02d "$level")_comp$(printf %02d "$c")_0-namespace.yaml"
done
for i in $(seq 0 $((rest - 1))); do
    c=$((i % components))
    level=$((10 + c * 40 / components))
    ns=$(printf 'openshift-comp%02d' "$c")
    f="$rm_dir/0000_$(printf %02d "$level")_comp$(printf %02d "$c")_$(printf %04d "$i")"
    case $((i % 20)) in
    0 | 3 | 6 | 9 | 12 | 15)
        printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: %s\n%s\ndata:\n  index: "%d"\n  version: "%s"%s\n' \
            "$i" "$ns" "$ann" "$i" "$version" "$pad" >"$f-configmap.yaml" ;;
    1 | 4 | 7 | 10)
        printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret-%d\n  namespace: %s\n%s\ntype: Opaque\ndata:\n  index: %s\n' \
            "$i" "$ns" "$ann" "$(printf %s "$i" | base64)" >"$f-secret.yaml" ;;
    2 | 13)
        printf 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa-%d\n  namespace: %s\n%s\n' \
            "$i" "$ns" "$ann" >"$f-serviceaccount.yaml" ;;
    5 | 16)
        printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: role-%d\n  namespace: %s\n%s\nrules:\n- apiGroups: [""]\n  resources: ["configmaps"]\n  verbs: ["get", "list", "watch"]\n' \
            "$i" "$ns" "$ann" >"$f-role.yaml" ;;
    8 | 17)
        printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb-%d\n  namespace: %s\n%s\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: role-%d\nsubjects:\n- kind: ServiceAccount\n  name: default\n  namespace: %s\n' \
            "$i" "$ns" "$ann" "$i" "$ns" >"$f-rolebinding.yaml" ;;
    11)
        printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cvo-bench-cr-%d\n%s\nrules:\n- apiGroups: ["%s"]\n  resources: ["*"]\n  verbs: ["get", "list", "watch"]\n' \
            "$i" "$ann" "$group" >"$f-clusterrole.yaml" ;;
    14)
        if [ $(((i / 20) % 2)) = 0 ]; then ip=""; else ip=$'\n  clusterIP: None'; fi
        printf 'apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\n  namespace: %s\n%s\nspec:%s\n  selector:\n    app: comp%02d\n  ports:\n  - name: https\n    port: 443\n    targetPort: 8443\n' \
            "$i" "$ns" "$ann" "$ip" "$c" >"$f-service.yaml" ;;
    *)
        k=$(((i / 20 * 2 + i % 20 - 18) % crds))
        printf 'apiVersion: %s/v1\nkind: Widget%d\nmetadata:\n  name: widget-%d\n  namespace: %s\n%s\nspec:\n  size: %d\n  color: blue\n' \
            "$group" "$k" "$i" "$ns" "$ann" "$i" >"$f-widget.yaml" ;;
    esac
done
echo "wrote $n manifests ($components namespaces, $crds CRDs, $rest others) for $version to $dir"

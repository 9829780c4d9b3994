#!/usr/bin/env python3
"""Writes the live-demo content under assets/ (issue 6 point 1), deterministically.

    python3 scripts/gen-demo-payloads.py [ASSETS_DIR]     (default: assets/ next to this script)

Outputs (regenerated from scratch each run; python3 stdlib only):
  payloads/4.16.{3,4,5}/               release image roots: manifests/ (the CVO's own manifests)
                                       and release-manifests/ (release-metadata, image-references and
                                       ~33 cluster operators' manifests over the run levels of
                                       cvo-spec section 1.F row 52)
  update-graph.json                    Cincinnati graph of the demo channel: 4.16.3 -> 4.16.4
                                       recommended, 4.16.3 -> 4.16.5 conditional (PromQL risk)
  demo-cluster/{cv,co,mc,mcp,node}.yaml  the cluster at 4.16.3, same shapes as assets/demo/
  demo-cluster/workloads.yaml          the 4.16.3 payload's objects as applied (rolled out)

Digests are sha256 of fixed strings, so every run writes byte-identical files.
"""

import hashlib
import json
import os
import re
import shutil
import sys

OLD, NEW, NEXT = "4.16.3", "4.16.4", "4.16.5"
VERSIONS = [OLD, NEW, NEXT]
CHANNELS = "candidate-4.16,fast-4.16,stable-4.16"
ART = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
RELEASE_REPO = "quay.io/openshift-release-dev/ocp-release"
# Release image digests: the ones already used by the static demo in assets/demo/cv.yaml.
RELEASE_DIGESTS = {
    "4.16.2": "sha256:" + hashlib.sha256(b"ocp-release 4.16.2").hexdigest(),
    # A release of the channel with no edge from 4.16.3 (only from 4.16.5): the Updates view
    # and `cvo upgrade` name it as not offered, reachable through 4.16.4. No payload ships.
    "4.16.6": "sha256:" + hashlib.sha256(b"ocp-release 4.16.6").hexdigest(),
    OLD: "sha256:32dcf759cde27a222fb983364eb95ce93be6acfd33de9210390b1c2f2bd6a9c2",
    NEW: "sha256:8878f38c39bf31828fcd6909657523a97dabf8dd21425d6f2d760433d191071e",
    NEXT: "sha256:93df48a60e4564fbce3bd6e23f0e3d1376376fb6b583f801fe13705506f218bb",
}
ERRATA = {
    "4.16.2": "https://access.redhat.com/errata/RHSA-2024:4156",
    OLD: "https://access.redhat.com/errata/RHSA-2024:4316",
    NEW: "https://access.redhat.com/errata/RHSA-2024:4613",
    NEXT: "https://access.redhat.com/errata/RHSA-2024:4965",
}
PREVIOUS = {
    OLD: ["4.15.19", "4.15.20", "4.15.21", "4.16.0", "4.16.1", "4.16.2"],
    NEW: ["4.15.20", "4.15.21", "4.15.22", "4.16.0", "4.16.1", "4.16.2", "4.16.3"],
    NEXT: ["4.15.21", "4.15.22", "4.15.23", "4.16.0", "4.16.1", "4.16.2", "4.16.3", "4.16.4"],
}
KUBE = {OLD: "1.29.6", NEW: "1.29.7", NEXT: "1.29.7"}
HA = "include.release.openshift.io/self-managed-high-availability"
SNO = "include.release.openshift.io/single-node-developer"
CAP = "capability.openshift.io/name"

# (ClusterOperator name, file component, run level, namespace, image tag, capability, single-node,
#  changed in 4.16.4, operand versions (name -> per-version value), CRDs (plural, Kind, group), kind)
# kind: Deployment for most; "daemonset" operators also ship an operand DaemonSet.
COMPONENTS = [
    ("config-operator", "config-operator", 5, "openshift-config-operator", "cluster-config-operator",
     None, True, False, {}, [("configs", "Config", "operator.openshift.io")], ""),
    ("network", "cluster-network-operator", 7, "openshift-network-operator", "cluster-network-operator",
     None, True, True, {}, [("networks", "Network", "operator.openshift.io")], "daemonset"),
    ("service-ca", "service-ca-operator", 9, "openshift-service-ca-operator", "service-ca-operator",
     None, True, False, {}, [("servicecas", "ServiceCA", "operator.openshift.io")], ""),
    ("etcd", "etcd-operator", 12, "openshift-etcd-operator", "cluster-etcd-operator",
     None, True, True, {"etcd": "{v}"}, [("etcds", "Etcd", "operator.openshift.io")], ""),
    ("kube-apiserver", "kube-apiserver-operator", 20, "openshift-kube-apiserver-operator",
     "cluster-kube-apiserver-operator", None, True, True, {"raw-internal": "{v}", "kube-apiserver": "{k}"},
     [("kubeapiservers", "KubeAPIServer", "operator.openshift.io")], ""),
    ("kube-controller-manager", "kube-controller-manager-operator", 25,
     "openshift-kube-controller-manager-operator", "cluster-kube-controller-manager-operator", None, True,
     True, {"raw-internal": "{v}", "kube-controller-manager": "{k}"},
     [("kubecontrollermanagers", "KubeControllerManager", "operator.openshift.io")], ""),
    ("kube-scheduler", "kube-scheduler-operator", 25, "openshift-kube-scheduler-operator",
     "cluster-kube-scheduler-operator", None, True, False, {"raw-internal": "{v}", "kube-scheduler": "{k}"},
     [("kubeschedulers", "KubeScheduler", "operator.openshift.io")], ""),
    ("cloud-credential", "cloud-credential-operator", 26, "openshift-cloud-credential-operator",
     "cloud-credential-operator", "CloudCredential", False, False, {},
     [("credentialsrequests", "CredentialsRequest", "cloudcredential.openshift.io")], ""),
    ("cloud-controller-manager", "cloud-controller-manager-operator", 26,
     "openshift-cloud-controller-manager-operator", "cluster-cloud-controller-manager-operator",
     "CloudControllerManager", False, True, {}, [], ""),
    ("kube-storage-version-migrator", "kube-storage-version-migrator-operator", 28,
     "openshift-kube-storage-version-migrator-operator", "cluster-kube-storage-version-migrator-operator",
     None, True, False, {}, [("kubestorageversionmigrators", "KubeStorageVersionMigrator",
                              "operator.openshift.io")], ""),
    ("machine-api", "machine-api-operator", 30, "openshift-machine-api", "machine-api-operator",
     "MachineAPI", False, True, {}, [("machines", "Machine", "machine.openshift.io"),
                                     ("machinesets", "MachineSet", "machine.openshift.io")], ""),
    ("control-plane-machine-set", "control-plane-machine-set-operator", 30, "openshift-machine-api",
     "cluster-control-plane-machine-set-operator", "MachineAPI", False, False, {},
     [("controlplanemachinesets", "ControlPlaneMachineSet", "machine.openshift.io")], ""),
    ("cluster-autoscaler", "cluster-autoscaler-operator", 32, "openshift-machine-api",
     "cluster-autoscaler-operator", "MachineAPI", False, False, {},
     [("clusterautoscalers", "ClusterAutoscaler", "autoscaling.openshift.io")], ""),
    ("machine-approver", "machine-approver", 32, "openshift-cluster-machine-approver",
     "cluster-machine-approver", None, False, False, {}, [], ""),
    ("baremetal", "baremetal-operator", 31, "openshift-machine-api", "cluster-baremetal-operator",
     "baremetal", False, False, {}, [("provisionings", "Provisioning", "metal3.io")], ""),
    ("operator-lifecycle-manager", "operator-lifecycle-manager", 50, "openshift-operator-lifecycle-manager",
     "operator-lifecycle-manager", "OperatorLifecycleManager", True, True, {},
     [("subscriptions", "Subscription", "operators.coreos.com"),
      ("clusterserviceversions", "ClusterServiceVersion", "operators.coreos.com")], ""),
    ("operator-lifecycle-manager-catalog", "operator-lifecycle-manager-catalog", 50,
     "openshift-operator-lifecycle-manager", "operator-lifecycle-manager-catalog",
     "OperatorLifecycleManager", True, True, {}, [("catalogsources", "CatalogSource", "operators.coreos.com")],
     ""),
    ("operator-lifecycle-manager-packageserver", "operator-lifecycle-manager-packageserver", 50,
     "openshift-operator-lifecycle-manager", "operator-lifecycle-manager-packageserver",
     "OperatorLifecycleManager", True, False, {}, [], ""),
    ("marketplace", "marketplace-operator", 50, "openshift-marketplace", "operator-marketplace",
     "marketplace", True, False, {}, [], ""),
    ("openshift-samples", "samples-operator", 50, "openshift-cluster-samples-operator",
     "cluster-samples-operator", "openshift-samples", False, False, {},
     [("configs", "Config", "samples.operator.openshift.io")], ""),
    ("insights", "insights-operator", 50, "openshift-insights", "insights-operator", "Insights", False, True,
     {}, [("datagathers", "DataGather", "insights.openshift.io")], ""),
    ("csi-snapshot-controller", "csi-snapshot-controller-operator", 50,
     "openshift-cluster-storage-operator", "cluster-csi-snapshot-controller-operator", "CSISnapshot", False,
     False, {}, [("volumesnapshots", "VolumeSnapshot", "snapshot.storage.k8s.io")], ""),
    ("storage", "cluster-storage-operator", 50, "openshift-cluster-storage-operator",
     "cluster-storage-operator", "Storage", False, True, {}, [("storages", "Storage", "operator.openshift.io")],
     ""),
    ("node-tuning", "node-tuning-operator", 50, "openshift-cluster-node-tuning-operator",
     "cluster-node-tuning-operator", "NodeTuning", True, False, {},
     [("tuneds", "Tuned", "tuned.openshift.io")], "daemonset"),
    ("openshift-apiserver", "openshift-apiserver-operator", 60, "openshift-apiserver-operator",
     "cluster-openshift-apiserver-operator", None, True, True, {"openshift-apiserver": "{v}"},
     [("openshiftapiservers", "OpenShiftAPIServer", "operator.openshift.io")], ""),
    ("openshift-controller-manager", "openshift-controller-manager-operator", 60,
     "openshift-controller-manager-operator", "cluster-openshift-controller-manager-operator", None, True,
     False, {}, [("openshiftcontrollermanagers", "OpenShiftControllerManager", "operator.openshift.io")], ""),
    ("authentication", "authentication-operator", 60, "openshift-authentication-operator",
     "cluster-authentication-operator", None, True, True, {"oauth-apiserver": "{v}"},
     [("authentications", "Authentication", "operator.openshift.io")], ""),
    ("image-registry", "image-registry-operator", 60, "openshift-image-registry",
     "cluster-image-registry-operator", "ImageRegistry", False, True, {},
     [("configs", "Config", "imageregistry.operator.openshift.io")], "daemonset"),
    ("ingress", "ingress-operator", 60, "openshift-ingress-operator", "cluster-ingress-operator", "Ingress",
     True, True, {}, [("ingresscontrollers", "IngressController", "operator.openshift.io")], ""),
    ("console", "console-operator", 60, "openshift-console-operator", "console-operator", "Console", False,
     True, {}, [("consoles", "Console", "operator.openshift.io")], ""),
    ("monitoring", "cluster-monitoring-operator", 60, "openshift-monitoring", "cluster-monitoring-operator",
     None, True, True, {}, [], "daemonset"),
    ("dns", "dns-operator", 70, "openshift-dns-operator", "cluster-dns-operator", None, True, False, {},
     [("dnses", "DNS", "operator.openshift.io")], "daemonset"),
    ("machine-config", "machine-config-operator", 80, "openshift-machine-config-operator",
     "machine-config-operator", None, True, True, {},
     [("machineconfigs", "MachineConfig", "machineconfiguration.openshift.io"),
      ("machineconfigpools", "MachineConfigPool", "machineconfiguration.openshift.io")], "daemonset"),
]


# ---- a tiny YAML emitter (block style, quoted scalars when not plainly safe) -------------------
PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9._/@+-]*$")
RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if v is None:
        return "null"
    s = str(v)
    if PLAIN.match(s) and s.lower() not in RESERVED:
        return s
    return json.dumps(s)


def emit(v, indent=0):
    pad = " " * indent
    out = []
    if isinstance(v, dict):
        if not v:
            return [pad + "{}"]
        for k, x in v.items():
            if isinstance(x, (dict, list)) and x:
                out.append(f"{pad}{scalar(k)}:")
                out.extend(emit(x, indent + (0 if isinstance(x, list) else 2)))
            else:
                out.append(f"{pad}{scalar(k)}: {emit_inline(x)}")
    elif isinstance(v, list):
        if not v:
            return [pad + "[]"]
        for x in v:
            if isinstance(x, dict) and x:
                sub = emit(x, indent + 2)
                out.append(pad + "- " + sub[0][indent + 2:])
                out.extend(sub[1:])
            elif isinstance(x, list) and x:
                sub = emit(x, indent + 2)
                out.append(pad + "- " + sub[0][indent + 2:])
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {emit_inline(x)}")
    else:
        out.append(pad + scalar(v))
    return out


def emit_inline(x):
    if isinstance(x, dict):
        return "{}"
    if isinstance(x, list):
        return "[]"
    return scalar(x)


def yaml_doc(obj):
    return "\n".join(emit(obj)) + "\n"


# ---- helpers ---------------------------------------------------------------------------------
def digest(*parts):
    return "sha256:" + hashlib.sha256(" ".join(parts).encode()).hexdigest()


def image(tag, version, changed):
    """Operator image pull spec; unchanged operators keep their 4.16.3 digest in 4.16.4."""
    built = version if changed else OLD
    return f"{ART}@{digest(tag, built)}"


def uid(*parts):
    h = hashlib.sha256(("uid " + " ".join(parts)).encode()).hexdigest()
    return f"{h[0:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def annotations(cap=None, sno=False, extra=None):
    a = {HA: "true"}
    if sno:
        a[SNO] = "true"
    if cap:
        a[CAP] = cap
    if extra:
        a.update(extra)
    return a


def meta(name, namespace=None, ann=None, labels=None):
    m = {"name": name}
    if namespace:
        m["namespace"] = namespace
    if labels:
        m["labels"] = labels
    m["annotations"] = ann
    return m


def crd(plural, kind, group, ann):
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta(f"{plural}.{group}", ann=ann),
        "spec": {
            "group": group,
            "names": {"kind": kind, "listKind": kind + "List", "plural": plural, "singular": kind.lower()},
            "scope": "Cluster" if group.endswith("openshift.io") else "Namespaced",
            "versions": [{
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                }},
                "subresources": {"status": {}},
            }],
        },
    }


def operand_versions(c, version):
    vs = [{"name": "operator", "version": version}]
    for name, tmpl in c[8].items():
        vs.append({"name": name, "version": tmpl.format(v=version, k=KUBE[version])})
    return vs


def namespace_owners():
    """Namespace -> the first component using it; only that one ships the Namespace manifest."""
    owners = {}
    for c in COMPONENTS:
        owners.setdefault(c[3], c[1])
    return owners


def component_manifests(c, version):
    """Yields (file name, object) for one cluster operator."""
    (co, comp, level, ns, tag, cap, sno, changed, _, crds, kind) = c
    pre = f"0000_{level:02d}_{comp}"
    ann = annotations(cap, sno)
    sa = comp
    rbac = comp if comp.startswith(("openshift-", "cluster-")) else f"openshift-{comp}"
    img = image(tag, version, changed)
    if namespace_owners()[ns] == comp:
        yield f"{pre}_00_namespace.yaml", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": meta(ns, ann=ann, labels={"openshift.io/cluster-monitoring": "true",
                                                 "openshift.io/run-level": ""}),
        }
    for i, (plural, k, group) in enumerate(crds):
        yield f"{pre}_01_crd-{plural}.{group.split('.')[0]}.yaml", crd(plural, k, group, ann)
    yield f"{pre}_02_serviceaccount.yaml", {
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(sa, ns, ann),
    }
    yield f"{pre}_03_clusterrole.yaml", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": meta(rbac, ann=ann),
        "rules": [
            {"apiGroups": [""], "resources": ["configmaps", "secrets", "services", "events"],
             "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
            {"apiGroups": ["apps"], "resources": ["deployments", "daemonsets"],
             "verbs": ["get", "list", "watch", "create", "update", "patch"]},
            {"apiGroups": ["config.openshift.io"], "resources": ["clusteroperators", "clusteroperators/status"],
             "verbs": ["get", "list", "watch", "update", "patch"]},
        ] + ([{"apiGroups": sorted({g for _, _, g in crds}), "resources": ["*"], "verbs": ["*"]}] if crds else []),
    }
    yield f"{pre}_04_clusterrolebinding.yaml", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": meta(rbac, ann=ann),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": rbac},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}],
    }
    yield f"{pre}_05_configmap.yaml", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(f"{comp}-config", ns, ann),
        "data": {"config.yaml": f"apiVersion: operator.openshift.io/v1alpha1\nkind: GenericOperatorConfig\n"
                                f"leaderElection:\n  namespace: {ns}\n"},
    }
    env = [{"name": "RELEASE_VERSION", "value": version}, {"name": "OPERATOR_IMAGE", "value": img}]
    if kind == "daemonset":
        env.append({"name": "OPERAND_IMAGE", "value": image(tag.replace("-operator", "") + "-operand",
                                                            version, changed)})
    labels = {"app": comp}
    yield f"{pre}_06_deployment.yaml", {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": meta(comp, ns, dict(ann, **{"config.openshift.io/inject-proxy": comp})),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "Recreate"},
            "template": {
                "metadata": {"labels": labels, "annotations": {
                    "target.workload.openshift.io/management": '{"effect": "PreferredDuringScheduling"}'}},
                "spec": {
                    "serviceAccountName": sa,
                    "priorityClassName": "system-cluster-critical",
                    "nodeSelector": {"node-role.kubernetes.io/master": ""},
                    "tolerations": [{"key": "node-role.kubernetes.io/master", "operator": "Exists",
                                     "effect": "NoSchedule"}],
                    "containers": [{
                        "name": comp,
                        "image": img,
                        "imagePullPolicy": "IfNotPresent",
                        "command": [tag.replace("cluster-", "", 1)],
                        "args": ["operator", "--config=/var/run/configmaps/config/config.yaml"],
                        "env": env,
                        "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}},
                        "terminationMessagePolicy": "FallbackToLogsOnError",
                    }],
                },
            },
        },
    }
    yield f"{pre}_07_clusteroperator.yaml", {
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
        "metadata": meta(co, ann=ann),
        "spec": {},
        "status": {"versions": operand_versions(c, version)},
    }


def extras(version):
    """A few manifests beyond the per-operator set: dashboards at 90, a TechPreview CRD, and a ConfigMap that 4.16.4 deletes."""
    yield "0000_90_cluster-monitoring-operator_01_dashboards.yaml", {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": meta("grafana-dashboard-cluster-total", "openshift-config-managed",
                         annotations(sno=True), labels={"console.openshift.io/dashboard": "true"}),
        "data": {"cluster-total.json": '{"title":"Cluster Total","version":"%s"}' % version},
    }
    yield "0000_90_etcd-operator_03_prometheusrule-config.yaml", {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": meta("etcd-alert-thresholds", "openshift-etcd-operator", annotations(sno=True)),
        "data": {"fsyncDurationSeconds": "0.5", "leaderChangesPerHour": "4"},
    }
    yield "0000_30_machine-api-operator_11_crd-clusterapi-techpreview.yaml", crd(
        "clusters", "Cluster", "cluster.x-k8s.io",
        annotations("MachineAPI", extra={"release.openshift.io/feature-set": "TechPreviewNoUpgrade"}))
    legacy = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": meta("insights-legacy-gather-config", "openshift-insights", annotations("Insights")),
        "data": {"gather.conf": "periodSeconds=7200\n"},
    }
    if version != OLD:
        legacy["metadata"]["annotations"]["release.openshift.io/delete"] = "true"
    yield "0000_50_insights-operator_09_legacy-gather-configmap.yaml", legacy


def cvo_manifests():
    """The CVO's own manifests (manifests/ of the release image); {{.ReleaseImage}} is rendered
    by the loader from the release pull spec."""
    ann = annotations(sno=True)
    ns = "openshift-cluster-version"
    yield "0000_00_cluster-version-operator_00_namespace.yaml", {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": meta(ns, ann=ann, labels={"openshift.io/run-level": "",
                                             "openshift.io/cluster-monitoring": "true"}),
    }
    for cfg in ("openshift-config", "openshift-config-managed"):
        yield f"0000_00_cluster-version-operator_00_namespace-{cfg}.yaml", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": meta(cfg, ann=ann, labels={"openshift.io/run-level": ""}),
        }
    yield "0000_00_cluster-version-operator_01_adminack_configmap.yaml", {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": meta("admin-acks", "openshift-config", dict(ann, **{
            "release.openshift.io/create-only": "true"})),
    }
    yield "0000_00_cluster-version-operator_02_roles.yaml", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": meta("cluster-version-operator", ann=ann),
        "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "namespace": ns, "name": "default"}],
    }
    yield "0000_00_cluster-version-operator_03_deployment.yaml", {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": meta("cluster-version-operator", ns, ann),
        "spec": {
            "selector": {"matchLabels": {"k8s-app": "cluster-version-operator"}},
            "strategy": {"type": "Recreate"},
            "template": {
                "metadata": {"name": "cluster-version-operator",
                             "labels": {"k8s-app": "cluster-version-operator"}},
                "spec": {
                    "containers": [{
                        "name": "cluster-version-operator",
                        "image": "{{.ReleaseImage}}",
                        "args": ["start", "--release-image={{.ReleaseImage}}", "--enable-auto-update=false",
                                 "--listen=0.0.0.0:9099", "--v=2"],
                        "env": [{"name": "CLUSTER_PROFILE", "value": "self-managed-high-availability"}],
                    }],
                    "hostNetwork": True,
                    "nodeSelector": {"node-role.kubernetes.io/master": ""},
                    "priorityClassName": "system-cluster-critical",
                },
            },
        },
    }


def image_references(version):
    tags = []
    for c in COMPONENTS:
        tags.append((c[4], image(c[4], version, c[7])))
        if c[10] == "daemonset":
            t = c[4].replace("-operator", "") + "-operand"
            tags.append((t, image(t, version, c[7])))
    tags.append(("cluster-version-operator", image("cluster-version-operator", version, True)))
    tags.sort()
    return {
        "kind": "ImageStream",
        "apiVersion": "image.openshift.io/v1",
        "metadata": {"name": version, "creationTimestamp": None,
                     "annotations": {"release.openshift.io/from-image-stream": "ocp/4.16-art-latest"}},
        "spec": {"lookupPolicy": {"local": False}, "tags": [
            {"name": n, "annotations": {"io.openshift.build.source-location":
                                        f"https://github.com/openshift/{n}"},
             "from": {"kind": "DockerImage", "name": i}, "importPolicy": {}, "referencePolicy": {"type": ""}}
            for n, i in tags]},
    }


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def gen_payload(root, version):
    shutil.rmtree(root, ignore_errors=True)
    rm = os.path.join(root, "release-manifests")
    for name, obj in cvo_manifests():
        write(os.path.join(root, "manifests", name), yaml_doc(obj))
    meta_json = {"kind": "cincinnati-metadata-v0", "version": version, "previous": PREVIOUS[version],
                 "metadata": {"io.openshift.upgrades.graph.release.channels": CHANNELS,
                              "url": ERRATA[version]}}
    write(os.path.join(rm, "release-metadata"), json.dumps(meta_json, indent=2) + "\n")
    write(os.path.join(rm, "image-references"), json.dumps(image_references(version), indent=2) + "\n")
    n = 0
    for c in COMPONENTS:
        for name, obj in component_manifests(c, version):
            write(os.path.join(rm, name), yaml_doc(obj))
            n += 1
    for name, obj in extras(version):
        write(os.path.join(rm, name), yaml_doc(obj))
        n += 1
    return n


# The demo risk's rule: a PromQL query the demo's simulated Prometheus answers with 1 (the demo
# cluster runs OVN-Kubernetes, so it is exposed).
RISK_QUERY = 'max(cluster_network_type{_id="",type="OVNKubernetes"} or 0 * cluster_network_type{_id=""})'
RISK_RULES = [{"type": "PromQL", "promql": {"promql": RISK_QUERY}}]


def gen_graph(path):
    versions = ["4.16.2", OLD, NEW, NEXT, "4.16.6"]
    idx = {v: i for i, v in enumerate(versions)}
    nodes = [{"version": v, "payload": f"{RELEASE_REPO}@{RELEASE_DIGESTS[v]}",
              "metadata": {"io.openshift.upgrades.graph.release.channels": CHANNELS,
                           "io.openshift.upgrades.graph.release.manifestref": RELEASE_DIGESTS[v],
                           **({"url": ERRATA[v]} if v in ERRATA else {})}} for v in versions]
    edges = [[idx["4.16.2"], idx[OLD]], [idx["4.16.2"], idx[NEW]], [idx[OLD], idx[NEW]], [idx[NEW], idx[NEXT]],
             [idx[NEXT], idx["4.16.6"]]]
    conditional = [{
        "edges": [{"from": OLD, "to": NEXT}],
        "risks": [{
            "url": "https://issues.redhat.com/browse/OCPBUGS-37029",
            "name": "OVNKubernetesEgressIPRegression",
            "message": "Clusters updating directly from 4.16.3 to 4.16.5 may lose egress IP assignments "
                       "on OVN-Kubernetes until the ovnkube-node pods restart. Update to 4.16.4 first.",
            "matchingRules": RISK_RULES,
        }],
    }]
    graph = {"version": 1, "nodes": nodes, "edges": edges, "conditionalEdges": conditional}
    write(path, json.dumps(graph, indent=2) + "\n")


# ---- the demo cluster at 4.16.3 ------------------------------------------------------------
T0 = "2024-06-27T08:00:00Z"      # install (4.16.0)
# The 4.16.3 update (history, and the transitions it left on operators, pools, nodes and
# MachineConfigs) took 4 minutes, about what the demo's own simulated update takes (3-5
# simulated minutes at any --speed): `oc adm upgrade status` estimates the time remaining
# from the previous Completed update, so a longer one here (it was 1h8m) made the demo show
# "Est. time remaining 1h20m" for a 3-minute update.
T3 = "2024-07-10T15:10:51Z"      # 4.16.3 completed
NOW = "2024-07-22T09:00:00Z"     # snapshot time
CV_UID = "5f2ab1c4-3d9e-4c0a-9b7e-2f61c8d4e0a1"
RENDERED = {"master": "rendered-master-22b23fc3f8aaa78897c1e35db8ed82ad",
            "worker": "rendered-worker-daa08443bba4b14a90cbd92f4f00585f"}
CONTROLLER = "5ac7b4ae0bca76358e4d40f546306775a8e0ea2c"
NODES = [("master", "ip-10-0-14-182", "us-east-2a", "m6i.xlarge"),
         ("master", "ip-10-0-49-7", "us-east-2b", "m6i.xlarge"),
         ("master", "ip-10-0-77-215", "us-east-2c", "m6i.xlarge"),
         ("worker", "ip-10-0-22-96", "us-east-2a", "m6i.large"),
         ("worker", "ip-10-0-63-18", "us-east-2b", "m6i.large"),
         ("worker", "ip-10-0-87-31", "us-east-2c", "m6i.large")]


def cond(type_, status, reason=None, message=None, when=T3):
    c = {"lastTransitionTime": when}
    if message is not None:
        c["message"] = message
    if reason:
        c["reason"] = reason
    c["status"] = status
    c["type"] = type_
    return c


def k8s_list(items):
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def gen_cluster(d):
    caps = sorted({c[5] for c in COMPONENTS if c[5]} | {"Build", "DeploymentConfig"})
    cv = {
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"creationTimestamp": "2024-06-27T07:58:31Z", "generation": 3, "name": "version",
                     "resourceVersion": "3981204", "uid": CV_UID},
        "spec": {"channel": "stable-4.16", "clusterID": "0c9f6a52-8f7e-4d71-a6b3-6f1d2e9c4b80",
                 "desiredUpdate": {"architecture": "", "force": False,
                                   "image": f"{RELEASE_REPO}@{RELEASE_DIGESTS[OLD]}", "version": OLD},
                 "upstream": "https://api.openshift.com/api/upgrades_info/v1/graph"},
        "status": {
            "availableUpdates": [{"channels": CHANNELS.split(","), "image": f"{RELEASE_REPO}@{RELEASE_DIGESTS[NEW]}",
                                  "url": ERRATA[NEW], "version": NEW}],
            "capabilities": {"enabledCapabilities": caps, "knownCapabilities": caps},
            "conditionalUpdates": [{
                "conditions": [cond("Recommended", "False", "OVNKubernetesEgressIPRegression",
                                    "Clusters updating directly from 4.16.3 to 4.16.5 may lose egress IP "
                                    "assignments on OVN-Kubernetes until the ovnkube-node pods restart. "
                                    "Update to 4.16.4 first. https://issues.redhat.com/browse/OCPBUGS-37029",
                                    NOW)],
                "release": {"channels": CHANNELS.split(","), "image": f"{RELEASE_REPO}@{RELEASE_DIGESTS[NEXT]}",
                            "url": ERRATA[NEXT], "version": NEXT},
                "risks": [{"matchingRules": RISK_RULES,
                           "message": "Clusters updating directly from 4.16.3 to 4.16.5 may lose egress IP "
                                      "assignments on OVN-Kubernetes until the ovnkube-node pods restart. "
                                      "Update to 4.16.4 first.",
                           "name": "OVNKubernetesEgressIPRegression",
                           "url": "https://issues.redhat.com/browse/OCPBUGS-37029"}],
            }],
            "conditions": [
                cond("RetrievedUpdates", "True", when=NOW),
                cond("ImplicitlyEnabledCapabilities", "False", "AsExpected",
                     "Capabilities match configured spec", T0),
                cond("ReleaseAccepted", "True", "PayloadLoaded",
                     f'Payload loaded version="{OLD}" image="{RELEASE_REPO}@{RELEASE_DIGESTS[OLD]}" '
                     'architecture="amd64"', "2024-07-10T15:06:51Z"),
                cond("Available", "True", None, f"Done applying {OLD}", T0),
                cond("Failing", "False", when=T3),
                cond("Progressing", "False", None, f"Cluster version is {OLD}", T3),
                cond("Upgradeable", "True", None, None, T3),
            ],
            "desired": {"channels": CHANNELS.split(","), "image": f"{RELEASE_REPO}@{RELEASE_DIGESTS[OLD]}",
                        "url": ERRATA[OLD], "version": OLD},
            "history": [
                {"completionTime": T3, "image": f"{RELEASE_REPO}@{RELEASE_DIGESTS[OLD]}",
                 "startedTime": "2024-07-10T15:06:51Z", "state": "Completed", "verified": True, "version": OLD},
                {"completionTime": "2024-06-27T08:41:12Z",
                 "image": f"{RELEASE_REPO}@sha256:83d87b8e4d5a6363f53e8045d797c73c8b1cff00e5191541c9934cbf55bb167c",
                 "startedTime": "2024-06-27T07:58:40Z", "state": "Completed", "verified": False,
                 "version": "4.16.0"},
            ],
            "observedGeneration": 3,
            "versionHash": "1duacQMncaA=",  # `cvo payload inspect assets/payloads/4.16.3` Hash
        },
    }
    write(os.path.join(d, "cv.yaml"), yaml_doc(cv))

    # The FeatureGate: a CustomNoUpgrade feature set enabling ClusterUpdateAcceptRisks, rendered
    # for every demo release, so the dashboard can accept a conditional update's risks
    # (spec.desiredUpdate.acceptRisks is Forbidden without that gate).
    gate_names = [{"name": "ClusterUpdateAcceptRisks"}]
    fg = {
        "apiVersion": "config.openshift.io/v1", "kind": "FeatureGate",
        "metadata": {"creationTimestamp": "2024-06-27T07:58:31Z", "generation": 2, "name": "cluster",
                     "resourceVersion": "3981100", "uid": uid("featuregate", "cluster")},
        "spec": {"featureSet": "CustomNoUpgrade",
                 "customNoUpgrade": {"enabled": ["ClusterUpdateAcceptRisks"]}},
        "status": {"featureGates": [{"version": v, "enabled": gate_names} for v in (OLD, NEW, NEXT)]},
    }
    write(os.path.join(d, "featuregate.yaml"), yaml_doc(fg))

    cos = []
    for c in sorted(COMPONENTS, key=lambda c: c[0]):
        ann = annotations(c[5] or "", c[6])
        cos.append({
            "apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
            "metadata": {"annotations": ann, "creationTimestamp": "2024-06-27T08:00:10Z", "generation": 1,
                         "name": c[0],
                         "ownerReferences": [{"apiVersion": "config.openshift.io/v1", "controller": True,
                                              "kind": "ClusterVersion", "name": "version", "uid": CV_UID}],
                         "resourceVersion": "3980000", "uid": uid("co", c[0])},
            "spec": {},
            "status": {
                "conditions": [
                    cond("Available", "True", "AsExpected", "All is well", "2024-06-27T08:30:11Z"),
                    cond("Progressing", "False", "AsExpected", "All is well",
                         "2024-07-10T15:09:38Z" if c[7] else T0),
                    cond("Degraded", "False", "AsExpected", "All is well", "2024-06-27T08:20:45Z"),
                    cond("Upgradeable", "True", "AsExpected", "All is well", "2024-06-27T08:20:45Z"),
                ],
                "relatedObjects": [{"group": "", "name": c[3], "resource": "namespaces"}],
                "versions": operand_versions(c, OLD),
            },
        })
    write(os.path.join(d, "co.yaml"), yaml_doc(k8s_list(cos)))

    mcs = []
    for role in ("master", "worker"):
        for name in (f"00-{role}", f"01-{role}-kubelet", f"99-{role}-ssh"):
            mcs.append(machine_config(name, role, None, T0))
        mcs.append(machine_config(RENDERED[role], role, OLD, "2024-07-10T15:09:06Z"))
    write(os.path.join(d, "mc.yaml"), yaml_doc(k8s_list(mcs)))

    pools = []
    for role in ("master", "worker"):
        count = sum(1 for n in NODES if n[0] == role)
        pools.append({
            "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
            "metadata": {"creationTimestamp": "2024-06-27T08:04:12Z", "generation": 3,
                         "labels": {"machineconfiguration.openshift.io/mco-built-in": "",
                                    f"pools.operator.machineconfiguration.openshift.io/{role}": ""},
                         "name": role, "uid": uid("mcp", role)},
            "spec": {"configuration": {"name": RENDERED[role]},
                     "machineConfigSelector": {"matchLabels": {"machineconfiguration.openshift.io/role": role}},
                     "maxUnavailable": 1,
                     "nodeSelector": {"matchLabels": {f"node-role.kubernetes.io/{role}": ""}},
                     "paused": False},
            "status": {
                "conditions": [
                    cond("Updated", "True", None, f"All nodes are updated with MachineConfig {RENDERED[role]}",
                         "2024-07-10T15:10:30Z"),
                    cond("Updating", "False", None, "", "2024-07-10T15:10:30Z"),
                    cond("Degraded", "False", None, "", T0),
                    cond("NodeDegraded", "False", None, "", T0),
                    cond("RenderDegraded", "False", None, "", T0),
                ],
                "configuration": {"name": RENDERED[role]},
                "degradedMachineCount": 0, "machineCount": count, "observedGeneration": 3,
                "readyMachineCount": count, "unavailableMachineCount": 0, "updatedMachineCount": count,
            },
        })
    write(os.path.join(d, "mcp.yaml"), yaml_doc(k8s_list(pools)))

    nodes = []
    for role, host, zone, itype in NODES:
        r = RENDERED[role]
        labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": itype,
                  "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": host,
                  "kubernetes.io/os": "linux"}
        if role == "master":
            labels["node-role.kubernetes.io/control-plane"] = ""
        labels[f"node-role.kubernetes.io/{role}"] = ""
        labels.update({"node.openshift.io/os_id": "rhcos", "topology.kubernetes.io/region": "us-east-2",
                       "topology.kubernetes.io/zone": zone})
        hb = NOW
        nodes.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {
                "annotations": {
                    "machineconfiguration.openshift.io/controlPlaneTopology": "HighlyAvailable",
                    "machineconfiguration.openshift.io/currentConfig": r,
                    "machineconfiguration.openshift.io/desiredConfig": r,
                    "machineconfiguration.openshift.io/desiredDrain": f"uncordon-{r}",
                    "machineconfiguration.openshift.io/lastAppliedDrain": f"uncordon-{r}",
                    "machineconfiguration.openshift.io/lastSyncedControllerConfigResourceVersion": "3970112",
                    "machineconfiguration.openshift.io/reason": "",
                    "machineconfiguration.openshift.io/state": "Done",
                },
                "creationTimestamp": "2024-06-27T08:06:00Z" if role == "master" else "2024-06-27T08:16:00Z",
                "labels": labels,
                "name": f"{host}.us-east-2.compute.internal",
                "uid": uid("node", host),
            },
            "spec": {"providerID": f"aws:///{zone}/i-0{hashlib.sha256(host.encode()).hexdigest()[:16]}"},
            "status": {
                "conditions": [
                    node_cond("MemoryPressure", "False", "KubeletHasSufficientMemory",
                              "kubelet has sufficient memory available", hb),
                    node_cond("DiskPressure", "False", "KubeletHasNoDiskPressure",
                              "kubelet has no disk pressure", hb),
                    node_cond("PIDPressure", "False", "KubeletHasSufficientPID",
                              "kubelet has sufficient PID available", hb),
                    node_cond("Ready", "True", "KubeletReady", "kubelet is posting ready status", hb,
                              "2024-07-10T15:10:06Z"),
                ],
                "nodeInfo": {
                    "architecture": "amd64",
                    "containerRuntimeVersion": "cri-o://1.29.6-2.rhaos4.16.git8a2f2f1.el9",
                    "kernelVersion": "5.14.0-427.24.1.el9_4.x86_64",
                    "kubeletVersion": "v1.29.6+aba1e8d",
                    "operatingSystem": "linux",
                    "osImage": "Red Hat Enterprise Linux CoreOS 416.94.202407030122-0 (Plow)",
                },
            },
        })
    write(os.path.join(d, "node.yaml"), yaml_doc(k8s_list(nodes)))
    write(os.path.join(d, "workloads.yaml"), yaml_doc(k8s_list(applied_workloads())))


def applied_workloads():
    """Every 4.16.3 payload object the cluster holds after 4.16.3 completed, as the API server would
    return it (uid, resourceVersion, generation; Deployments rolled out, CRDs Established).
    ClusterOperators are in co.yaml; the TechPreviewNoUpgrade manifest is not applied."""
    objs = [o for _, o in cvo_manifests()]
    for c in COMPONENTS:
        objs.extend(o for _, o in component_manifests(c, OLD))
    objs.extend(o for _, o in extras(OLD))
    release = f"{RELEASE_REPO}@{RELEASE_DIGESTS[OLD]}"
    out = []
    for o in objs:
        ann = o["metadata"].get("annotations") or {}
        if o["kind"] == "ClusterOperator" or "release.openshift.io/feature-set" in ann:
            continue
        o = json.loads(json.dumps(o).replace("{{.ReleaseImage}}", release))
        m = o["metadata"]
        key = "/".join([o["kind"], m.get("namespace", ""), m["name"]])
        m["creationTimestamp"] = T0 if o["kind"] != "Deployment" else "2024-06-27T08:12:00Z"
        m["resourceVersion"] = str(3900000 + int(hashlib.sha256(key.encode()).hexdigest()[:5], 16) % 60000)
        m["uid"] = uid("applied", key)
        if o["kind"] == "Namespace":
            o["spec"] = {"finalizers": ["kubernetes"]}
            o["status"] = {"phase": "Active"}
        elif o["kind"] == "Deployment":
            m["generation"] = 3
            replicas = o["spec"].get("replicas", 1)
            o["status"] = {
                "availableReplicas": replicas,
                "conditions": [
                    {"lastTransitionTime": "2024-07-10T15:07:53Z", "lastUpdateTime": "2024-07-10T15:07:53Z",
                     "message": "Deployment has minimum availability.", "reason": "MinimumReplicasAvailable",
                     "status": "True", "type": "Available"},
                    {"lastTransitionTime": "2024-06-27T08:12:00Z", "lastUpdateTime": "2024-07-10T15:07:53Z",
                     "message": f'ReplicaSet "{m["name"]}-{uid("rs", key)[:10]}" has successfully progressed.',
                     "reason": "NewReplicaSetAvailable", "status": "True", "type": "Progressing"},
                ],
                "observedGeneration": 3,
                "readyReplicas": replicas,
                "replicas": replicas,
                "updatedReplicas": replicas,
            }
        elif o["kind"] == "CustomResourceDefinition":
            m["generation"] = 1
            names = o["spec"]["names"]
            o["status"] = {
                "acceptedNames": names,
                "conditions": [
                    {"lastTransitionTime": T0, "message": "no conflicts found", "reason": "NoConflicts",
                     "status": "True", "type": "NamesAccepted"},
                    {"lastTransitionTime": T0, "message": "the initial names have been accepted",
                     "reason": "InitialNamesAccepted", "status": "True", "type": "Established"},
                ],
                "storedVersions": ["v1"],
            }
        out.append(o)
    return out


def machine_config(name, role, release, created):
    ann = {"machineconfiguration.openshift.io/generated-by-controller-version": CONTROLLER}
    if release:
        ann["machineconfiguration.openshift.io/release-image-version"] = release
    return {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
            "metadata": {"annotations": ann, "creationTimestamp": created, "generation": 1,
                         "labels": {"machineconfiguration.openshift.io/role": role}, "name": name,
                         "uid": uid("mc", name)},
            "spec": {"config": {"ignition": {"version": "3.4.0"}}}}


def node_cond(type_, status, reason, message, hb, when="2024-06-27T08:06:00Z"):
    return {"lastHeartbeatTime": hb, "lastTransitionTime": when, "message": message, "reason": reason,
            "status": status, "type": type_}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    assets = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "assets")
    for v in VERSIONS:
        n = gen_payload(os.path.join(assets, "payloads", v), v)
        print(f"payloads/{v}: {n} release manifests")
    gen_graph(os.path.join(assets, "update-graph.json"))
    print("update-graph.json")
    cluster = os.path.join(assets, "demo-cluster")
    shutil.rmtree(cluster, ignore_errors=True)
    gen_cluster(cluster)
    print("demo-cluster/{cv,featuregate,co,mc,mcp,node,workloads}.yaml")


if __name__ == "__main__":
    main()

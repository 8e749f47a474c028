#!/usr/bin/env python3
"""The rules the Kubernetes manifests of deploy/kubernetes keep, beyond the schema: what the
schema validator cannot tell (a password written inline is valid YAML, a missing probe is valid
Kubernetes). Prints each broken rule and exits 1 if any.

  k8s_rules.py FILE...
"""

import re
import sys

import yaml

SECRET_VARS = {"AM_DATABASE_URL", "AM_AMQP_URL", "AM_ADMIN_PASSWORD", "AM_SMTP_URL"}
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")
problems = []


def rule(ok, what):
    if not ok:
        problems.append(what)


def labels_match(selector, labels):
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def check_container(where, c, pod):
    sc = c.get("securityContext", {})
    rule(sc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation: false")
    rule(sc.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem: true")
    rule(sc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: capabilities drop ALL")
    rule(
        sc.get("runAsNonRoot") is True or pod.get("securityContext", {}).get("runAsNonRoot") is True,
        f"{where}: runAsNonRoot",
    )
    res = c.get("resources", {})
    rule("memory" in res.get("requests", {}) and "memory" in res.get("limits", {}),
         f"{where}: memory request and limit")
    for kind in ("requests", "limits"):
        for name, q in res.get(kind, {}).items():
            rule(QUANTITY.match(str(q)) is not None, f"{where}: {kind}.{name} `{q}` is no quantity")
    for e in c.get("env", []):
        if e["name"] in SECRET_VARS:
            rule("value" not in e and "secretKeyRef" in e.get("valueFrom", {}),
                 f"{where}: {e['name']} from a Secret (secretKeyRef), never inline")


def main(paths):
    docs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if doc:
                    docs.append((path, doc))
    by_kind = {}
    for path, doc in docs:
        rule("namespace" not in doc.get("metadata", {}),
             f"{path}: {doc['kind']} names no namespace (kubectl apply -n chooses it)")
        by_kind.setdefault(doc["kind"], []).append((path, doc))
        if doc["kind"] == "Secret":
            rule(path.endswith(".example.yaml"), f"{path}: a Secret only as a marked example")
        if doc["kind"] == "ConfigMap":
            for key in doc.get("data", {}):
                rule(key not in SECRET_VARS, f"{path}: {key} is a secret, not ConfigMap data")

    deployments = [d for _, d in by_kind.get("Deployment", []) if d["metadata"]["name"] == "agent-manager"]
    rule(len(deployments) == 1, "one Deployment agent-manager")
    for d in deployments:
        spec, pod = d["spec"], d["spec"]["template"]["spec"]
        labels = d["spec"]["template"]["metadata"]["labels"]
        rule(spec.get("replicas") == 2, "agent-manager: two replicas")
        anti = pod.get("affinity", {}).get("podAntiAffinity", {})
        terms = anti.get("preferredDuringSchedulingIgnoredDuringExecution", []) + [
            {"podAffinityTerm": t} for t in anti.get("requiredDuringSchedulingIgnoredDuringExecution", [])
        ]
        rule(any(labels_match(t["podAffinityTerm"]["labelSelector"], labels) for t in terms),
             "agent-manager: pod anti-affinity on its own pods")
        rule(pod.get("automountServiceAccountToken") is False, "agent-manager: no service account token")
        (c,) = pod["containers"]
        check_container("agent-manager", c, pod)
        rule(c.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/readyz",
             "agent-manager: readiness probe on /readyz")
        rule(c.get("livenessProbe", {}).get("httpGet", {}).get("path") == "/healthz",
             "agent-manager: liveness probe on /healthz")
        env = {e["name"]: e for e in c.get("env", [])}
        rule("AM_DATABASE_URL" in env, "agent-manager: AM_DATABASE_URL given")
        for ref in c.get("envFrom", []):
            name = ref.get("configMapRef", {}).get("name")
            rule(any(m["metadata"]["name"] == name for _, m in by_kind.get("ConfigMap", [])),
                 f"agent-manager: ConfigMap {name} is among the manifests")
        rule(pod.get("terminationGracePeriodSeconds", 30)
             >= c.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0) + 30,
             "agent-manager: grace period covers preStop and the 30 s stop")
        for kind, what in (("Service", "a Service"), ("PodDisruptionBudget", "a PodDisruptionBudget")):
            rule(any(labels_match({"matchLabels": o["spec"]["selector"]}
                                  if kind == "Service" else o["spec"]["selector"], labels)
                     for _, o in by_kind.get(kind, [])),
                 f"agent-manager: {what} selects its pods")
        for _, pdb in by_kind.get("PodDisruptionBudget", []):
            rule(pdb["spec"].get("minAvailable") == 1, "PodDisruptionBudget: minAvailable 1")

    others = by_kind.get("StatefulSet", []) + [
        (path, d) for path, d in by_kind.get("Deployment", []) if d not in deployments
    ]
    for path, s in others:
        pod = s["spec"]["template"]["spec"]
        for c in pod["containers"]:
            check_container(f"{path}: {c['name']}", c, pod)

    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Checks the shipped dashboard and alert rules against a Prometheus scraping a live manager.

Run by deploy/tests/prometheus.sh. Standard library only, so it runs wherever python3 does.

  (a) every query of the dashboard (each panel target, each template variable) returns at least
      one series, and every label its legend shows is on each of them: a metric or label renamed
      in the manager shows up here, not as an empty panel in front of an operator;
  (b) every rule Prometheus loaded is healthy (no evaluation error);
  (c) every metric name an alert watches has a series: an alert on a name the manager no longer
      exports would never fire, and nothing else would say so.

The manager's series appear over some seconds (a histogram's first series with the first run
that ends), so the checks are repeated until they all pass or the deadline comes; the failures
of the last round are then printed.
"""

import argparse
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# What Grafana substitutes in a query, replaced by what selects everything. A variable the
# dashboard gains without an entry here is reported as such, not sent to Prometheus as "$x".
SUBSTITUTIONS = {
    "$__rate_interval": "1m",
    "$__interval": "1m",
    "$__range": "5m",
    "$application": ".*",
    "$agent": ".*",
}

LEGEND_LABEL = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
LABEL_VALUES = re.compile(r"^\s*label_values\(\s*(.+?)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$", re.S)
STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
IDENTIFIER = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
# Identifiers of PromQL that look like metric names of ours: the manager's families, and `up`
# which Prometheus writes for every target.
WATCHED_NAME = re.compile(r"^(am_[a-zA-Z0-9_:]+|up)$")


class Prometheus:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def get(self, path, **params):
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as r:
            body = json.load(r)
        if body.get("status") != "success":
            raise RuntimeError(f"{path}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, expr):
        """The instant vector of `expr`; a query Prometheus refuses raises with its error."""
        try:
            data = self.get("/api/v1/query", query=expr)
        except urllib.error.HTTPError as e:
            try:
                detail = json.load(e).get("error", "")
            except ValueError:
                detail = ""
            raise RuntimeError(f"HTTP {e.code}: {detail}") from None
        if data["resultType"] != "vector":
            raise RuntimeError(f"a {data['resultType']}, not an instant vector")
        return data["result"]


def substitute(expr):
    for var, value in sorted(SUBSTITUTIONS.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(var, value).replace("${" + var[1:] + "}", value)
    left = re.findall(r"\$\{?[a-zA-Z_][a-zA-Z0-9_]*", expr)
    if left:
        raise ValueError(f"unknown dashboard variable(s) {', '.join(sorted(set(left)))}")
    return expr


def dashboard_queries(path):
    """(what, expr, legend) of every panel target and template variable of the dashboard."""
    with open(path, encoding="utf-8") as f:
        dashboard = json.load(f)
    found = []

    def walk(panels):
        for p in panels:
            walk(p.get("panels", []))
            for t in p.get("targets", []):
                if t.get("hide"):
                    continue
                what = f'panel "{p.get("title", p.get("id"))}" target {t.get("refId", "?")}'
                found.append((what, t.get("expr", ""), t.get("legendFormat", "")))

    walk(dashboard.get("panels", []))
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        m = LABEL_VALUES.match(q)
        if not m:
            found.append((f'variable "{v["name"]}"', None, f"is not label_values(...): {q}"))
            continue
        # label_values(m, l) lists the values of l on the series of m: count by (l) says the same
        # through the query API, and must return a series with the label set.
        found.append((f'variable "{v["name"]}"', f"count by ({m.group(2)}) ({m.group(1)})",
                      "{{" + m.group(2) + "}}"))
    if not found:
        raise ValueError(f"{path} has no panel target")
    return found


def watched_names(expr):
    """The metric names an expression reads (strings and label names ignored)."""
    without_strings = STRING_LITERAL.sub('""', expr)
    names = set()
    for m in IDENTIFIER.finditer(without_strings):
        name = m.group(0)
        if not WATCHED_NAME.match(name):
            continue
        # A label name (in `by (...)` or before `=` in a selector) is not a metric name.
        after = without_strings[m.end():].lstrip()
        if after.startswith(("=", "!=", "=~", "!~")) and not after.startswith("=="):
            continue
        names.add(name)
    return names


def check_dashboard(prom, queries):
    failures = []
    for what, expr, legend in queries:
        if expr is None:
            failures.append(f"{what} {legend}")
            continue
        if not expr.strip():
            failures.append(f"{what} has no expression")
            continue
        try:
            result = prom.query(substitute(expr))
        except (ValueError, RuntimeError) as e:
            failures.append(f"{what}: {e}\n    {expr}")
            continue
        if not result:
            failures.append(f"{what}: no series\n    {expr}")
            continue
        for label in LEGEND_LABEL.findall(legend):
            missing = [s["metric"] for s in result if label not in s["metric"]]
            if missing:
                failures.append(
                    f"{what}: its legend shows {{{{{label}}}}}, absent from {len(missing)} of "
                    f"{len(result)} series (e.g. {missing[0]})\n    {expr}")
    return failures


def check_rules(prom, group_name):
    """Failures of (b) and (c), and how many alerting rules were seen."""
    failures = []
    groups = prom.get("/api/v1/rules")["groups"]
    group = [g for g in groups if g["name"] == group_name]
    if not group:
        return [f"no rule group {group_name!r} loaded (groups: {[g['name'] for g in groups]})"], 0
    alerts = [r for g in group for r in g["rules"] if r["type"] == "alerting"]
    if not alerts:
        return [f"rule group {group_name!r} has no alerting rule"], 0
    names = {}
    for r in (r for g in group for r in g["rules"]):
        if r.get("health") != "ok" or r.get("lastError"):
            failures.append(f'rule "{r["name"]}": health {r.get("health")!r}'
                            f'{", error: " + r["lastError"] if r.get("lastError") else ""}')
        if r["type"] == "alerting":
            for n in watched_names(r["query"]):
                names.setdefault(n, []).append(r["name"])
    if not names:
        failures.append("the alerts watch no metric name of the manager")
    for name, rules in sorted(names.items()):
        try:
            if not prom.query(f'count({{__name__="{name}"}})'):
                failures.append(f"{name} has no series, yet {', '.join(sorted(set(rules)))} watch(es) it")
        except RuntimeError as e:
            failures.append(f"{name}: {e}")
    return failures, len(alerts)


def scrape_problems(prom, job):
    targets = prom.get("/api/v1/targets", state="active")["activeTargets"]
    mine = [t for t in targets if t["labels"].get("job") == job]
    if not mine:
        return [f"Prometheus has no active target of job {job!r}"]
    return [f"target {t['scrapeUrl']}: {t['health']}: {t.get('lastError') or 'not scraped yet'}"
            for t in mine if t["health"] != "up"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prometheus", required=True, help="base URL, e.g. http://127.0.0.1:9090")
    ap.add_argument("--dashboard", required=True)
    ap.add_argument("--job", default="agent-manager")
    ap.add_argument("--group", default="agent-manager")
    ap.add_argument("--timeout", type=float, default=90, help="seconds until the checks must pass")
    args = ap.parse_args()

    prom = Prometheus(args.prometheus)
    queries = dashboard_queries(args.dashboard)
    deadline = time.monotonic() + args.timeout
    rounds = 0
    while True:
        rounds += 1
        try:
            failures = scrape_problems(prom, args.job)
            if not failures:
                failures = check_dashboard(prom, queries)
                rule_failures, alerts = check_rules(prom, args.group)
                failures += rule_failures
        except (OSError, RuntimeError, KeyError, ValueError) as e:
            failures = [f"Prometheus at {args.prometheus} did not answer as expected: {e}"]
        if not failures:
            print(f"prometheus_check: {len(queries)} dashboard queries return series with their "
                  f"legends' labels; {alerts} alerts healthy, every metric they watch has series "
                  f"(round {rounds})")
            return 0
        if time.monotonic() >= deadline:
            print(f"prometheus_check: {len(failures)} failure(s) after {args.timeout:.0f} s "
                  f"({rounds} rounds):", file=sys.stderr)
            for f in failures:
                print(f"  - {f}", file=sys.stderr)
            return 1
        time.sleep(2)


if __name__ == "__main__":
    sys.exit(main())

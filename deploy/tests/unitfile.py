#!/usr/bin/env python3
"""Reads a systemd unit as systemd would, for deploy/tests/check.sh: the process environment
and command line of a service, so the check runs the binary with exactly what the unit gives it.

  unitfile.py get UNIT KEY [--instance I]         last value of KEY in [Service]
  unitfile.py env UNIT [--instance I] [--env-file F]... [--ignore K]... [--set K=V]... [--map FROM=TO]...
      NUL-separated KEY=VALUE: Environment= lines, then the files' (which win, as for
      EnvironmentFile=) but for the --ignore keys, then --set; --map rewrites a path in values
  unitfile.py argv UNIT [--instance I] [--env-file F]... [--map FROM=TO]...
      NUL-separated words of ExecStart, with $VAR and ${VAR} expanded from that environment

Only what the units of deploy/systemd use is supported; anything else is an error, not a guess.
"""

import argparse
import re
import shlex
import socket
import sys


def specifiers(text, unit, instance):
    prefix = unit.split("@")[0] if "@" in unit else unit.rsplit(".", 1)[0]
    table = {
        "i": instance or "",
        "I": instance or "",
        "n": unit if not instance else unit.replace("@.", f"@{instance}."),
        "p": prefix,
        "N": (unit if not instance else unit.replace("@.", f"@{instance}.")).rsplit(".", 1)[0],
        "S": "/var/lib",
        "H": socket.gethostname(),
        "%": "%",
    }

    def sub(m):
        if m.group(1) not in table:
            sys.exit(f"{unit}: specifier %{m.group(1)} is not supported by this reader")
        return table[m.group(1)]

    return re.sub(r"%(.)", sub, text)


def service_section(path, instance):
    unit = path.rsplit("/", 1)[-1]
    entries = []
    section = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.endswith("\\"):
                sys.exit(f"{path}: continued lines are not supported by this reader")
            if line.startswith("["):
                section = line
                continue
            if section != "[Service]":
                continue
            key, _, value = line.partition("=")
            entries.append((key.strip(), specifiers(value.strip(), unit, instance)))
    return entries


def env_file(path):
    """systemd's EnvironmentFile= format: KEY=VALUE lines, # or ; comments, optional quotes."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            key, sep, value = line.partition("=")
            key, value = key.strip(), value.strip()
            if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                sys.exit(f"{path}:{n}: not a KEY=VALUE line")
            if value[:1] in "\"'":
                value = "".join(shlex.split(value))
            out[key] = value
    return out


def environment(args):
    env = {}
    for key, value in service_section(args.unit, args.instance):
        if key == "Environment":
            if value == "":
                env = {}
                continue
            for word in shlex.split(value):
                k, _, v = word.partition("=")
                env[k] = v
    for path in args.env_file:
        env.update({k: v for k, v in env_file(path).items() if k not in args.ignore})
    for pair in args.set:
        k, _, v = pair.partition("=")
        env[k] = v
    for pair in args.map:
        src, _, dst = pair.partition("=")
        env = {k: v.replace(src, dst) for k, v in env.items()}
    return env


def expand(word, env):
    """ExecStart's rules: a word that is exactly $VAR splits into words; ${VAR} is one word."""
    m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
    if m:
        return env.get(m.group(1), "").split()
    return [re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), word)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["get", "env", "argv"])
    p.add_argument("unit")
    p.add_argument("key", nargs="?")
    p.add_argument("--instance")
    p.add_argument("--env-file", action="append", default=[])
    p.add_argument("--ignore", action="append", default=[])
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--map", action="append", default=[])
    args = p.parse_args()
    if args.what == "get":
        values = [v for k, v in service_section(args.unit, args.instance) if k == args.key]
        if not values:
            sys.exit(f"{args.unit}: no {args.key}=")
        print(values[-1])
    elif args.what == "env":
        env = environment(args)
        sys.stdout.write("".join(f"{k}={v}\0" for k, v in env.items()))
    else:
        env = environment(args)
        execs = [v for k, v in service_section(args.unit, args.instance) if k == "ExecStart"]
        if len(execs) != 1 or execs[0][:1] in "-@:+!":
            sys.exit(f"{args.unit}: one plain ExecStart= expected")
        words = [w for word in shlex.split(execs[0]) for w in expand(word, env)]
        for pair in args.map:
            src, _, dst = pair.partition("=")
            words = [w.replace(src, dst) if w.startswith(src) else w for w in words]
        sys.stdout.write("".join(f"{w}\0" for w in words))


if __name__ == "__main__":
    main()

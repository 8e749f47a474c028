#!/usr/bin/env python3
"""Lists import cycles between the workspace's source files and between its folders (a crate's
top-level modules), as a maintainer reads them: `crate::` and `super::` paths in a file's code
(tests, comments and strings aside) are edges to the module file they name; a module declaring
its children (`mod x;`) and the crate root's re-exports are not. sea-orm's entities (`entity/`)
name each other in their relations by design and are left out.

Usage: python3 scripts/module-cycles.py [--folders]   (exits 1 when it lists any)
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATES = ["app/src", "server/src", "services/src", "domain/src", "client-lib/src", "migrations/src"]
SKIP = ("services/src/entity/",)


def code(path):
    text = open(path, encoding="utf-8").read()
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def use_tree(text):
    """The paths a use tree's braces name: `a::{b, c::{d}}, e` gives a::b, a::c::d and e."""
    paths, stack, current, token = [], [[]], [], ""

    def flush():
        nonlocal token
        name = token.strip()
        token = ""
        if name == "self":
            paths.append(list(stack[-1]))
        elif name:
            paths.append(stack[-1] + current + [x for x in name.split("::") if x])

    i = 0
    while i < len(text):
        c = text[i]
        if c == "{":
            current.extend(x for x in token.strip().split("::") if x)
            token = ""
            stack.append(stack[-1] + current)
            current.clear()
        elif c == "}":
            flush()
            stack.pop()
            current.clear()
        elif c == ",":
            flush()
            current.clear()
        else:
            token += c
        i += 1
    flush()
    return paths


def module_file(src, parts):
    if not parts:
        return None
    base = os.path.join(src, *parts)
    for candidate in (base + ".rs", os.path.join(base, "mod.rs")):
        if os.path.exists(candidate):
            return candidate
    return None


def module_path(src, path):
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] == "mod":
        parts = parts[:-1]
    return [] if parts in (["lib"], ["main"]) else parts


def edges():
    graph = defaultdict(set)
    for rel_src in CRATES:
        src = os.path.join(ROOT, rel_src)
        for folder, _, files in os.walk(src):
            for name in files:
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)
                if not name.endswith(".rs") or name == "tests.rs" or rel.startswith(SKIP):
                    continue
                text, me = code(path), module_path(src, path)
                refs = set()
                for m in re.finditer(r"\b(crate|super)((?:::\w+)+)", text):
                    rest = [x for x in m.group(2).split("::") if x]
                    base = [] if m.group(1) == "crate" else me[:-1]
                    while rest and rest[0] == "super":
                        base, rest = base[:-1], rest[1:]
                    refs.add(tuple(base + rest))
                for m in re.finditer(r"\b(crate|super)::\{([^;]*)\}", text):
                    base = [] if m.group(1) == "crate" else me[:-1]
                    for item in use_tree(m.group(2)):
                        refs.add(tuple(base + item))
                for ref in refs:
                    parts = list(ref)
                    while parts and not module_file(src, parts):
                        parts = parts[:-1]
                    target = module_file(src, parts)
                    if target and target != path:
                        t = os.path.relpath(target, ROOT)
                        if not t.startswith(SKIP):
                            graph[rel].add(t)
    return graph


def folder_of(path):
    for src in CRATES:
        if path.startswith(src + "/"):
            first = path[len(src) + 1:].split("/")
            return src + "/" + (first[0][:-3] if len(first) == 1 else first[0])
    return path


def cycles(graph):
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def main():
    graph = edges()
    if "--folders" in sys.argv:
        folders = defaultdict(set)
        for a, targets in graph.items():
            for t in targets:
                if folder_of(a) != folder_of(t):
                    folders[folder_of(a)].add(folder_of(t))
        graph = folders
    found = cycles(graph)
    for comp in found:
        print(" <-> ".join(comp))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

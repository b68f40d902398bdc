"""The house's structure as a test: no import cycle among the project's own modules (an import
inside a function counts: a cycle is a design fact, not a timing), no module over 400 lines, one
package per runtime under adapters/ with the same inner shape, and nothing registered on import."""

from __future__ import annotations

import ast
import os
from typing import Dict, List, Set

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FOLDERS = {"bridge": "bridge", "bridge.adapters": "adapters", "bridge.compat": "compat"}
MAX_LINES = 400


def _modules() -> Dict[str, str]:
    found = {}
    for package, folder in FOLDERS.items():
        for dirpath, _, names in os.walk(os.path.join(ROOT, folder)):
            for name in names:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(dirpath, name)
                parts = os.path.relpath(path, os.path.join(ROOT, folder))[:-3].split(os.sep)
                parts = parts[:-1] if parts[-1] == "__init__" else parts
                found[".".join([package] + parts) if parts else package] = path
    return found


def _resolve(name: str, modules: Dict[str, str]) -> str:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str, path: str, modules: Dict[str, str]) -> Set[str]:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    base = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):  # every import, at any depth (functions included)
        names: List[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            stem = node.module or ""
            if node.level:
                anchor = base
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                stem = f"{anchor}.{stem}" if stem else anchor
            names = [f"{stem}.{alias.name}" for alias in node.names] + [stem]
        for name in names:
            target = _resolve(name, modules)
            if target and target != module and not module.startswith(target + "."):
                out.add(target)
    return out


MODULES = _modules()
GRAPH = {m: _imports(m, p, MODULES) for m, p in MODULES.items()}


def _cycles() -> List[List[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    found: List[List[str]] = []
    counter = 0
    for root in GRAPH:
        if root in index:
            continue
        work = [(root, iter(sorted(GRAPH[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(GRAPH[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_project_has_no_import_cycle_even_through_imports_inside_functions():
    assert len(MODULES) > 50 and "bridge.adapters.gymnasium.export" in GRAPH
    assert _cycles() == []


def test_every_source_folder_is_a_package_the_wheel_finds():
    missing = []
    for folder in FOLDERS.values():
        for dirpath, _, names in os.walk(os.path.join(ROOT, folder)):
            if "__pycache__" not in dirpath and any(n.endswith(".py") for n in names) and "__init__.py" not in names:
                missing.append(os.path.relpath(dirpath, ROOT))
    assert missing == []


def test_no_module_is_over_400_lines():
    long = {}
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as f:
            count = sum(1 for _ in f)
        if count > MAX_LINES:
            long[module] = count
    assert long == {}


@pytest.mark.parametrize("runtime", ["gymnasium", "sb3", "gym", "dreamerv2", "matlab"])
def test_every_runtime_is_one_package_with_the_same_inner_shape(runtime):
    folder = os.path.join(ROOT, "adapters", runtime)
    assert os.path.isfile(os.path.join(folder, "__init__.py"))
    for part in ("export", "lowering", "profile", "view"):
        assert os.path.isfile(os.path.join(folder, f"{part}.py")), f"adapters/{runtime}/{part}.py"
    loose = [n for n in os.listdir(os.path.join(ROOT, "adapters")) if n.endswith(".py") and n != "__init__.py"]
    assert loose == []


def test_the_core_imports_no_adapter_and_no_framework():
    core = {m for m in MODULES if not m.startswith(("bridge.adapters", "bridge.compat"))}
    reaching = {m: sorted(t for t in GRAPH[m] if t.startswith(("bridge.adapters", "bridge.compat"))) for m in core}
    assert {m: t for m, t in reaching.items() if t} == {}


def test_nothing_registers_a_profile_or_a_view_on_import():
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as f:
            source = f.read()
        assert "register_profile(" not in source and "register_view(" not in source, module

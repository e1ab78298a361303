"""The package's imports point one way (docs/architecture.md, "Layers").

Every import statement of every module counts, the ones inside functions too (a lazy import
is a circle postponed, not avoided). The checks: no import circle; no module imports
another's private names; each module imports only from its own component or from a lower
layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# component -> layer; a module may import its own component and any lower layer
LAYERS = {
    "kernels": 0,
    "conventions": 1,
    "results": 1,
    "workspace": 1,
    "processes": 0.5,  # what a forked child must not inherit (locks, numba's threads)
    "stamps": 1,
    "notices": 1,  # long waits said on stderr (compiles, one-time robot builds)
    "geometry": 2,
    "io": 3,
    "primitives": 3,
    "bvh": 3,
    "kcd": 4,
    "cloud_blocks": 4.5,  # clouds and voxel grids as object blocks (beside kcd, for the scene)
    "scene_arrays": 4.6,  # obstacles given as arrays, as the scene's objects and blocks
    "scene": 5,
    "queries": 5,
    "robot": 6,
    "checker": 7,
    "planner": 7.5,  # the planner compiled with the checker (it plans on a checker)
    "compiling": 8,  # the compile notices (no import needed) and warm_up over every layer
    "shipping": 9,  # the wheel's build: the warm-up's machine code copied into the wheel
    "__init__": 10,
    "__main__": 10,  # the package's public face re-exports every layer
    "viz": 11,
    "testing": 11,
}


# the repository's folders installed under the package's name (setup.py)
MAPPED = {f: f"planning_collision.{f}" for f in ("robots", "plugins", "demos")}


def _modules(package: str) -> dict[str, Path]:
    """{import name: file} of the modules in the repository's folder `package`."""
    base = ROOT / package
    out = {}
    for f in base.rglob("*.py"):
        parts = [MAPPED.get(package, package), *f.relative_to(base).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _is_package(name: str, modules: dict) -> bool:
    return name in modules and modules[name].name == "__init__.py"


def _imports(name: str, path: Path, modules: dict):
    """(target module, imported name or None, line) of every import in the file."""
    pkg = name if _is_package(name, modules) else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            for a in node.names:
                sub = f"{mod}.{a.name}"
                if sub in modules:
                    yield sub, None, node.lineno
                else:
                    yield mod, a.name, node.lineno


def _graph(package: str):
    modules = _modules(package)
    edges = {m: set() for m in modules}
    private = []
    for m, f in modules.items():
        for target, attr, line in _imports(m, f, modules):
            if target not in modules or target == m:
                continue
            edges[m].add(target)
            if attr is not None and attr.startswith("_") and attr != "__version__":
                private.append(f"{m}:{line} imports {target}.{attr}")
    return modules, edges, private


def _component(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _cycles(edges: dict) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_the_package_has_no_import_circle_lazy_imports_included():
    _, edges, _ = _graph("planning_collision")
    assert _cycles(edges) == []


def test_a_circle_is_detected():  # the check itself can fail
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_no_module_imports_another_modules_private_names():
    _, _, private = _graph("planning_collision")
    assert private == []


def test_imports_point_down_the_layers():
    modules, edges, _ = _graph("planning_collision")
    unknown = {_component(m) for m in modules} - set(LAYERS)
    assert not unknown, f"components without a layer: {unknown}"
    wrong = [
        f"{m} (layer {LAYERS[_component(m)]}) imports {t} (layer {LAYERS[_component(t)]})"
        for m, ts in edges.items()
        for t in ts
        if _component(t) != _component(m) and LAYERS[_component(t)] >= LAYERS[_component(m)]
    ]
    assert wrong == []


# the kernels' subjects (planning_collision/kernels/*/): each imports its own, lower ones and
# the one door to numba (kernels/_jit.py); robot and scene stand side by side
KERNEL_LAYERS = {
    "_jit": 0,
    "base": 1,
    "convex": 2,
    "scene": 3,
    "robot": 3,
    "checker": 4,
    "planner": 5,
}


def test_the_kernels_subjects_import_down_their_layers():
    modules, edges, _ = _graph("planning_collision")

    def subject(m: str) -> str | None:
        parts = m.split(".")
        return parts[2] if len(parts) > 2 and parts[1] == "kernels" else None

    kernels = {m for m in modules if subject(m) is not None}
    unknown = {subject(m) for m in kernels} - set(KERNEL_LAYERS)
    assert not unknown, f"kernel subjects without a layer: {unknown}"
    assert len({subject(m) for m in kernels}) == len(KERNEL_LAYERS)
    wrong = [
        f"{m} imports {t}"
        for m in kernels
        for t in edges[m]
        if subject(t) is None  # a kernel imports kernels only
        or subject(t) != subject(m)
        and KERNEL_LAYERS[subject(t)] >= KERNEL_LAYERS[subject(m)]
    ]
    assert wrong == []


@pytest.mark.parametrize("folder", sorted(MAPPED))
def test_plugins_robots_and_demos_import_the_engine_never_the_reverse(folder):
    name = MAPPED[folder]
    modules = _modules("planning_collision")
    wrong = [
        f"{m}:{line} imports {t if attr is None else t + '.' + attr}"
        for m, f in modules.items()
        for t, attr, line in _imports(m, f, modules)
        if f"{t}.{attr}" == name or f"{t}.".startswith(name + ".") or t == name
    ]
    assert wrong == []
    assert _graph(folder)[0], f"no modules found for {name} in {folder}/"
    assert _cycles(_graph(folder)[1]) == []


def test_nothing_imports_robots_plugins_or_demos_by_their_folder_names():
    """Run from the repository's root, `import robots` would still work (the folder is on
    sys.path) and then fail for a user of the wheel: every import, code strings included,
    says planning_collision.robots, .plugins, .demos."""
    import re

    top = "|".join(MAPPED)
    pattern = re.compile(
        rf"^\s*(from ({top})\b|import ({top})\b|import [\w., ]*,\s*({top})\s*$)", re.M
    )
    files = [
        p for d in ("planning_collision", "tests", "docs", *MAPPED) for p in (ROOT / d).rglob("*")
    ]
    files += [ROOT / "README.md"]
    wrong = [
        f"{p.relative_to(ROOT)}: {m.group(0).strip()}"
        for p in files
        if p.suffix in (".py", ".md")
        for m in pattern.finditer(p.read_text())
    ]
    assert wrong == []

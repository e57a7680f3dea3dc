"""Layering: which packages may import which, read from the source (every import, including those inside
functions), so a shortcut across layers fails here rather than as an import cycle later."""

import ast
import sys
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dnabird"
DATA_LAYER = ("dnabird.data", "dnabird.genome", "dnabird.datasets")
ABOVE_DATA = ("dnabird.model", "dnabird.attention", "dnabird.train", "dnabird.pretraining", "dnabird.finetune",
              "dnabird.tasks", "dnabird.pipeline", "dnabird.stages", "dnabird.commands", "dnabird.cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) of every import statement in the file; names are empty for `import x`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def within(module: str, packages) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", [p for p in MODULES if within(module_name(p), DATA_LAYER)],
                         ids=lambda p: module_name(p))
def test_data_code_does_not_import_model_or_training_code(path):
    crossing = [module for module, _ in imports(path) if within(module, ABOVE_DATA)]
    assert not crossing, f"{module_name(path)} imports {crossing}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "attention" / "backends").glob("*.py")), ids=lambda p: p.stem)
def test_no_backend_imports_another_backends_private_helper(path):
    private = [(module, name) for module, names in imports(path) for name in names
               if within(module, ("dnabird.attention.backends",)) and module != module_name(path)
               and name.startswith("_")]
    assert not private, f"{module_name(path)} imports private names {private}"


def test_the_rules_see_imports_inside_functions(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text("def f():\n    from dnabird.model.heads import _x\n")
    assert imports(source) == [("dnabird.model.heads", ["_x"])]


# Every `dnabird.X` (a subpackage or a top-level module) and the package root, lowest layer first. A package
# imports only packages of lower layers (never one of its own layer, never a higher one); adding a package
# means placing it here.
LAYERS = (
    ("dnabird.errors",),
    ("dnabird",),  # the root: __version__ (and its lazy facade, FACADE)
    ("dnabird.labels", "dnabird.progress", "dnabird.provenance"),
    ("dnabird.io", "dnabird.config"),  # files (digests, atomic output) and configs
    ("dnabird.genome", "dnabird.datasets", "dnabird.attention", "dnabird.pipeline"),
    ("dnabird.data", "dnabird.results"),
    ("dnabird.model",),
    ("dnabird.train",),        # the loop and the recipe shell around it
    ("dnabird.inference",),    # a model run over DNA: predictor, genome windows, resumable chunks, table writers
    ("dnabird.pretraining", "dnabird.finetune"),
    ("dnabird.text", "dnabird.variants", "dnabird.prediction"),
    ("dnabird.tasks",),        # the task registry: genomic tasks and the text tasks, above the recipe they plug into
    ("dnabird.stages",),
    ("dnabird.commands",),
    ("dnabird.cli",),
    ("dnabird.__main__",),
)
# upward imports allowed by name: the root's `__getattr__` re-exports `dnabird.score_variants`, `Variant`,
# `dnabird.predict` and `predict_to_files`
FACADE = {("dnabird", "dnabird.variants"), ("dnabird", "dnabird.prediction")}


def package_of(module: str, root: Path) -> str | None:
    """The `dnabird.X` unit a dotted module belongs to ("dnabird" for the root itself), None outside."""
    parts = module.split(".")
    if parts[0] != root.name:
        return None
    return ".".join(parts[:2]) if len(parts) > 1 else parts[0]


def package_graph(root: Path) -> dict[str, dict[str, list[str]]]:
    """{package: {package it imports: ["file:line", ...]}} over every import of every file under `root`
    (a package directory), imports inside functions included; `from dnabird import x` counts as importing
    `dnabird.x` when x is a module."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        source = parts[0] if parts[1:] in ((), ("__init__",)) else ".".join(parts[:2])
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level:
                raise AssertionError(f"{path}:{node.lineno}: relative import; write it absolute")
            elif isinstance(node, ast.ImportFrom) and node.module == root.name:
                targets = [f"{root.name}.{a.name}" if (root / a.name).is_dir() or (root / f"{a.name}.py").is_file()
                           else root.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module]
            else:
                continue
            for target in filter(None, (package_of(t, root) for t in targets)):
                if target != source:
                    graph[source][target].append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return graph


def layering_violations(graph, layers=LAYERS, allowed=FACADE) -> list[str]:
    """Each import of a package from its own layer or a higher one, and each package missing from `layers`."""
    rank = {package: i for i, layer in enumerate(layers) for package in layer}
    problems = [f"{package} is in no layer of LAYERS" for package in sorted(set(graph) - set(rank))]
    for source, targets in sorted(graph.items()):
        for target, where in sorted(targets.items()):
            if source in rank and target in rank and rank[target] >= rank[source] and (source, target) not in allowed:
                problems.append(f"{source} (layer {rank[source]}) imports {target} (layer {rank[target]}) "
                                f"at {', '.join(where)}")
    return problems


def import_cycles(graph, allowed=FACADE) -> list[str]:
    """Each cycle among packages, as "a -> b -> a" with the place of every import on it (depth-first search)."""
    cycles, done = [], set()

    def visit(package: str, path: list[str]) -> None:
        for target in sorted(graph.get(package, {})):
            if (package, target) in allowed:
                continue
            if target in path:
                loop = path[path.index(target):] + [target]
                where = "; ".join(f"{a} -> {b} at {graph[a][b][0]}" for a, b in pairwise(loop))
                cycles.append(f"{' -> '.join(loop)} ({where})")
            elif target not in done:
                visit(target, [*path, target])
        done.add(package)

    for package in sorted(graph):
        if package not in done:
            visit(package, [package])
    return cycles


def module_graph(package: Path) -> dict[str, dict[str, list[str]]]:
    """{module: {module it imports: ["file:line", ...]}} among the modules of one package directory (a package's
    `__init__` is the package's own name), imports inside functions included; `from pkg import x` counts as
    importing `pkg.x` when x is a module."""
    name = module_name(package / "__init__.py")
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(package.glob("*.py")):
        source = module_name(path)
        for module, names in imports(path):
            if module == name and names:     # `from dnabird.pkg import x, y`
                targets = [f"{module}.{n}" if (package / f"{n}.py").is_file() else module for n in names]
            else:
                targets = [module]
            depth = name.count(".") + 1     # the package's own modules, not those of its subpackages' modules
            inside = {t for t in targets if t == name or (t.startswith(name + ".") and t.count(".") == depth)}
            for target in sorted(inside - {source}):
                graph[source][target].append(f"{path.relative_to(PACKAGE.parent)}")
    return graph


# packages whose modules still import each other in a cycle (to be untangled); every other package has none
MODULE_CYCLES_LEFT = ("attention", "model", "variants")
PACKAGES = sorted(p.parent for p in PACKAGE.glob("*/__init__.py") if p.parent.name not in MODULE_CYCLES_LEFT)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_import_cycle_between_the_modules_of_a_package(package):
    cycles = import_cycles(module_graph(package), allowed=())
    assert not cycles, "\n".join(cycles)


def test_a_planted_cycle_between_modules_is_reported(tmp_path, monkeypatch):
    package = tmp_path / "dnabird" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "recipe.py").write_text("from dnabird.pkg.task import Task\n")
    (package / "task.py").write_text("def finetune():\n    from dnabird.pkg import recipe\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "dnabird")
    assert import_cycles(module_graph(package), allowed=()) == [
        "dnabird.pkg.recipe -> dnabird.pkg.task -> dnabird.pkg.recipe (dnabird.pkg.recipe -> dnabird.pkg.task at "
        "dnabird/pkg/recipe.py; dnabird.pkg.task -> dnabird.pkg.recipe at dnabird/pkg/task.py)"]


def test_every_package_imports_only_lower_layers():
    graph = package_graph(PACKAGE)
    problems = layering_violations(graph)
    assert not problems, "\n".join(problems)
    listed = {package for layer in LAYERS for package in layer}
    found = {package_of(module_name(p), PACKAGE) for p in MODULES}
    assert listed == found, f"LAYERS lists {sorted(listed - found)} that do not exist, misses {sorted(found - listed)}"


def test_no_import_cycle_between_packages():
    cycles = import_cycles(package_graph(PACKAGE))
    assert not cycles, "\n".join(cycles)


def test_a_planted_cycle_and_an_upward_import_are_reported(tmp_path):
    root = tmp_path / "dnabird"
    for folder in ("low", "high"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "high" / "user.py").write_text("from dnabird.low.base import thing\n")
    (root / "low" / "base.py").write_text("thing = 1\n\n\ndef shortcut():\n    from dnabird.high import user\n")
    graph = package_graph(root)
    layers = (("dnabird",), ("dnabird.low",), ("dnabird.high",))
    assert import_cycles(graph) == ["dnabird.high -> dnabird.low -> dnabird.high (dnabird.high -> dnabird.low at "
                                    "dnabird/high/user.py:1; dnabird.low -> dnabird.high at dnabird/low/base.py:5)"]
    assert layering_violations(graph, layers) == [
        "dnabird.low (layer 1) imports dnabird.high (layer 2) at dnabird/low/base.py:5"]
    assert layering_violations(graph, layers[:2]) == ["dnabird.high is in no layer of LAYERS"]

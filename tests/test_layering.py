"""Layering: which packages may import which, read from the source (every import, including those inside
functions), so a shortcut across layers fails here rather than as an import cycle later."""

import ast
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

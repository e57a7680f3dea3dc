"""Typed configs: overrides parsed as YAML values, fields checked by type, unknown keys named."""

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from dnabird.config import apply_overrides, build_config, parse_override, read_yaml
from dnabird.errors import ConfigError


@dataclass
class Inner:
    size: int = 1


@dataclass
class Outer:
    name: str = "x"
    rate: float = 0.5
    flag: bool = False
    where: Path | None = None
    contigs: tuple[str, ...] | None = None
    sizes: list[int] = field(default_factory=list)
    inner: Inner = field(default_factory=Inner)


@pytest.mark.parametrize("text, keys, value", [
    ("tokenizer.vocab_size=512", ["tokenizer", "vocab_size"], 512),
    ("corpus.heldout=[chr8, chr9]", ["corpus", "heldout"], ["chr8", "chr9"]),
    ("seed=7", ["seed"], 7),
    ("corpus.max_n_fraction=0.25", ["corpus", "max_n_fraction"], 0.25),
    ("fetch.dest=null", ["fetch", "dest"], None),
    ("fetch.source=ucsc_hg19_fa", ["fetch", "source"], "ucsc_hg19_fa"),
    ("x.flag=true", ["x", "flag"], True),
])
def test_override_parsing(text, keys, value):
    assert parse_override(text) == (keys, value)


@pytest.mark.parametrize("bad", ["novalue", "=3", "a..b=1", "a.b=[unclosed"])
def test_malformed_override_is_rejected(bad):
    with pytest.raises(ConfigError, match="override"):
        parse_override(bad)


def test_exponent_floats_without_a_dot_are_floats():
    """PyYAML reads `1e-3` (YAML 1.1) as a string; a float field takes it as 0.001, in files and overrides."""
    data = apply_overrides(yaml.safe_load("rate: 3e-4"), ["rate=1e-3"], "f.yaml")
    assert data["rate"] == "1e-3"  # what PyYAML hands over
    assert build_config(Outer, data, "f.yaml").rate == 0.001
    assert build_config(Outer, yaml.safe_load("rate: 3e-4"), "f.yaml").rate == 0.0003


def test_build_config_checks_types_and_converts():
    config = build_config(Outer, {"rate": 1, "where": "a/b", "contigs": ["chr1"], "inner": {"size": 3}}, "f.yaml")
    assert config == Outer(rate=1.0, where=Path("a/b"), contigs=("chr1",), inner=Inner(3))
    assert isinstance(config.rate, float)
    for data, message in [({"name": 3}, "f.yaml.name: expected str, got 3"),
                          ({"flag": "yes"}, "f.yaml.flag: expected bool, got 'yes'"),
                          ({"sizes": [1, "2"]}, r"f.yaml.sizes\[1\]: expected int"),
                          ({"inner": {"sise": 2}}, "f.yaml.inner: unknown key 'sise'; did you mean 'size'?"),
                          ({"inner": {"colour": 2}}, r"f.yaml.inner: unknown key 'colour' \(known keys: size\)"),
                          ({"contigs": "chr1"}, "f.yaml.contigs"),
                          ({"rate": True}, "expected float, got True"),
                          ({"rate": "fast"}, "expected float, got 'fast'"),
                          ({"rate": "1e-3x"}, "expected float, got '1e-3x'")]:
        with pytest.raises(ConfigError, match=message):
            build_config(Outer, data, "f.yaml")


def test_overrides_build_nested_sections_and_refuse_scalars_as_sections():
    data = apply_overrides({"a": None}, ["a.b=1", "c.d.e=[1, 2]"], "p.yaml")
    assert data == {"a": {"b": 1}, "c": {"d": {"e": [1, 2]}}}
    with pytest.raises(ConfigError, match="'a' is not a section in p.yaml"):
        apply_overrides({"a": 3}, ["a.b=1"], "p.yaml")


def test_read_yaml_names_the_file(tmp_path):
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="list.yaml: expected a mapping"):
        read_yaml(tmp_path / "list.yaml")
    (tmp_path / "bad.yaml").write_text("a: [1,\n")
    with pytest.raises(ConfigError, match="bad.yaml: not valid YAML"):
        read_yaml(tmp_path / "bad.yaml")
    with pytest.raises(ConfigError, match="none.yaml: cannot read"):
        read_yaml(tmp_path / "none.yaml")

from pathlib import Path

import pytest
import yaml

import dnabird
from dnabird.data.manifests import (
    MANIFEST_DIR,
    Checksum,
    find_manifest,
    load_manifest,
    manifest_from_dict,
    shipped_manifest_paths,
)
from dnabird.errors import ConfigError, ParameterError

SHIPPED = shipped_manifest_paths()
EXPECTED_SOURCES = {"ucsc_hg19_fa", "ensembl_grch37_75", "epdnew_hs006_hg38", "ucsc_hg38_to_hg19",
                    "deepsea_bundle", "deepsea_bundle_zenodo", "deepsea_feature_names", "deepsea_pos_bed",
                    "hs37d5", "encode_male_hg19", "toy", "toy_large", "imdb", "hyperpartisan", "arxiv_classification",
                    "triviaqa", "squad", "text8", "enwik8"}


def base(**changes):
    data = {"name": "src", "description": "d", "build": "hg19", "format": "bed", "license": "l",
            "files": [{"filename": "a.bed", "url": "https://example.org/a.bed", "checksum": "none"}]}
    data.update(changes)
    return data


def test_manifests_ship_at_the_project_top_level():
    assert MANIFEST_DIR == Path(dnabird.__file__).resolve().parents[1] / "data_manifests"
    assert {path.stem for path in SHIPPED} == EXPECTED_SOURCES


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_manifest_validates_and_says_how_to_fetch_it(path):
    manifest = load_manifest(path)
    assert manifest.name == path.stem
    header = path.read_text().split("\n")
    assert header[0].startswith("# ")
    assert any(line.startswith("#") and f"dnabird fetch {manifest.name}" in line for line in header[:6])
    for source in manifest.files:
        assert source.url.endswith(source.filename)


def test_hg19_pins_the_root_level_file_and_its_md5():
    source = find_manifest("ucsc_hg19_fa").files[0]
    assert source.url == "https://hgdownload.soe.ucsc.edu/goldenPath/hg19/bigZips/hg19.fa.gz"
    assert source.checksum == Checksum(md5="806c02398f5ac5da8ffd6da2d1d5d1a9")
    assert source.unpack == "gunzip"


def test_chain_manifest_shows_non_commercial_terms():
    manifest = find_manifest("ucsc_hg38_to_hg19")
    assert "non-commercial" in manifest.terms and not manifest.files[0].checksum.published


def test_unknown_key_fails_by_name_with_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(base(licence="typo")))
    with pytest.raises(ConfigError, match=r"bad.yaml: unknown key 'licence'"):
        load_manifest(path)
    data = base()
    data["files"][0]["sha265"] = "0" * 64
    with pytest.raises(ConfigError, match=r"files\[0\]: unknown key 'sha265'"):
        manifest_from_dict(data, "m.yaml")
    data = base()
    data["files"][0]["checksum"] = {"md4": "0" * 32}
    with pytest.raises(ConfigError, match=r"files\[0\].checksum: unknown key 'md4'"):
        manifest_from_dict(data, "m.yaml")


@pytest.mark.parametrize("change, message", [
    ({"files": [{"url": "https://example.org/a", "checksum": "none"}]}, r"missing required key 'filename'"),
    ({"files": [{"filename": "a", "url": "https://example.org/a"}]}, r"missing required key 'checksum'"),
    ({"files": [{"filename": "a", "url": "https://x/a", "checksum": {}}]}, r"write `checksum: none`"),
    ({"files": [{"filename": "a", "url": "https://x/a", "checksum": {"md5": "xyz"}}]}, r"not a valid md5"),
    ({"files": [{"filename": "../a", "url": "https://x/a", "checksum": "none"}]}, r"plain file name"),
    ({"files": [{"filename": "a", "url": "ftp://x/a", "checksum": "none"}]}, r"http\(s\) URL"),
    ({"files": [{"filename": "a", "url": "https://x/a", "checksum": "none", "unpack": "unrar"}]},
     r"unpack: expected one of none, gunzip, untar, unzip"),
    ({"files": [{"filename": "a.fa", "url": "https://x/a", "checksum": "none", "unpack": "gunzip"}]},
     r"ending in .gz"),
    ({"files": [{"filename": "a", "url": "https://x/a", "checksum": "none", "size": -1}]}, r"size"),
    ({"generator": "dnabird.datasets.toy"}, r"exactly one of 'files'"),
    ({"options": {"scale": 3}}, r"options: only a generator manifest takes options"),
    ({"files": [{"filename": "a", "url": "https://x/a", "checksum": {"md5": "0" * 32, "listed_in": "https://x/l"}}]},
     r"either digests or listed_in"),
    ({"name": "Bad Name"}, r"name: expected lower-case"),
    ({"description": ""}, r"description: expected a non-empty string"),
])
def test_invalid_manifests_name_the_key(change, message):
    with pytest.raises(ConfigError, match=message):
        manifest_from_dict(base(**change), "m.yaml")


def test_missing_top_level_key_is_named():
    data = base()
    del data["license"]
    with pytest.raises(ConfigError, match=r"m.yaml: missing required key 'license'"):
        manifest_from_dict(data, "m.yaml")


def test_digests_are_normalised():
    data = base()
    data["files"][0]["checksum"] = {"md5": "806C02398F5AC5DA8FFD6DA2D1D5D1A9", "bsd_sum": "01234   56"}
    checksum = manifest_from_dict(data).files[0].checksum
    assert checksum.digests() == {"md5": "806c02398f5ac5da8ffd6da2d1d5d1a9", "bsd_sum": "1234 56"}


def test_generator_options_are_validated_and_kept():
    data = {k: v for k, v in base().items() if k != "files"}
    assert manifest_from_dict({**data, "generator": "g", "options": {"scale": 3.0}}).options == {"scale": 3.0}
    with pytest.raises(ConfigError, match=r"m.yaml: options: expected a mapping"):
        manifest_from_dict({**data, "generator": "g", "options": [3]}, "m.yaml")
    large = find_manifest("toy_large")
    assert (large.generator, large.seed, large.options) == ("dnabird.datasets.toy", 0, {"scale": 3.0})


def test_find_manifest_by_name_or_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toy").mkdir()  # e.g. left by `dnabird fetch toy --dest toy`: a name is still a name
    assert find_manifest("toy").generator == "dnabird.datasets.toy"
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(base(name="mine")))
    assert find_manifest(str(path)).name == "mine"
    with pytest.raises(ParameterError, match="ucsc_hg19_fa"):
        find_manifest("hg19")
    with pytest.raises(ConfigError, match="absent.yaml: cannot read"):
        find_manifest(tmp_path / "absent.yaml")


def test_text_manifests_pin_the_published_checksums():
    text8 = find_manifest("text8").files[0]
    assert text8.unpack == "unzip" and text8.size == 31_344_016
    assert text8.checksum == Checksum(md5="f26f94c5209bc6159618bad4a559ff81",
                                      sha256="a6640522afe85d1963ad56c05b0ede0a0c000dddc9671758a6cc09b7a38e5232")
    squad = {f.filename: f for f in find_manifest("squad").files}
    assert set(squad) == {"train-v1.1.json", "dev-v1.1.json", "train-v2.0.json", "dev-v2.0.json"}
    assert squad["dev-v1.1.json"].checksum.sha256.startswith("95aa6a52")
    hyperpartisan = [f.filename for f in find_manifest("hyperpartisan").files]
    assert "hp-splits.json" in hyperpartisan
    assert len(find_manifest("arxiv_classification").files) == 11

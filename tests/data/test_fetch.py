"""End-to-end `fetch` against an HTTP server started on 127.0.0.1 inside the test."""

import gzip
import hashlib
import http.server
import json
import os
import re
import socket
import sys
import threading

import pyfaidx
import pytest
import yaml

from dnabird.cli import main
from dnabird.data.fetch import fetch
from dnabird.data.lockfile import LOCK_NAME
from dnabird.errors import ChecksumError, DnabirdError, DownloadError, ParameterError

CONTENT = os.urandom(200_000)


class FileServer(http.server.ThreadingHTTPServer):
    """Serves `files` by path; can drop a connection after N bytes and ignore Range. Logs each request."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), RangeHandler)
        self.files: dict[str, bytes] = {}
        self.drop_after: dict[str, int] = {}  # path -> bytes sent before the first response is cut
        self.ignore_range = False
        self.log: list[dict] = []

    def url(self, path):
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


class RangeHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        server = self.server
        content = server.files.get(self.path)
        entry = {"path": self.path, "range": self.headers.get("Range"), "sent": 0}
        server.log.append(entry)
        if content is None:
            self.send_error(404)
            return
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if match and not server.ignore_range:
            start = int(match.group(1))
            if start >= len(content):
                entry["status"] = 416
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(content)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(content) - 1}/{len(content)}")
        else:
            self.send_response(200)
        body = content[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        limit = server.drop_after.pop(self.path, None)
        if limit is not None:
            body = body[:limit]
            self.close_connection = True
        entry["sent"] = len(body)  # before writing: the client may finish before this thread resumes
        self.wfile.write(body)
        if limit is not None:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def server():
    srv = FileServer()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def write_manifest(tmp_path, urls, checksum, filename="payload.bin", unpack="none", fmt="binary", **extra):
    manifest = {"name": "test_source", "description": "test data", "build": "none", "format": fmt,
                "license": "test", "files": [{"filename": filename, "url": urls[0], "mirrors": urls[1:],
                                              "checksum": checksum, "unpack": unpack, **extra}]}
    path = tmp_path / "test_source.yaml"
    path.write_text(yaml.safe_dump(manifest))
    return path


def md5(data):
    return hashlib.md5(data).hexdigest()


def test_interrupted_transfer_resumes_with_range(server, tmp_path):
    server.files["/f.bin"] = CONTENT
    server.drop_after["/f.bin"] = 70_000
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], {"md5": md5(CONTENT)})
    out = fetch(manifest, tmp_path / "dest", progress=False, retry_wait=0)
    assert out["payload.bin"].read_bytes() == CONTENT
    first, second = server.log
    assert first["sent"] == 70_000 and first["range"] is None
    assert second["range"] == "bytes=70000-"
    assert second["sent"] == len(CONTENT) - 70_000 < len(CONTENT)
    assert not (tmp_path / "dest" / "payload.bin.part").exists()


def test_partial_file_from_a_failed_run_is_resumed_by_the_next(server, tmp_path):
    server.files["/f.bin"] = CONTENT
    server.drop_after["/f.bin"] = 50_000
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], {"md5": md5(CONTENT)})
    with pytest.raises(DownloadError, match="payload.bin"):
        fetch(manifest, tmp_path / "dest", progress=False, retries=1)
    assert (tmp_path / "dest" / "payload.bin.part").stat().st_size == 50_000
    fetch(manifest, tmp_path / "dest", progress=False)
    assert (tmp_path / "dest" / "payload.bin").read_bytes() == CONTENT
    assert server.log[-1]["range"] == "bytes=50000-" and server.log[-1]["sent"] == len(CONTENT) - 50_000


def test_server_ignoring_range_restarts_cleanly(server, tmp_path):
    server.files["/f.bin"] = CONTENT
    server.drop_after["/f.bin"] = 60_000
    server.ignore_range = True
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], {"md5": md5(CONTENT)})
    out = fetch(manifest, tmp_path / "dest", progress=False, retry_wait=0)
    assert out["payload.bin"].read_bytes() == CONTENT
    assert server.log[1]["range"] == "bytes=60000-" and server.log[1]["sent"] == len(CONTENT)


def test_stale_partial_file_longer_than_the_source_restarts(server, tmp_path):
    server.files["/f.bin"] = CONTENT
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "payload.bin.part").write_bytes(os.urandom(len(CONTENT) + 10))
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], {"md5": md5(CONTENT)})
    out = fetch(manifest, dest, progress=False, retry_wait=0)
    assert out["payload.bin"].read_bytes() == CONTENT
    assert server.log[0]["status"] == 416 and server.log[1]["range"] is None


def test_corrupted_download_fails_naming_both_digests_and_keeps_it_aside(server, tmp_path):
    bad = CONTENT[:-1] + bytes([CONTENT[-1] ^ 0xFF])  # differs from CONTENT whatever its last byte
    server.files["/f.bin"] = bad
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], {"md5": md5(CONTENT)})
    with pytest.raises(ChecksumError) as err:
        fetch(manifest, dest, progress=False)
    message = str(err.value)
    assert "payload.bin" in message and md5(CONTENT) in message and md5(bad) in message
    assert (dest / "payload.bin.mismatch").read_bytes() == bad
    assert not (dest / "payload.bin").exists()
    assert (dest / "notes.txt").read_text() == "mine"


def test_existing_file_that_fails_verification_is_left_untouched(server, tmp_path):
    server.files["/f.bin"] = CONTENT
    dest = tmp_path / "dest"
    dest.mkdir()
    previous = b"an older version the user keeps"
    (dest / "payload.bin").write_bytes(previous)
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], {"md5": md5(CONTENT)})
    with pytest.raises(ChecksumError) as err:
        fetch(manifest, dest, progress=False)
    assert md5(CONTENT) in str(err.value) and md5(previous) in str(err.value)
    assert (dest / "payload.bin").read_bytes() == previous
    assert server.log == []


def test_mirrors_are_tried_in_order(server, tmp_path):
    server.files["/good.bin"] = CONTENT
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}/f.bin"
    urls = [server.url("/missing.bin"), dead, server.url("/good.bin")]
    manifest = write_manifest(tmp_path, urls, {"sha256": hashlib.sha256(CONTENT).hexdigest()})
    out = fetch(manifest, tmp_path / "dest", progress=False, retries=2, retry_wait=0)
    assert out["payload.bin"].read_bytes() == CONTENT
    assert [entry["path"] for entry in server.log] == ["/missing.bin", "/good.bin"]  # 404: no retry
    lock = json.loads((tmp_path / "dest" / LOCK_NAME).read_text())
    assert lock["entries"]["payload.bin"]["url"] == urls[2]


def test_retries_must_be_positive(server, tmp_path):
    manifest = write_manifest(tmp_path, [server.url("/a.bin")], "none")
    with pytest.raises(ParameterError, match="retries=0"):
        fetch(manifest, tmp_path / "dest", progress=False, retries=0)


def test_all_urls_failing_names_each(server, tmp_path):
    manifest = write_manifest(tmp_path, [server.url("/a.bin"), server.url("/b.bin")], "none")
    with pytest.raises(DownloadError) as err:
        fetch(manifest, tmp_path / "dest", progress=False, retry_wait=0)
    assert "/a.bin: HTTP 404" in str(err.value) and "/b.bin: HTTP 404" in str(err.value)


def test_lock_file_records_sha256_then_verifies(server, tmp_path):
    server.files["/f.bin"] = CONTENT
    dest = tmp_path / "dest"
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], "none")
    fetch(manifest, dest, progress=False)
    entry = json.loads((dest / LOCK_NAME).read_text())["entries"]["payload.bin"]
    assert entry["sha256"] == hashlib.sha256(CONTENT).hexdigest()
    assert entry["size"] == len(CONTENT) and entry["checksum"] == "recorded on first download"

    fetch(manifest, dest, progress=False)  # present and verified: nothing downloaded
    assert len(server.log) == 1

    (dest / "payload.bin").write_bytes(CONTENT[::-1])
    with pytest.raises(ChecksumError) as err:
        fetch(manifest, dest, progress=False)
    assert hashlib.sha256(CONTENT).hexdigest() in str(err.value)
    assert hashlib.sha256(CONTENT[::-1]).hexdigest() in str(err.value)

    (dest / "payload.bin").unlink()  # the publisher changed the file since the first download
    server.files["/f.bin"] = CONTENT[::-1]
    with pytest.raises(ChecksumError, match="recorded in"):
        fetch(manifest, dest, progress=False)
    assert (dest / "payload.bin.mismatch").read_bytes() == CONTENT[::-1]


def test_published_size_is_checked(server, tmp_path):
    server.files["/f.bin"] = CONTENT
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], "none", size=len(CONTENT) + 1)
    with pytest.raises(ChecksumError, match=f"size expected {len(CONTENT) + 1} bytes, got {len(CONTENT)}"):
        fetch(manifest, tmp_path / "dest", progress=False)


def test_checksum_list_is_read_at_fetch_time(server, tmp_path):
    server.files["/f.bin"] = CONTENT
    server.files["/md5sum.txt"] = f"{'0' * 32}  other.bin\n{md5(CONTENT)}  payload.bin\n".encode()
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], {"listed_in": server.url("/md5sum.txt")})
    fetch(manifest, tmp_path / "dest", progress=False)
    del server.files["/md5sum.txt"]  # later runs verify against the lock file, without the network
    fetch(manifest, tmp_path / "dest", progress=False)
    assert [entry["path"] for entry in server.log] == ["/md5sum.txt", "/f.bin"]

    server.files["/md5sum.txt"] = f"{'0' * 32}  payload.bin\n".encode()
    with pytest.raises(ChecksumError, match="0" * 32):
        fetch(manifest, tmp_path / "other_dest", progress=False)


def test_ensembl_style_bsd_sum_list_is_verified(server, tmp_path):
    server.files["/f.bin"] = b"hello world\n"  # Unix `sum` prints "03762     1" for these bytes
    server.files["/CHECKSUMS"] = b"12345 9 other.bin\n03762\t1\tpayload.bin\n"
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], {"listed_in": server.url("/CHECKSUMS")})
    assert fetch(manifest, tmp_path / "a", progress=False)["payload.bin"].read_bytes() == b"hello world\n"
    server.files["/CHECKSUMS"] = b"03763 1 payload.bin\n"
    with pytest.raises(ChecksumError, match="bsd_sum expected 3763 1 .*got 3762 1"):
        fetch(manifest, tmp_path / "b", progress=False)


def test_gzipped_fasta_becomes_readable_by_pyfaidx(server, tmp_path):
    fasta = ">chr1 test\n" + "ACGTNacgtn" * 30 + "\n>chr2\n" + "GGGCCC" * 20 + "\n"
    server.files["/g.fa.gz"] = gzip.compress(fasta.encode()) + b"\x01w trailing garbage"
    manifest = write_manifest(tmp_path, [server.url("/g.fa.gz")], "none", filename="g.fa.gz",
                              unpack="gunzip", fmt="fasta")
    out = fetch(manifest, tmp_path / "dest", progress=False)
    assert (tmp_path / "dest" / "g.fa.fai").exists()
    genome = pyfaidx.Fasta(str(out["g.fa"]), sequence_always_upper=False)
    assert str(genome["chr1"][10:25]) == ("ACGTNacgtn" * 30)[10:25]
    assert len(genome["chr2"]) == 120

    before = out["g.fa"].stat().st_mtime_ns
    fetch(manifest, tmp_path / "dest", progress=False)  # verified and recorded: not unpacked again
    assert out["g.fa"].stat().st_mtime_ns == before and len(server.log) == 1


def test_unpacking_never_overwrites_a_file_the_user_had(server, tmp_path):
    server.files["/g.fa.gz"] = gzip.compress(b">chr1\nACGT\n")
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "g.fa").write_text("user's own")
    manifest = write_manifest(tmp_path, [server.url("/g.fa.gz")], "none", filename="g.fa.gz", unpack="gunzip")
    with pytest.raises(DnabirdError, match="did not write it"):
        fetch(manifest, dest, progress=False)
    assert (dest / "g.fa").read_text() == "user's own"


def test_generator_manifest_calls_generate_with_its_seed(tmp_path, monkeypatch):
    module_dir = tmp_path / "modules"
    module_dir.mkdir()
    (module_dir / "tiny_generator.py").write_text(
        "from pathlib import Path\n"
        "def generate(out_dir, seed=0):\n"
        "    out = Path(out_dir) / f'seq_{seed}.fa'\n"
        "    out.write_text('>chrT\\nACGT\\n')\n"
        "    with open(Path(out_dir) / 'calls.txt', 'a') as log:\n"
        "        log.write('x')\n"
        "    return {'fasta': out}\n")
    monkeypatch.syspath_prepend(str(module_dir))
    manifest = tmp_path / "tiny.yaml"
    manifest.write_text("name: tiny\ndescription: d\nbuild: b\nformat: fasta\nlicense: l\n"
                        "generator: tiny_generator\nseed: 7\n")
    out = fetch(manifest, tmp_path / "dest", progress=False)
    assert out == {"fasta": tmp_path / "dest" / "seq_7.fa"}
    assert (tmp_path / "dest" / "calls.txt").read_text() == "x"
    entry = json.loads((tmp_path / "dest" / LOCK_NAME).read_text())["entries"]["tiny"]
    assert entry == {"generator": "tiny_generator", "seed": 7, "outputs": {"fasta": "seq_7.fa"}}
    sys.modules.pop("tiny_generator", None)


def test_generator_manifest_passes_its_options_and_records_them(tmp_path, monkeypatch):
    module_dir = tmp_path / "modules"
    module_dir.mkdir()
    (module_dir / "scaled_generator.py").write_text(
        "from pathlib import Path\n"
        "def generate(out_dir, seed=0, *, scale=1.0):\n"
        "    out = Path(out_dir) / f'seq_{seed}_{scale}.fa'\n"
        "    out.write_text('>chrT\\n' + 'ACGT' * int(scale) + '\\n')\n"
        "    return {'fasta': out}\n")
    monkeypatch.syspath_prepend(str(module_dir))
    head = "description: d\nbuild: b\nformat: fasta\nlicense: l\ngenerator: scaled_generator\nseed: 2\n"
    manifest = tmp_path / "scaled.yaml"
    manifest.write_text("name: scaled\n" + head + "options:\n  scale: 3\n")
    out = fetch(manifest, tmp_path / "dest", progress=False)
    assert out["fasta"].read_text() == ">chrT\nACGTACGTACGT\n"
    entry = json.loads((tmp_path / "dest" / LOCK_NAME).read_text())["entries"]["scaled"]
    assert entry["options"] == {"scale": 3} and entry["seed"] == 2
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("name: wrong\n" + head + "options:\n  size: 3\n")
    with pytest.raises(DnabirdError, match=r"wrong.yaml: options \{'size': 3\} do not fit scaled_generator"):
        fetch(wrong, tmp_path / "dest2", progress=False)
    sys.modules.pop("scaled_generator", None)


def test_generator_that_cannot_be_imported_is_named(tmp_path):
    manifest = tmp_path / "broken.yaml"
    manifest.write_text("name: broken\ndescription: d\nbuild: b\nformat: f\nlicense: l\n"
                        "generator: no_such_module_here\n")
    with pytest.raises(DnabirdError, match="broken.yaml: generator 'no_such_module_here'"):
        fetch(manifest, tmp_path / "dest", progress=False)


def test_fetch_toy_writes_the_embedded_default(tmp_path):
    out = fetch("toy", tmp_path / "toy", progress=False)
    assert {"fasta", "promoters_bed", "chain", "features_bed", "train_mat", "vcf"} <= set(out)
    genome = pyfaidx.Fasta(str(out["fasta"]))
    assert "chr1" in genome.keys() and len(genome["chr1"]) > 100_000
    assert json.loads((tmp_path / "toy" / LOCK_NAME).read_text())["entries"]["toy"]["seed"] == 0


def test_cli_fetch_uses_the_environment_default(server, tmp_path, monkeypatch, capsys):
    server.files["/f.bin"] = CONTENT
    manifest = write_manifest(tmp_path, [server.url("/f.bin")], {"md5": md5(CONTENT)})
    monkeypatch.setenv("DNABIRD_DATA", str(tmp_path / "store"))
    assert main(["-q", "fetch", str(manifest)]) == 0
    assert (tmp_path / "store" / "test_source" / "payload.bin").read_bytes() == CONTENT
    assert "payload.bin" in capsys.readouterr().out


def test_cli_fetch_list_and_errors(capsys):
    assert main(["fetch", "--list"]) == 0
    listing = capsys.readouterr().out
    for name in ("ucsc_hg19_fa", "ensembl_grch37_75", "epdnew_hs006_hg38", "ucsc_hg38_to_hg19",
                 "deepsea_bundle", "deepsea_bundle_zenodo", "deepsea_feature_names", "deepsea_pos_bed",
                 "toy"):
        assert name in listing
    assert main(["fetch", "no_such_source"]) == 1
    assert "ucsc_hg19_fa" in capsys.readouterr().err
    assert main(["fetch"]) == 2
    assert "--list" in capsys.readouterr().err

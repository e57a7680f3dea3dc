"""`dnabird fetch NAME [--dest DIR]` and `dnabird fetch --list`: download (or generate) a data source."""

from __future__ import annotations

import argparse
import sys

from dnabird.commands import add_command
from dnabird.data.fetch import DATA_ENV, data_root, fetch
from dnabird.data.manifests import load_manifest, shipped_manifest_paths


def run(args: argparse.Namespace) -> int:
    if args.list:
        for path in shipped_manifest_paths():
            manifest = load_manifest(path)
            print(f"{manifest.name:<26} {manifest.build:<8} {manifest.format:<8} {manifest.description}")
        return 0
    if args.name is None:
        print("dnabird fetch: give a source NAME (see --list) or a manifest path", file=sys.stderr)
        return 2
    outputs = fetch(args.name, args.dest)
    for key, path in outputs.items():
        print(f"{key}: {path}")
    return 0


def register(subparsers) -> None:
    parser = add_command(
        subparsers, "fetch", run, help="download or generate a data source described by a manifest",
        description=f"Download (or generate) a data source and verify it. Without --dest, files go to "
                    f"${DATA_ENV}/NAME (now {data_root()}/NAME).")
    parser.add_argument("name", nargs="?", help="shipped manifest name (see --list) or a manifest path")
    parser.add_argument("--dest", help="folder that receives the files")
    parser.add_argument("--list", action="store_true", help="list the shipped manifests")

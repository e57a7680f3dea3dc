"""Atomic writers of tables that arrive chunk by chunk (a long run's parts, in order, one in memory at a
time): tab-separated text, parquet (pyarrow) and HDF5 (datasets that grow by rows). Each file appears
complete under its name or not at all (`dnabird.io.atomic_output`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import h5py
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dnabird.io import atomic_output

TABLE_FORMATS = ("tsv", "parquet")


def write_tsv_tables(tables: Iterable[pd.DataFrame], path: str | os.PathLike, **options) -> None:
    """The rows of `tables`, tab-separated, under the header of the first (`options`: of `DataFrame.to_csv`)."""
    with atomic_output(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        for n, table in enumerate(tables):
            table.to_csv(handle, sep="\t", index=False, header=n == 0, **options)


def write_parquet_tables(tables: Iterable[pd.DataFrame], path: str | os.PathLike) -> None:
    """The rows of `tables` as one parquet file (one row group per table), typed by the first table's
    columns (a later table's columns are cast to them; text columns of an empty first table are strings)."""
    schema = writer = None
    with atomic_output(path) as tmp:
        try:
            for table in tables:
                if schema is None:
                    found = pa.Schema.from_pandas(table, preserve_index=False)
                    schema = pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in found],
                                       metadata=found.metadata)
                    writer = pq.ParquetWriter(tmp, schema)
                writer.write_table(pa.Table.from_pandas(table, schema=schema, preserve_index=False))
        finally:
            if writer is not None:
                writer.close()


def write_table(tables: Iterable[pd.DataFrame], path: str | os.PathLike, format: str, **tsv_options) -> None:
    """`tables` written as `format`: "tsv" (`write_tsv_tables`, with `tsv_options`) or "parquet"."""
    if format == "parquet":
        write_parquet_tables(tables, path)
    else:
        write_tsv_tables(tables, path, **tsv_options)


@contextmanager
def hdf5_output(path: str | os.PathLike, settings: dict) -> Iterator[h5py.File]:
    """An HDF5 file written atomically; `settings` is added last, as a JSON attribute."""
    with atomic_output(path) as tmp, h5py.File(tmp, "w") as out:
        yield out
        out.attrs["settings"] = json.dumps(settings, sort_keys=True)


def string_dataset(out: h5py.Group, name: str, values: Sequence[str]) -> None:
    """`values` as a variable-length string dataset `name` of `out`."""
    out.create_dataset(name, data=np.array(values, dtype=object), dtype=h5py.string_dtype())


def append_rows(out: h5py.File, name: str, values: np.ndarray) -> None:
    """Rows `values` added to the resizable dataset `name` (created on first use; strings variable-length)."""
    if name not in out:
        dtype = h5py.string_dtype() if values.dtype == object else values.dtype
        out.create_dataset(name, shape=(0, *values.shape[1:]), maxshape=(None, *values.shape[1:]), dtype=dtype,
                           chunks=True)
    dataset = out[name]
    if len(values):
        dataset.resize(len(dataset) + len(values), axis=0)
        dataset[-len(values):] = values

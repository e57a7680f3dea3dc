"""`Predictions`: a head's outputs, one row per predicted input (its coordinates or id and flags) and one
column per output in the user's scale, with the inputs that could not be predicted and why."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

# the columns each input kind's rows have, with their types (the outputs follow, one float column each)
ROW_COLUMNS = {
    "sequences": {"row": "int64", "id": "str", "length": "int64", "n_bases": "int64", "unk_tokens": "int64"},
    "regions": {"row": "int64", "name": "str", "chrom": "str", "start": "int64", "end": "int64", "strand": "str",
                "window_start": "int64", "window_end": "int64", "window_strand": "str", "pad_left": "bool",
                "pad_right": "bool", "n_bases": "int64", "unk_tokens": "int64"},
    "tiles": {"row": "int64", "chrom": "str", "start": "int64", "end": "int64", "strand": "str",
              "pad_left": "bool", "pad_right": "bool", "n_bases": "int64", "unk_tokens": "int64"},
}
UNPREDICTED_COLUMNS = {"row": "int64", "name": "str", "reason": "str", "detail": "str"}


def typed_frame(rows: list[tuple], columns: dict[str, str]) -> pd.DataFrame:
    """`rows` as a DataFrame with `columns`' types (strings as object), also when there are none."""
    frame = pd.DataFrame(rows, columns=list(columns))
    return frame.astype({c: object if t == "str" else t for c, t in columns.items()})


@dataclasses.dataclass
class Predictions:
    """rows: one per predicted input (`ROW_COLUMNS` of `kind`); values [rows, outputs] float64 in `scale`
    ("probability" or a regression head's "target" scale); unpredicted: inputs not predicted, with `reason`
    and `detail`; settings: how they were made."""

    kind: str
    rows: pd.DataFrame
    outputs: tuple[str, ...]
    values: np.ndarray
    unpredicted: pd.DataFrame
    scale: str
    settings: dict = dataclasses.field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """The rows with one column per output."""
        values = pd.DataFrame(self.values, columns=list(self.outputs), index=self.rows.index)
        return pd.concat([self.rows, values], axis=1)

    def summary(self) -> dict:
        """Counts: predicted and unpredicted rows (by reason), windows padded past a contig end, windows
        holding N, windows reading unk tokens."""
        rows = self.rows
        padded = int((rows["pad_left"] | rows["pad_right"]).sum()) if "pad_left" in rows else 0
        return {"predicted": len(rows), "unpredicted": len(self.unpredicted), "padded_windows": padded,
                "windows_with_n": int((rows["n_bases"] > 0).sum()), "unk_windows": int((rows["unk_tokens"] > 0).sum()),
                "unpredicted_by_reason": {str(k): int(v) for k, v in
                                          sorted(self.unpredicted["reason"].value_counts().items())}}

    @classmethod
    def concat(cls, parts: list[Predictions]) -> Predictions:
        """Parts of one run (e.g. torchrun ranks' rows) merged in input order (`row`)."""
        first = parts[0]
        rows = pd.concat([p.rows for p in parts], ignore_index=True)
        order = np.argsort(rows["row"].to_numpy(), kind="stable")
        values = np.concatenate([p.values for p in parts])[order]
        unpredicted = pd.concat([p.unpredicted for p in parts], ignore_index=True)
        unpredicted = unpredicted.iloc[np.argsort(unpredicted["row"].to_numpy(), kind="stable")]
        return cls(first.kind, rows.iloc[order].reset_index(drop=True), first.outputs, values,
                   unpredicted.reset_index(drop=True), first.scale, first.settings)

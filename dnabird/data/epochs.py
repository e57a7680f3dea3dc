"""The epoch order of an endless, index-addressed example stream (pretraining and fine-tuning examples)."""

from __future__ import annotations

import numpy as np
import torch


class EpochOrder(torch.utils.data.Dataset):
    """`len(self)` = N slots per epoch, which epoch `e` visits in `order(e)`: 0 … N-1, or with `shuffle` a
    permutation drawn from (seed, e), cached for the latest epoch. Subclasses set `seed` (and `shuffle`)."""

    seed: int = 0
    shuffle: bool = True
    _order_cache: tuple[int, np.ndarray] | None = None

    def order(self, epoch: int) -> np.ndarray:
        """The slots in the order epoch `epoch` visits them."""
        if not self.shuffle:
            return np.arange(len(self))
        if self._order_cache is None or self._order_cache[0] != epoch:
            self._order_cache = (epoch, self.permutation(epoch))
        return self._order_cache[1]

    def permutation(self, epoch: int) -> np.ndarray:
        """Epoch `epoch`'s shuffled order, drawn from (seed, epoch)."""
        return np.random.default_rng((self.seed, epoch)).permutation(len(self))

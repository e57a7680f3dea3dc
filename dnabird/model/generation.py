"""Greedy and beam-search generation for an `EncoderDecoder`, with or without the decoder's KV cache.

The encoder runs once. With the cache (`use_cache=True`, the default) each step feeds the decoder only the
newest token, against the keys and values it kept (`DecoderCache`): generation is linear in the output
length. Without it each step runs the decoder over the whole prefix again (the reference the cache is
tested and benchmarked against).

Beam search follows Hugging Face's (transformers 5, `early_stopping=False`): each step keeps the 2 × beams
best continuations by summed log-probability; of those among the top `num_beams` that end (the end token,
or the length limit), each is offered to the finished list with score sum / length ** length_penalty
(length: generated tokens, the end token included), the `num_beams` best kept; the other continuations
carry on. An example stops once its best running beam, normalised at its current length, cannot beat
its worst finished hypothesis; the search stops when every example has.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from dnabird.errors import check_positive_ints

EXCLUDED = -1.0e9  # the score of a continuation that may not be chosen (as Hugging Face's)


@dataclass(frozen=True)
class GenerationSettings:
    """num_beams: 1 for greedy decoding; length_penalty: beam scores are divided by length ** length_penalty;
    max_length: tokens generated at most (the end token included, the start token not); use_cache: keep the
    decoder's keys and values between steps."""

    num_beams: int = 1
    length_penalty: float = 1.0
    max_length: int = 128
    use_cache: bool = True

    def __post_init__(self):
        check_positive_ints(self, ("num_beams", "max_length"))


class _Stepper:
    """Feeds the decoder one step at a time: the newest token against the cache, or the whole prefix."""

    def __init__(self, model, encoder_hidden, encoder_mask, settings: GenerationSettings):
        self.model, self.hidden, self.mask = model, encoder_hidden, encoder_mask
        self.cache = model.decoder.new_cache(encoder_hidden, encoder_mask, settings.max_length) \
            if settings.use_cache else None

    def logits(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token logits [rows, V] after `tokens` [rows, t] (the start token first)."""
        if self.cache is not None:
            return self.model.decode(tokens[:, -1:], None, None, self.cache)[:, -1].float()
        return self.model.decode(tokens, self.hidden, self.mask)[:, -1].float()

    def keep(self, rows: torch.Tensor) -> None:
        """Continue from rows `rows` (beam search's surviving beams)."""
        if self.cache is not None:
            self.cache.reorder(rows)


def _cut(tokens: torch.Tensor, eos: int) -> list[list[int]]:
    """Each row up to and including its first end token."""
    return [row[:row.index(eos) + 1] if eos in row else row for row in tokens.tolist()]


@torch.no_grad()
def generate(model, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, *,
             global_attention_mask: torch.Tensor | None = None,
             settings: GenerationSettings = GenerationSettings()) -> list[list[int]]:
    """The generated tokens of each input (without the start token; ending with the end token unless the
    length limit came first), greedy or by beam search (`settings`)."""
    model.eval()
    hidden = model.encode(input_ids, attention_mask, global_attention_mask=global_attention_mask)
    mask = None if attention_mask is None else attention_mask.bool()
    if settings.num_beams == 1:
        return _greedy(model, hidden, mask, settings)
    return _beam_search(model, hidden, mask, settings)


def _greedy(model, hidden, mask, settings: GenerationSettings) -> list[list[int]]:
    config = model.config
    batch = hidden.shape[0]
    tokens = torch.full((batch, 1), config.decoder_start_token_id, dtype=torch.long, device=hidden.device)
    done = torch.zeros(batch, dtype=torch.bool, device=hidden.device)
    stepper = _Stepper(model, hidden, mask, settings)
    for _ in range(settings.max_length):
        chosen = stepper.logits(tokens).argmax(-1).masked_fill(done, config.eos_token_id)  # [B]
        tokens = torch.cat([tokens, chosen[:, None]], dim=1)
        done |= chosen == config.eos_token_id
        if bool(done.all()):
            break
    return _cut(tokens[:, 1:], config.eos_token_id)


def _beam_search(model, hidden, mask, settings: GenerationSettings) -> list[list[int]]:
    config, beams, limit = model.config, settings.num_beams, settings.max_length
    batch, device = hidden.shape[0], hidden.device
    hidden = hidden.repeat_interleave(beams, dim=0)  # [B·nb, S, H]
    mask = None if mask is None else mask.repeat_interleave(beams, dim=0)
    stepper = _Stepper(model, hidden, mask, settings)
    keep = 2 * beams
    top_ranks = torch.arange(keep, device=device) < beams  # candidates that may finish a hypothesis
    running = torch.full((batch, beams, 1), config.decoder_start_token_id, dtype=torch.long, device=device)
    running_scores = torch.zeros(batch, beams, device=device)
    running_scores[:, 1:] = EXCLUDED  # one live beam at first, so the first step does not repeat itself
    finished = torch.full((batch, beams, limit + 1), config.eos_token_id, dtype=torch.long, device=device)
    finished_scores = torch.full((batch, beams), EXCLUDED, device=device)
    is_finished = torch.zeros(batch, beams, dtype=torch.bool, device=device)
    improvable = torch.ones(batch, 1, dtype=torch.bool, device=device)
    offsets = torch.arange(batch, device=device)[:, None] * beams
    for step in range(limit):
        length = step + 1  # tokens generated once this step's token is added
        log_probs = F.log_softmax(stepper.logits(running.flatten(0, 1)), dim=-1)  # [B·nb, V]
        vocab = log_probs.shape[-1]
        totals = (log_probs.view(batch, beams, vocab) + running_scores[..., None]).view(batch, -1)
        scores, index = totals.topk(keep, dim=-1)  # [B, 2nb]
        source, token = index // vocab, index % vocab
        candidates = torch.cat([running.gather(1, source[..., None].expand(-1, -1, running.shape[2])),
                                token[..., None]], dim=2)  # [B, 2nb, 1 + length]
        ends = (token == config.eos_token_id) | (length == limit)
        # the beams that go on: the best continuations that do not end
        live_scores = scores + ends.float() * EXCLUDED
        chosen = live_scores.topk(beams, dim=-1).indices  # [B, nb]
        running = candidates.gather(1, chosen[..., None].expand(-1, -1, candidates.shape[2]))
        running_scores = live_scores.gather(1, chosen)
        # the hypotheses that end here, length-normalised, merged with those kept so far
        offered = scores / length ** settings.length_penalty
        offered = offered + (~improvable).float() * EXCLUDED + (~(ends & top_ranks)).float() * EXCLUDED
        padded = torch.nn.functional.pad(candidates, (0, limit - length), value=config.eos_token_id)
        merged_scores = torch.cat([finished_scores, offered], dim=1)
        best = merged_scores.topk(beams, dim=-1).indices
        finished = torch.cat([finished, padded], dim=1).gather(1, best[..., None].expand(-1, -1, limit + 1))
        finished_scores = merged_scores.gather(1, best)
        is_finished = torch.cat([is_finished, ends & top_ranks], dim=1).gather(1, best)
        stepper.keep((source.gather(1, chosen) + offsets).flatten())
        best_possible = running_scores[:, :1] / length ** settings.length_penalty
        worst_kept = torch.where(is_finished, finished_scores.min(dim=1, keepdim=True).values,
                                 torch.full_like(finished_scores, EXCLUDED))
        improvable = improvable & (best_possible > worst_kept).any(dim=-1, keepdim=True)
        if not bool(improvable.any()) or bool(ends.all()):
            break
    return _cut(finished[:, 0, 1:], config.eos_token_id)

"""Shared-pass masked marginals: several variants of one window scored from one forward pass.

The exact `mlm_llr` (`dnabird.variants.mlm`) masks one variant's span in a window centred on it: one or two
passes per variant and strand. Here nearby variants share a window instead, as ESM-1v's masked marginals and
GPN score many positions from one masked input: the window's REF sequence is masked at every member's span
(spans disjoint and at least `spacing_bp` apart) and one pass gives each member log P(REF tokens) and
log P(ALT tokens) over its own span. A member whose ALT spans another number of tokens than its REF is read
from one second row, in which every such member's span holds its ALT token count; a member whose ALT
retokenizes the window beyond its span, or whose span comes too close to another's, is scored by the exact
method. A group of one keeps the exact rows, so its scores are the exact method's.

Grouping (first fit, in input order): a variant joins the first open group on its chromosome that has fewer
than `variants_per_pass` members, whose members' alleles all lie `spacing_bp` or more from its own, and whose
centres stay within `CENTRE_SPREAD` (three quarters) of a window of it; the group's window has the exact
method's length, centred between its outermost members, so every member keeps at least an eighth of the
window on each side. Only whole, unpadded forward windows are grouped (a window padded at a contig end or
clipped at an N run stays exact). Groups form within the records `score_windows` gathers before running
the model (`CHUNK_BATCHES` batches per variant of a pass), so a sorted VCF groups best.

What differs from the exact scores: each member sees the other members' spans masked and sits up to 3/8 of a
window off-centre. docs/variant-scoring.md gives the measured agreement.
"""

from __future__ import annotations

import dataclasses

from dnabird.variants.mlm import MaskedSpan, masked_spans
from dnabird.variants.windows import AlleleWindows

VARIANTS_PER_PASS = 16  # default members of one shared pass (1: the exact method)
SPACING_BP = 100  # default least bp between two masked spans of one pass
CENTRE_SPREAD = 0.75  # member centres lie within this fraction of a window of each other


@dataclasses.dataclass(frozen=True)
class Member:
    """One allele's part of a shared window on one strand: its spans and the token ids they mask."""

    spans: tuple[MaskedSpan, MaskedSpan]  # REF and ALT token ranges (`masked_spans`)
    ref_ids: tuple[int, ...]  # the REF tokens under its span
    alt_ids: tuple[int, ...]  # the ALT tokens under its span
    low: int  # the REF span's bp extent in the window
    high: int


def group_windows(windows: list[AlleleWindows | None], chroms: list[str], variants_per_pass: int,
                  spacing_bp: int) -> list[list[int]]:
    """Indices of `windows` in groups that may share a pass (see the module docstring); `None` (a window
    that may not be grouped) and a window that joins no group are groups of one."""
    groups: list[list[int]] = []
    open_groups: list[list[int]] = []
    for n, w in enumerate(windows):
        if w is None:
            groups.append([n])
            continue
        for group in open_groups:
            if chroms[group[0]] == chroms[n] and all(_fits(windows[m], w, spacing_bp) for m in group):
                group.append(n)
                break
        else:
            open_groups.append([n])
            groups.append(open_groups[-1])
        open_groups = [g for g in open_groups if chroms[g[0]] == chroms[n] and len(g) < variants_per_pass]
    return groups


def _fits(a: AlleleWindows, b: AlleleWindows, spacing_bp: int) -> bool:
    """Whether two variants may share a window: centres `CENTRE_SPREAD` of a window or less apart, alleles
    `spacing_bp` or more apart."""
    a_first, b_first = a.start + a.ref_at, b.start + b.ref_at
    gap = max(b_first - (a_first + a.ref_length), a_first - (b_first + b.ref_length))
    return abs(a.start - b.start) <= int(len(a.ref) * CENTRE_SPREAD) and gap >= spacing_bp


def shared_window(members: list[AlleleWindows]) -> tuple[str, int]:
    """The REF sequence and genomic start of the window centred between the outermost members, spliced from
    their own windows (which cover it: their starts lie within a window). It has the members' length,
    one bp more when the outermost centres lie an odd distance apart (so a window and its mirror image on
    the reverse-complemented genome are placed alike)."""
    first, last = min(members, key=lambda w: w.start), max(members, key=lambda w: w.start)
    distance = last.start - first.start
    covered = first.ref + last.ref[len(first.ref) - distance:]
    return covered[distance // 2:distance // 2 + len(first.ref) + distance % 2], first.start + distance // 2


def place(member: AlleleWindows, sequence: str, start: int) -> AlleleWindows:
    """`member`'s allele in the forward window `sequence` that begins at genomic `start`."""
    at = member.start + member.ref_at - start
    allele = member.alt[member.alt_at:member.alt_at + member.alt_length]
    return dataclasses.replace(member, ref=sequence, alt=sequence[:at] + allele + sequence[at + member.ref_length:],
                               ref_at=at, alt_at=at, start=start, end=start + len(sequence), clip_left=0,
                               clip_right=0)


def strand_members(tokenizer, ref_ids: list[int], windows: list[AlleleWindows], flank_bp: int) -> list[Member | None]:
    """Each allele's `Member` in one strand's shared window (`windows`: every allele placed in it, REF
    tokens `ref_ids`), or None where its ALT changes the window's tokens outside its span."""
    ref_offsets = tokenizer.offsets(windows[0].ref)
    members = []
    for w in windows:
        alt_ids = tokenizer.encode(w.alt)
        ref_span, alt_span = masked_spans(w, ref_offsets, tokenizer.offsets(w.alt), flank_bp)
        same_context = ref_ids[:ref_span.first] == alt_ids[:alt_span.first] \
            and ref_ids[ref_span.stop:] == alt_ids[alt_span.stop:]
        members.append(Member((ref_span, alt_span), tuple(ref_ids[ref_span.first:ref_span.stop]),
                              tuple(alt_ids[alt_span.first:alt_span.stop]), ref_offsets[ref_span.first][0],
                              ref_offsets[ref_span.stop - 1][1]) if same_context else None)
    return members


def spaced(members: list[Member | None], spacing_bp: int) -> list[bool]:
    """Which members keep their place: present, and (in bp order) `spacing_bp` or more after the last kept."""
    keep, last = [False] * len(members), None
    for n in sorted((n for n, m in enumerate(members) if m is not None), key=lambda n: members[n].low):
        if last is None or members[n].low - last >= spacing_bp:
            keep[n], last = True, members[n].high
    return keep


def shared_rows(ref_ids: list[int], members: list[Member], mask_id: int) -> tuple[list[list], list[list]]:
    """Per member: its rows (the REF row with every span masked, and the row with ALT token counts where
    its ALT needs one) and its target sets per row ([REF, ALT] from one row, or [REF], [ALT])."""
    order = sorted(range(len(members)), key=lambda n: members[n].spans[0].first)
    needs_alt_row = [len(m.alt_ids) != len(m.ref_ids) for m in members]
    rows, at = [], []  # the two rows, and each member's span start in them
    for use_alt in (False, True):
        if use_alt and not any(needs_alt_row):
            break
        row, starts, previous = [], [0] * len(members), 0
        for n in order:
            span, count = members[n].spans[0], len(members[n].alt_ids if use_alt and needs_alt_row[n]
                                                   else members[n].ref_ids)
            row += ref_ids[previous:span.first]
            starts[n] = len(row)
            row += [mask_id] * count
            previous = span.stop
        rows.append(row + ref_ids[previous:])
        at.append(starts)
    result_rows, result_targets = [], []
    for n, m in enumerate(members):
        ref = dict(zip(range(at[0][n], at[0][n] + len(m.ref_ids)), m.ref_ids, strict=True))
        if needs_alt_row[n]:
            alt = dict(zip(range(at[1][n], at[1][n] + len(m.alt_ids)), m.alt_ids, strict=True))
            result_rows.append([rows[0], rows[1]])
            result_targets.append([[ref], [alt]])
        else:
            alt = dict(zip(range(at[0][n], at[0][n] + len(m.alt_ids)), m.alt_ids, strict=True))
            result_rows.append([rows[0]])
            result_targets.append([[ref, alt]])
    return result_rows, result_targets


def share_passes(pending: list[tuple], tokenizer, eval_length: int, rc: bool, flank_bp: int,
                 variants_per_pass: int, spacing_bp: int) -> list[tuple]:
    """`pending` [(ScoredWindow, (rows, targets, bp)) …] (exact `LLRScorer` rows) with the windows of each group
    scored from shared rows: the same list where a group formed, each member's window replaced by the shared
    one and its rows by the shared rows (the same row objects for every member, run once by `run_windows`)."""
    windows = [w.sequences if _groupable(w.sequences) else None for w, _ in pending]
    chroms = [w.allele.variant.chrom for w, _ in pending]
    result = list(pending)
    for group in group_windows(windows, chroms, variants_per_pass, spacing_bp):
        while len(group) > 1:  # members dropped (retokenized, too close) leave the others to try again
            kept = _share(group, [windows[n] for n in group], tokenizer, eval_length, rc, flank_bp, spacing_bp)
            if kept is None:
                break
            if len(kept[0]) == len(group):
                for n, shared in zip(group, kept[1], strict=True):
                    result[n] = (dataclasses.replace(pending[n][0], sequences=shared[0]), shared[1])
                break
            group = kept[0]
    return result


def _share(group: list[int], members: list[AlleleWindows], tokenizer, eval_length: int, rc: bool,
           flank_bp: int, spacing_bp: int):
    """(group, [(forward shared windows, (rows, targets, bp)) per member]) when every member keeps its place
    on every strand, else (the members that do, None); None when the shared window is too long."""
    sequence, start = shared_window(members)
    placed = [place(m, sequence, start) for m in members]
    strands = [placed] + ([[w.reverse_complement() for w in placed]] if rc else [])
    per_strand, keep = [], [True] * len(members)
    for windows in strands:
        ref_ids = tokenizer.encode(windows[0].ref)
        if len(ref_ids) + 2 > eval_length:
            return None
        found = strand_members(tokenizer, ref_ids, windows, flank_bp)
        keep = [k and s for k, s in zip(keep, spaced(found, spacing_bp), strict=True)]
        per_strand.append((ref_ids, found))
    if not all(keep):
        return [n for n, k in zip(group, keep, strict=True) if k], None
    rows = [[] for _ in members]
    targets = [[] for _ in members]
    bp = [[] for _ in members]
    for ref_ids, found in per_strand:
        strand_rows, strand_targets = shared_rows(ref_ids, found, tokenizer.mask_id)
        if max(len(row) for member_rows in strand_rows for row in member_rows) + 2 > eval_length:  # ALT counts
            return None
        for n, m in enumerate(found):
            rows[n] += strand_rows[n]
            targets[n] += strand_targets[n]
            bp[n].append((m.spans[0].bp, m.spans[1].bp))
    return group, [(placed[n], (rows[n], targets[n], bp[n])) for n in range(len(members))]


def _groupable(w: AlleleWindows) -> bool:
    """A whole forward window, neither padded at a contig end nor clipped."""
    return w.strand == "+" and not (w.pad_left or w.pad_right or w.clip_left or w.clip_right)


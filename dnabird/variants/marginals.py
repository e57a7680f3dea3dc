"""Shared-pass masked marginals: several variants of one window scored from one forward pass.

The exact `mlm_llr` (`dnabird.variants.mlm`) masks one variant's span in a window centred on it: one or two
passes per variant and strand. Here nearby variants share a window instead, as ESM-1v's masked marginals and
GPN score many positions from one masked input: the window's REF sequence is masked at every member's span
(spans disjoint and at least `spacing_bp` apart) and one pass gives each member log P(REF tokens) and
log P(ALT tokens) over its own span. A member whose ALT spans another number of tokens than its REF is read
from one second row, in which every such member's span holds its ALT token count; a member whose ALT
retokenizes the window beyond its span, or whose span comes too close to another's, is scored by the exact
method. A group of one keeps the exact rows, so its scores are the exact method's.

Grouping (`Groups`, from the variants' positions alone): the input's alleles whose centred windows lie whole
inside their contig (and whose REF the genome holds) are taken outwards from the contig's centre, each half of
the contig on its own, so that the reverse-complemented contig (its halves swapped, each read in the same
outward order) groups alike; each joins the first open group of its half that has fewer than
`variants_per_pass` members, whose members' alleles all lie `spacing_bp` or more from its own, and whose first
member's centre lies within `CENTRE_SPREAD` (three quarters) of a window of its own, else opens a group. The
group's window has the exact method's length, centred between its outermost members, so every member keeps
at least an eighth of the window on each side. A group depends only on which variants the whole input holds,
never on their order, on the chunk or process that scores a member (a group split between chunks is run in
each, for its members there), or on the strand of the FASTA (for variants at distinct positions).

What differs from the exact scores: each member sees the other members' spans masked and sits up to 3/8 of a
window off-centre. docs/variant-scoring.md gives the measured agreement.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable

from dnabird.errors import InputFormatError
from dnabird.genome.reference import Genome
from dnabird.variants.mlm import MaskedSpan, masked_spans
from dnabird.variants.records import Allele, Variant
from dnabird.variants.windows import AlleleWindows, centred_windows

VARIANTS_PER_PASS = 16  # default members of one shared pass (1: the exact method)
SPACING_BP = 100  # default least bp between two masked spans of one pass
CENTRE_SPREAD = 0.75  # member centres lie within this fraction of a window of each other


class Groups:
    """The shared-pass groups of an input's alleles (module docstring): `group_of` (record, allele) → a group
    key, and each group's `members` as compact records (offset from the contig's centre, first, stop, record,
    allele, REF, ALT): an input's candidates are held in memory while the groups form, a few hundred bytes
    each."""

    def __init__(self, alleles: Iterable[Allele], genome: Genome, window_bp: int, variants_per_pass: int,
                 spacing_bp: int, check_ref: bool = True):
        self.genome, self.window_bp = genome, window_bp
        spread = 2 * int(window_bp * CENTRE_SPREAD)  # in doubled bp, as the offsets below
        sides: dict[tuple[str, int], list[tuple]] = defaultdict(list)
        for allele in alleles:
            placed = self._placed(allele, check_ref)
            if placed is not None:
                chrom, first, stop = placed
                offset = first + stop - genome.length(chrom)  # twice the allele's centre − the contig's centre
                v = allele.variant
                sides[chrom, (offset > 0) - (offset < 0)].append((abs(offset), first, stop, allele.record,
                                                                  allele.allele, v.ref, v.alt))
        self.group_of: dict[tuple[int, int], tuple[str, int, int]] = {}
        self.members: dict[tuple[str, int, int], list[tuple]] = {}
        for (chrom, side), found in sides.items():
            found.sort(key=lambda c: (*c[:3], *c[5:]))  # outwards from the centre
            groups: list[list[tuple]] = []
            open_groups: list[list[tuple]] = []
            for candidate in found:  # the first open group it fits, else a group of its own
                open_groups = [g for g in open_groups if candidate[0] - g[0][0] <= spread]
                for group in open_groups:
                    if all(_fits(member, candidate, spacing_bp) for member in group):
                        group.append(candidate)
                        break
                else:
                    groups.append([candidate])
                    open_groups.append(groups[-1])
                open_groups = [g for g in open_groups if len(g) < variants_per_pass]
            for n, group in enumerate(g for g in groups if len(g) > 1):
                key = (chrom, side, n)
                self.members[key] = group
                self.group_of.update({(c[3], c[4]): key for c in group})

    def _placed(self, allele: Allele, check_ref: bool) -> tuple[str, int, int] | None:
        """(chrom, first, stop) of an allele whose centred REF and ALT windows lie inside its contig (and
        whose REF the genome holds, with `check_ref`); None for one scored alone."""
        v = allele.variant
        if allele.problem is not None or v.chrom not in self.genome:
            return None
        chrom, first, stop = self.genome.resolve(v.chrom), v.start, v.start + len(v.ref)
        size, length = self.window_bp, self.genome.length(chrom)
        left_ref, left_alt = size // 2 - len(v.ref) // 2, size // 2 - len(v.alt) // 2
        right_alt = size - left_alt - len(v.alt)
        if min(left_ref, left_alt, size - left_ref - len(v.ref), right_alt) < 0 \
                or min(first - left_ref, first - left_alt) < 0 \
                or max(first - left_ref + size, stop + right_alt) > length:
            return None
        try:
            if check_ref and self.genome.fetch(chrom, first, stop).sequence.upper() != v.ref.upper():
                return None
        except InputFormatError:
            return None
        return chrom, first, stop

    def windows(self, key: tuple[str, int, int]) -> list[AlleleWindows]:
        """The exact (centred, forward) windows of a group's members."""
        return [centred_windows(self.genome, Variant(key[0], first + 1, ref, alt), self.window_bp)
                for _, first, _, _, _, ref, alt in self.members[key]]


def _fits(member: tuple, candidate: tuple, spacing_bp: int) -> bool:
    """Whether two alleles (offset, first, stop, …) lie `spacing_bp` or more apart."""
    return max(candidate[1] - member[2], member[1] - candidate[2]) >= spacing_bp


def _apart(found: list[tuple[int, int, Allele]], spacing_bp: int) -> list[bool]:
    """Whether each allele [first, stop) lies `spacing_bp` or more from every other one."""
    order = sorted(range(len(found)), key=lambda n: found[n][0])
    ok = [True] * len(found)
    last_stop = None
    for n in order:  # closer than the spacing to an allele that starts before it (or with it)
        if last_stop is not None and found[n][0] - last_stop < spacing_bp:
            ok[n] = False
        last_stop = found[n][1] if last_stop is None else max(last_stop, found[n][1])
    next_first = None
    for n in reversed(order):  # … or to one that starts after it (or with it)
        if next_first is not None and next_first - found[n][1] < spacing_bp:
            ok[n] = False
        next_first = found[n][0] if next_first is None else min(next_first, found[n][0])
    return ok

@dataclasses.dataclass(frozen=True)
class Member:
    """One allele's part of a shared window on one strand: its spans and the token ids they mask."""

    spans: tuple[MaskedSpan, MaskedSpan]  # REF and ALT token ranges (`masked_spans`)
    ref_ids: tuple[int, ...]  # the REF tokens under its span
    alt_ids: tuple[int, ...]  # the ALT tokens under its span
    low: int  # the REF span's bp extent in the window
    high: int


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
    """Which members keep their place: present, and `spacing_bp` or more from every other present one (in a
    window's bp, after their spans grew to token boundaries)."""
    present = [n for n, m in enumerate(members) if m is not None]
    found = _apart([(members[n].low, members[n].high, None) for n in present], spacing_bp)
    keep = [False] * len(members)
    for n, ok in zip(present, found, strict=True):
        keep[n] = ok
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


def share_passes(pending: list[tuple], groups: Groups, tokenizer, eval_length: int, rc: bool, flank_bp: int,
                 spacing_bp: int) -> dict[int, tuple]:
    """For `pending` [(ScoredWindow, rows) …] (exact `LLRScorer` rows), the group members' replacements:
    index → (the window with its group's shared window, (rows, targets, bp)), the shared rows being the same
    objects for every member (run once by `run_windows`). A group is formed from all its members, whichever
    of them `pending` holds."""
    present: dict[tuple, list[int]] = defaultdict(list)
    for n, (window, _) in enumerate(pending):
        key = groups.group_of.get((window.allele.record, window.allele.allele))
        if key is not None:
            present[key].append(n)
    result = {}
    for key, found in present.items():
        members, windows = groups.members[key], groups.windows(key)
        group = list(range(len(members)))
        while len(group) > 1:  # members dropped (retokenized, too close) leave the others to try again
            kept = _share(group, [windows[n] for n in group], tokenizer, eval_length, rc, flank_bp, spacing_bp)
            if kept is None:
                break
            if len(kept[0]) == len(group):
                shared = {members[n][3:5]: s for n, s in zip(group, kept[1], strict=True)}
                for n in found:
                    window = pending[n][0]
                    if (window.allele.record, window.allele.allele) in shared:
                        sequences, rows = shared[window.allele.record, window.allele.allele]
                        result[n] = (dataclasses.replace(window, sequences=sequences), rows)
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
        try:
            ref_ids = tokenizer.encode(windows[0].ref)
            found = strand_members(tokenizer, ref_ids, windows, flank_bp)
        except InputFormatError:  # a character the tokenizer refuses: every member scored alone
            return None
        if len(ref_ids) + 2 > eval_length:
            return None
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

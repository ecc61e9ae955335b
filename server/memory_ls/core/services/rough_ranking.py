"""Which of many memories that may match a search to read first: their files' bytes ranked
without parsing them (`RoughRanker`), for a search that cannot wait for the full-text index."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from typing import Any

from memory_ls.core.services.relevance import (
    _NAME_WEIGHT,
    ROUGH_CHUNK,
    Query,
    ScanRanker,
    fold,
    score_of,
)


class RoughRanker:
    """Orders memories by their files' bytes alone (no parse): which of many memories
    that may match to read first. A file may match when it holds each term's key (what
    `ScanRanker` tests first); it is weighed by how often it holds each term as written
    (a phrase with single spaces), BM25 as `ScanRanker`'s, over bytes."""

    def __init__(self, query: Query) -> None:
        self.query = query
        self.keys = query.keys
        # What each term is counted by: its key, or a phrase as usually written (its words
        # may be apart by other signs: only the key is certain).
        self._written = [
            " ".join(part.words) if len(part.words) > 1 else key
            for part, key in zip(query.terms, self.keys, strict=True)
        ]
        self._encoded = [
            (
                key.encode() if key.isascii() else None,
                written.encode() if written.isascii() else None,
            )
            for key, written in zip(self.keys, self._written, strict=True)
        ]
        # A phrase's words all in a name (joined by `_`, `/` or `-`, no spaces there); a
        # term's key is in any name that holds its words (the key is a word's beginning).
        self._name_words = [part.words for part in query.terms]
        self.documents = 0
        self.total_bytes = 0
        self.total_spaces = 0
        self.containing = [0] * len(self.keys)
        self._found: list[tuple[list[int], int, int, Any]] = []

    def add(self, name: str, data: bytes, item: Any) -> None:
        """Count one memory; keep it when it may hold the terms it must."""
        self.documents += 1
        self.total_bytes += len(data)
        self.total_spaces += data.count(b" ") + 1
        folded_name = fold(name)
        if data.isascii():  # most files: folded as bytes, no text made
            lowered = data.lower()
            has = [key is not None and key in lowered for key, _ in self._encoded]
            if not any(has) and not any(key in folded_name for key in self.keys):
                return  # most files, for most words: nothing more to look at
            self._weigh(folded_name, lowered, has, len(data), item)
        else:
            self._weigh_text(folded_name, data, item)

    def add_many(self, entries: Sequence[tuple[str, bytes, Any]]) -> None:
        """`add` of each (name, data, item) in turn, with the same result, at C speed.

        The files are looked at together, ROUGH_CHUNK bytes at a time: joined by a NUL
        (which no term holds, so no term is found across two files), lowered once, and
        each term's key found with `bytes.find`, which skips to the next file at each
        one found. Only the files that hold a key, or whose name does, are looked at
        one by one. At 100,000 memories and a word few hold this is some 5 times less
        than `add` of each (a search while the first indexing runs reads them all).
        """
        start = 0
        while start < len(entries):
            end, size = start, 0
            while end < len(entries) and (size < ROUGH_CHUNK or end == start):
                size += len(entries[end][1]) + 1
                end += 1
            self._add_chunk(entries[start:end])
            start = end

    def _add_chunk(self, entries: Sequence[tuple[str, bytes, Any]]) -> None:
        datas = [data for _name, data, _item in entries]
        joined = b"\0".join(datas)
        if not joined.isascii():  # the files that are not go through `add`, in turn
            run: list[tuple[str, bytes, Any]] = []
            for entry in entries:
                if entry[1].isascii():
                    run.append(entry)
                    continue
                if run:
                    self._add_chunk(run)
                    run = []
                self.add(*entry)
            if run:
                self._add_chunk(run)
            return
        count = len(entries)
        self.documents += count
        self.total_bytes += len(joined) - count + 1
        self.total_spaces += joined.count(b" ") + count
        lowered = joined.lower()
        # Where each file's bytes begin in `joined` (and one past the last).
        starts = list(accumulate((len(data) + 1 for data in datas), initial=0))
        names = "\0".join(name for name, _data, _item in entries)
        folded_names = (
            names.lower()
            if names.isascii()
            else "\0".join(fold(name) for name, _data, _item in entries)
        )
        name_starts = list(
            accumulate((len(name) + 1 for name in folded_names.split("\0")), initial=0)
        )
        holding: set[int] = set()
        for encoded, _written in self._encoded:
            if encoded is not None:
                holding.update(_holders(lowered, encoded, starts))
        for text_key in self.keys:
            holding.update(_holders(folded_names, text_key, name_starts))
        for number in sorted(holding):
            _name, data, item = entries[number]
            folded_name = folded_names[name_starts[number] : name_starts[number + 1] - 1]
            file_lowered = lowered[starts[number] : starts[number + 1] - 1]
            has = [e is not None and e in file_lowered for e, _ in self._encoded]
            self._weigh(folded_name, file_lowered, has, len(data), item)

    def _weigh(
        self, folded_name: str, lowered: bytes, has: list[bool], length: int, item: Any
    ) -> None:
        """Keep an ASCII file (its bytes lowered) holding a key or named by one."""
        in_text = [0 if written is None else lowered.count(written) for _, written in self._encoded]
        self._keep(folded_name, has, in_text, length, item)

    def _weigh_text(self, folded_name: str, data: bytes, item: Any) -> None:
        """Keep a file that is not ASCII when it holds a key or is named by one."""
        folded = fold(data.decode("utf-8", errors="replace"))
        has = [key in folded for key in self.keys]
        in_text = [folded.count(written) for written in self._written]
        self._keep(folded_name, has, in_text, len(data), item)

    def _keep(
        self, folded_name: str, has: list[bool], in_text: list[int], length: int, item: Any
    ) -> None:
        # Once a file for each of 100,000 files that a common word matches: kept lean.
        named = [key in folded_name for key in self.keys]
        present = [h or n for h, n in zip(has, named, strict=True)]
        if not (any(present) if self.query.stemmed else all(present)):
            return
        containing = self.containing
        for number, holds in enumerate(present):
            if holds:
                containing[number] += 1
        if any(named):
            in_name = [
                int(n and all(word in folded_name for word in words))
                for n, words in zip(named, self._name_words, strict=True)
            ]
            weighted = [_NAME_WEIGHT * a + b for a, b in zip(in_name, in_text, strict=True)]
            tier = 2 if all(in_name) else 1 if all(weighted) else 0
        else:  # most files: no term in the name
            weighted = in_text
            tier = 1 if all(weighted) else 0
        self._found.append((weighted, length, tier, item))

    def ordered(self) -> list[Any]:
        """The items that may match, the likeliest best first."""
        average = self.total_bytes / max(self.documents, 1)
        k1, b = ScanRanker.K1, ScanRanker.B
        idf = [max(1e-6, math.log((self.documents - n + 0.5) / (n + 0.5))) for n in self.containing]
        # BM25's length norm, k1 * (1 - b + b * length / average), as base + per * length.
        base, per = k1 * (1 - b), k1 * b / max(average, 1e-9)
        scaled = [i * (k1 + 1) for i in idf]
        scores = []
        for weighted, length, tier, _item in self._found:
            norm = base + per * length
            relevance = 0.0
            for s, w in zip(scaled, weighted, strict=True):
                if w:
                    relevance += s * w / (w + norm)
            scores.append(score_of(tier, relevance))
        found = self._found
        order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
        return [found[number][3] for number in order]


def _holders(joined: bytes | str, key: bytes | str, starts: Sequence[int]) -> Iterator[int]:
    """The numbers of the parts of `joined` (part i begins at starts[i]) holding `key`."""
    find: Callable[..., int] = joined.find
    at = find(key)
    while at >= 0:
        number = bisect_right(starts, at) - 1
        yield number
        at = find(key, starts[number + 1])

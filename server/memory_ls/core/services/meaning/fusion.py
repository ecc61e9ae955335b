"""Reciprocal rank fusion: one ranking from several, by rank alone."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

# Cormack, Clarke and Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and
# individual Rank Learning Methods" (SIGIR 2009): k = 60 damps the weight of the very
# first ranks, and is what Elasticsearch, OpenSearch and Azure AI Search use by default.
RRF_K = 60

Key = TypeVar("Key", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Key]], k: int = RRF_K
) -> list[tuple[Key, float]]:
    """Each key of any ranking with its fused score, best first: the sum over rankings of
    1 / (k + rank), rank counted from 1; ties keep the order in which keys first appear."""
    scores: dict[Key, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    order = {key: number for number, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))

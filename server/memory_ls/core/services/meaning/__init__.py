"""Search by meaning (issue 35, off by default): embeddings of the memories kept beside the
full-text index, fused with its BM25 ranking.

Nothing here is imported unless the project file has a `[search.meaning]` table (the
Store imports it lazily), so a store without it loads no HTTP client, numpy nor model.

- `fusion`: reciprocal rank fusion of rankings (no dependencies);
- `providers`: where embeddings come from: an OpenAI-compatible `/embeddings` endpoint
  (urllib) or an in-process sentence-transformers model (the `meaning` extra);
- `vectors`: the vectors' tables in the search index's SQLite database, and the matrix
  searched by cosine similarity (numpy);
- `engine`: `Meaning`, one per store and settings: the background embedding of what the
  index holds, the nearest memories to a text, its state for answers.

May import the other services (`search`) and what they may; never the Store.
"""

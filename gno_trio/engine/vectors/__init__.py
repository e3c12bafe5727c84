"""Semantic retrieval: embedders, vector storage and search, the embed job.

An embedder turns text into unit-length vectors (the bundled multilingual
model by default, or an OpenAI-compatible endpoint named in ``index.yml``).
Vectors are stored in the index's SQLite file, one row per chunk and model,
and searched in memory with numpy. Chunks embedded by one model are never
compared with vectors of another: a changed model leaves the old rows
behind as stale, and the backlog counts their chunks again.
"""

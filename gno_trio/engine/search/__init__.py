"""Retrieval: the query grammar, BM25 ranking, anchors and snippets, time
filters, the query pipeline and its diagnosis.
"""

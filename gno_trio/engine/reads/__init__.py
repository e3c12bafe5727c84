"""Reading what is indexed: documents by reference, listings, tags, status,
peek and structural diffs.
"""

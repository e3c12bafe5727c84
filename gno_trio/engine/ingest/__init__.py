"""From files on disk to indexed documents: walking, converting, chunking,
frontmatter, sync, collection-root policing, and the writers that create
notes (capture, filing).
"""

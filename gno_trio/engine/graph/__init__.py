"""The link graph: wiki and Markdown links, typed frontmatter edges, paths,
neighbourhoods, the corpus overview and impact walks.
"""

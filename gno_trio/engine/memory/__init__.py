"""Durable, scoped, cited facts kept as Markdown files in memory-managed collections."""

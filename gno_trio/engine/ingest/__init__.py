"""Ingestion: from the files of a collection to indexed, chunked mirrors."""

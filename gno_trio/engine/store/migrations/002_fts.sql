-- Full-text indexes. Documents are ranked at document level; chunks carry
-- their own index so the snippet and line anchor come from the best chunk
-- of a ranked document without running snippet() over whole documents.
-- The tokenizer is substituted from the configuration when the index is
-- created ({tokenize}). Document ranking keeps prefix indexes for
-- 3 and 4 characters: every plain query word is a prefix term.

CREATE VIRTUAL TABLE documents_fts USING fts5 (
    filepath, title, body,
    prefix = '3 4',
    tokenize = '{tokenize}'
);

CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    text,
    content = 'content_chunks',
    content_rowid = 'id',
    tokenize = '{tokenize}'
);

"""Documents that are not plain text: PDF, Word, Excel, PowerPoint, HTML, e-mail and
mailboxes, calendars, subtitles and JSON Lines.

Each format has a converter that turns the file into the canonical Markdown
mirror (headings, lists and tables kept as Markdown, so titles, chunks, line
anchors and links work as on any note). Legacy-encoded text is decoded here
too. Binary formats are parsed by libraries written in C or by large parsers,
so they are converted in worker processes under a time and memory bound
(:mod:`.runner`); a hostile or broken file fails alone, with a reason code
from :mod:`.reasons`.
"""

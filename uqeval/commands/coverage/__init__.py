"""`uqeval coverage`: coverage and width by method and group in memory (``core``) and streamed
(``stream``)."""

"""`uqeval score`: every metric of a file (``core``), its JSON document (``summary``), streamed by
batches (``stream``) and by groups (``groups``)."""

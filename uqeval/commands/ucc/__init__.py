"""`uqeval ucc`: Uncertainty Characteristics Curves in memory (``core``) and streamed (``stream``)."""

"""Every renderer, once: :mod:`.format` (number formatting, flattening, orientation lookup,
Markdown and rich tables) shared by :mod:`.tables` (score), :mod:`.compare`, :mod:`.check`
(JSON, Markdown, JUnit), :mod:`.ucc`, :mod:`.coverage`, :mod:`.recalibrate` and :mod:`.html`;
:mod:`.summary` builds the ``uqeval.score/1`` document. Strings and documents out; the CLI
prints and writes them."""

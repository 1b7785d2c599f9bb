"""Every renderer, once: :mod:`.format` (Markdown and rich tables; numbers by
:func:`uqeval.text.fmt_number`) shared by :mod:`.tables` (score), :mod:`.compare`, :mod:`.check`
(JSON, Markdown, JUnit), :mod:`.ucc`, :mod:`.coverage`, :mod:`.recalibrate`, :mod:`.monitor` and
:mod:`.html`. Strings out; the CLI prints and writes them.

May import everything below the renderers (commands and plots included). Never cli or api."""

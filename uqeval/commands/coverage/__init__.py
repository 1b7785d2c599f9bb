"""`uqeval coverage`: coverage and width by method and group, one fold for every engine: ``core`` has the
entry every front end calls (``run_coverage``, the document), ``stream`` the state (``Cells``) and its run
on the stream and Dask engines."""

"""`uqeval monitor`: windows of a time-ordered stream (``windows``), their anytime-valid tests and the
document (``core``), and Dask partitions of windows (``dask``)."""

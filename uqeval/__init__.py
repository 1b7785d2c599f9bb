"""uqeval: evaluate predictive uncertainty from the command line or Python."""

__version__ = "0.1.0"

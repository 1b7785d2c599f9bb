"""Example files installed with uqeval: ``default.toml`` (settings) and ``ci.toml`` (check rules). Data only:
imports nothing."""

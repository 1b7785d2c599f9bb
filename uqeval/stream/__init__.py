"""Streaming and distributed evaluation: mergeable metric states and the engines that feed them."""

"""Summarizers: the ``Summarizer`` protocol and its implementations."""

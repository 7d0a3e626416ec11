"""Conformance runs of other projects' test cases against the real server."""

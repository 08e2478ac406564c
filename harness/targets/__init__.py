"""Targets: the implementations the harness checks (see ``base`` for the interface)."""

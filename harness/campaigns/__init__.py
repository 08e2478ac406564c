"""Fault and bad-input campaigns: many generated cases against one target, each classified.

``corruption``: damaged stored continuations, classified SAFE to UNSAFE; ``crashes``: a crash
injected at every boundary a target exposes; ``privacy`` and ``isolation``: invariants 8 and 10
over generated trees; ``report``: ``reports/faults.md`` and ``faults.json``.
"""

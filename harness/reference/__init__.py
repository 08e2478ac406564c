"""The reference runtime: the executable specification of nested interrupts.

Round trip: ``naming`` (up), ``routing`` (down), ``continuation`` (store/restore); ``agent`` and
``agent_as_tool`` are the loop that uses them, ``tree`` builds and persists a whole tree.
Sans-IO and deterministic: no files, no clocks, no randomness.
"""

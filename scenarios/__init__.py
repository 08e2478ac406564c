"""Scenarios: an agent tree and what a human does to it, as data.

``model`` is the schema (validated with pydantic), gathered from its parts: ``tree`` (the agents),
``steps`` (what the human does), ``corruptions`` (the damage a step can do, by name) and
``fields`` (what they share); ``loading`` reads regression files with one-line errors, ``oracle``
derives what must happen from the scenario alone.
"""

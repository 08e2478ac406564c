"""Scenarios: an agent tree and what a human does to it, as data.

``model`` is the schema (validated with pydantic), ``loading`` reads regression files with
one-line errors, ``oracle`` derives what must happen from the scenario alone.
"""

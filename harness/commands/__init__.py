"""The commands of ``python -m harness``: one module each, with its parser section and its logic.

Each command module has ``add_parser(commands)``, which adds its subcommand and options and ties
them to its ``run(arguments) -> int``; :mod:`harness.cli` builds the parser from them and
dispatches.  A command imports no other command, only what several share: :mod:`.inputs` (exit
codes, bad input, loading targets, scenario files and the findings path), :mod:`.options` (the
options several commands take), :mod:`.planning` (the scenarios check and record run),
:mod:`.outputs` (the conformance reports) and :mod:`.progress` (the progress line on a terminal).
"""

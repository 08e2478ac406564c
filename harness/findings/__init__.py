"""Expected findings: violations already found in a released implementation, kept as evidence.

A finding against a real SDK is reported, never hidden: it is a violation of that target, written
down in ``<target>-<version>.yaml`` (in a folder of the findings search path,
``harness.findings.search``: the bundled ``scenarios/findings/``, plugins' folders, ``--findings``)
with the regression file that shows it, a one-line explanation, and a *witness* for every
violation it excuses.  A run passes only when
every violation it shows is matched by a recorded witness and every recorded witness still shows.
A violation no witness matches is new, even in a scenario with other recorded findings, even of an
invariant recorded there (another step, another action).

The format::

    target: strands                 # the target's findings name and the SDK's version
    version: 1.59.0
    through: 1.62.0                 # optional: the file covers 1.59.0 to 1.62.0 (``releases``)
    findings:                       # regression files, by name and by content
      - scenario: twin-calls        # the file's stem in scenarios/regressions/
        digest: sha256:3f0c...      # of what it does (scenario_digest; not its prose): an
                                    # edited or renamed file must be re-recorded deliberately
        explanation: >              # why, for a person (a placeholder is refused)
          ...
        witnesses:
          - invariant: I2           # the checker id: I1..I16, D, O
            step: answer            # the kind of the violation's step: run, answer, restart,
                                    # corrupt, repair, resend, or none (a run-wide violation)
            seen: '^send-mail ran 0 times: approval not delivered$'
            expected: '^send-mail runs once$'      # optional, like seen
            error: '^.*already processing a request.*$'  # optional: a recorded error of the run
            result: '^orchestrator: Agent .+$'     # optional: a result its models were told
            warning: '^.*already processing.*$'    # optional: what the SDK logged at WARNING
            stored: '^nothing$'     # optional: whose sub-agent turns the store held
            shown: '^deploy-a as .+$'  # optional: the questions shown at the root so far
            beside: '^I5$'          # optional: another violation of the run at that step
            beside_seen: '^pending .+ [(]missing [^;]+[)]$'  # optional: what that one saw
            anchored_at: answer     # optional: the anchors were recorded at a step of this kind
                                    # in the run (default: at the violation's own step)
            anchored_by_then: true  # optional: ... no later than the violation's own step
            sometimes: true         # optional: a race in the SDK shows it in some runs only
            releases: '>=1.62.0'    # optional (also on a finding, a class): which releases
    classes:                        # the same bugs as they show in generated scenarios
      - class: second-call-turned-away
        shown_by: [twin-calls]      # recorded regression files that show the bug
        scenario_classes: [twin-calls]   # optional: only narrows the witnesses below
        explanation: >
          ...
        witnesses: [...]            # as above (required: a class is recognised by them)

A witness matches a violation of its invariant at a step of its kind when every pattern it gives
matches in full: ``expected`` and ``seen`` the violation's own sentences; ``error`` some error
recorded at the violation's own step (its ``observed["error"]`` or ``["more_errors"]``, or a
model request the provider refused during it, as "agent: refusal"; notes are not errors),
``result`` some tool result a model request of that step carried, as "agent: result",
``warning`` something the SDK logged at WARNING during that step, ``stored`` whose sub-agent
turns the store held when it ended (``nothing``, or the owners), ``shown`` the questions shown
at the root from the run's start to its end (``label as 'id'`` each), ``beside`` the invariant
of another violation of the run at that step (never the violation itself), ``beside_seen`` what
that violation saw (its seen sentence); all at one step, of
this run, never of its restart-free control.  ``anchored_at`` moves the anchors to any step of the
kind it names in the run (``anchored_by_then``: up to the violation's own).
Patterns must be anchored (start with ``^``, end with ``$``, no top-level ``|``) and are matched
with ``re.fullmatch``; a witness gives at least one of ``expected``, ``seen`` and ``error`` (a
``result``, ``warning``, ``stored``, ``shown`` or ``beside`` only narrows), and none may match
any text (``^.*$``).

A regression finding applies only to the scenario of its name *and* digest.  A class applies only
to generated scenarios (and only to those with its ``scenario_classes``), and only when generated
scenarios were run; then each of its witnesses must match at least one violation of the sample,
as a regression witness must match one in its scenario (unless ``sometimes``): a dead witness
fails the run until the file is updated, so the record stays true.  A violation is credited to
the first witness that names it (classes in the file's order), so the report can say how many
violations each finding and each class excuses.

``python -m harness record --target T`` writes a run into the file (``record``): each regression
file that shows violations gets its digest and a witness per violation that no recorded witness
names (its exact sentences), a new finding the explanation ``TO BE EXPLAINED`` that ``check``
refuses until a person writes one; an existing explanation is never overwritten.  Classes are
written by a person, who generalises what the generated scenarios show (the canary in
``tests/test_exemption_canary.py`` then checks no known-bad variant of the reference hides behind
them).

The package, one concern a module: ``document`` (the file's data model and its validation),
``patterns`` (a witness's patterns), ``releases`` (which releases a file and its items apply
to: each release is judged by the file's view as of it), ``search`` (the findings path),
``loading`` (reading a target's file), ``verdict`` (judging runs by it) and ``recording`` (what
``record`` writes).
"""

from __future__ import annotations

from harness.findings.document import (
    PLACEHOLDER,
    FindingClass,
    FindingEntry,
    FindingsFile,
    Witness,
    scenario_digest,
)
from harness.findings.loading import (
    FINDINGS,
    Finding,
    Folders,
    ReadFindings,
    findings_path,
    load_classes,
    load_document,
    load_findings,
    read_findings_file,
    read_once,
)
from harness.findings.recording import Recorded, dump_findings_file, record
from harness.findings.search import FindingsFileError
from harness.findings.verdict import (
    Excused,
    Missing,
    Observed,
    Verdict,
    judge_findings,
    observe,
    step_evidence,
)

__all__ = [
    "FINDINGS",
    "PLACEHOLDER",
    "Excused",
    "Finding",
    "FindingClass",
    "FindingEntry",
    "FindingsFile",
    "FindingsFileError",
    "Folders",
    "Missing",
    "Observed",
    "ReadFindings",
    "Recorded",
    "Verdict",
    "Witness",
    "dump_findings_file",
    "findings_path",
    "judge_findings",
    "load_classes",
    "load_document",
    "load_findings",
    "observe",
    "read_findings_file",
    "read_once",
    "record",
    "scenario_digest",
    "step_evidence",
]

"""The exemption canary, per run and per witness: the shipped findings judged on the known-bad
variants of the reference (``harness.targets.variants``), whose every violation is a bug.

Two questions, each asked of every findings file (a file of a range of releases: of its view as of
each release it names) on the variants' runs, recorded once (``tests/test_exemption_canary.py``):

* **Hidden runs.** A variant's generated run with violations that the file excuses *wholly*:
  every violation matched by a witness.  A bug of the SDK that a class records may look like the
  variant's bug in some runs; but a run the class excuses whole is a run where a new bug of the
  SDK of that shape would pass unseen.  The fix is a narrower class (an anchor the SDK shows and
  the variant does not, a scenario class), never a weaker canary.
* **Unchallenged broadenings.** Each class witness broadened each way ``BROADENINGS`` names (its
  sentence patterns replaced by ``BROAD``, which validation accepts yet which matches nearly every
  sentence; its anchors dropped; its ``beside`` dropped alone; its anchors let come from a later
  step than the violation's where it keeps them to earlier ones; its class's scenario classes
  dropped) must then name some variant's violation
  that the shipped witness rejects: else nothing shows the witness is any narrower than its
  broadening, and a broadened copy would pass the canary as well as the shipped one.

No variant of the reference logs what an SDK logs, so an anchored witness (``error``, ``result``,
``warning``, ``stored``) could never be challenged: its anchor alone keeps every variant out. The
*logging* variants (``logging``) are the known-bad variants' runs as a variant that logs SDK-like
errors and warnings at every step would record them (logging changes nothing of what it does): the
same violations, each step's evidence with ``SDK_LIKE`` added (an SDK-like store too: one that
holds no sub-agent turn), never a violation more: what a witness's ``beside`` names is one of the
run's own violations, which no logging adds. They challenge the sentence patterns of anchored
witnesses; they are not
asked the first question (a variant that says what the SDK says at the step where it goes wrong as
the SDK does is, to a witness, that bug).  The *speaking* variants (``spoken``) say in the SDKs'
words what the variants raise, tell their models and name their questions, so that a witness whose
sentence quotes those words is challenged too; they log as well, and are not asked the first
question either."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Final

from fakes.model import RESPONSE_ID
from harness.checkers.records import brief
from harness.checkers.violation import Violation
from harness.findings.document import FindingClass, FindingsFile, Witness
from harness.findings.patterns import full, required_literals
from harness.findings.verdict import Observed, judge_findings
from scenarios.classes import WITHIN
from scenarios.oracle import CAUSE_CLASSES

# A pattern validation accepts (it does not match the empty text nor one with a leading blank)
# that matches every sentence a checker writes: the broadest a careless edit makes a pattern.
BROAD: Final = r"^\S.*$"

# What the SDKs log and tell their models, in the shapes the shipped findings' anchors name
# (strands, openai-agents, LangGraph, ADK, the scripted provider): the logging variants' records.
SDK_LIKE_ERRORS: Final = (
    "tool_name=<mailer>, tool_use_id=<call-1> | cannot resume: the interrupted sub-agent turn "
    "is not available",
    "tool_name=<mailer>, available_tools=<['approver']> | tool not found in registry",
    "tool_name=<mailer>, tool_use_id=<call-1> | failed to restore interrupted sub-agent turn: "
    "'data'",
    "tool_name=<mailer>, tool_use_id=<call-1> | failed to restore interrupted sub-agent turn: "
    "Unsupported snapshot schema version: '0.0'. Current version: 1.0",
    "TypeError: prompt_type=<class 'str'> | must resume from interrupt with list of "
    "interruptResponse's",
    "mailer: first request of a conversation with a previous_response_id",
    "ProviderError: mailer: stale previous_response_id 'resp-0a1b'",
    "ScriptError: orchestrator/mailer: no turn 2 scripted for prompt 'part 1'",
    "ScriptError: orchestrator: no turn 3 scripted for prompt 'part 1'",
    "ValueError: Found AIMessages with tool_calls that do not have a corresponding ToolMessage. "
    "Here are the first few of those tool calls: [...]",
    "UserError: RunState completed tool invocation does not match a restored tool call and output.",
    "UserError: Cannot apply approval because multiple current pending approvals contain the "
    "same tool invocation identity.",
    "UserError: Cannot apply approval because the same tool invocation identity belongs to both "
    "the current run and a nested agent-tool run.",
    "ModelBehaviorError: Run history reused a tool call ID for different completed invocations.",
    "ModelBehaviorError: A tool call already executed, but its output was not committed. Start a "
    "new run instead of retrying the invocation.",
    "ModelBehaviorError: Model reused a tool call ID for a different invocation. Use a unique "
    "call ID for each tool invocation.",
    "no pending approval matches the answer",
    "UserError: Cannot apply approval because multiple current pending approvals contain the "
    "same tool invocation identity, or because it belongs to both the current run and a nested "
    "agent-tool run. Use unique call IDs.",
    "UserError: Cannot apply approval because multiple nested agent-tool runs contain the same "
    "tool invocation identity. Use unique call IDs within nested runs.",
    "UserError: Cannot apply approval because the same tool invocation identity belongs to both "
    "the current run and a nested agent-tool run. Use distinct call IDs.",
    "no interrupted run to answer",
    "ValueError: Tool 'mailer' is not registered.",
    "Node execution failed with exception",
)
SDK_LIKE_WARNINGS: Final = (
    "tool_name=<mailer>, tool_use_id=<call-2> | agent is already processing a request",
    "tool_name=<mailer>, tool_use_id=<call-1> | agent invocation failed: 'str' object has no "
    "attribute 'get'",
    "Failed to deserialize nested agent run state for tool call call-2.",
    "Ignoring unknown node name mailer in pending sends",
    "Agent 'mailer' paused with unresolved long-running tool call(s) ['adk-<uuid>'], which "
    "AgentTool cannot resume because its nested session is discarded. Configure the agent under "
    "sub_agents (e.g. with mode='single_turn' for LlmAgent) if it needs to pause and resume.",
    "Provided invocation_id e-<uuid> is ignored because new_message has a function response "
    "with invocation_id e-<uuid>.",
    "Dropping function calls with no matching function response: ['call-1']",
)
# What an SDK that stores no sub-agent turn shows its store holding (strands before 1.59).
SDK_LIKE_STORED: Final = ("nothing",)
# Questions shown under one id, as strands before 1.59 shows two agents' under one toolUseId.
SDK_LIKE_SHOWN: Final = ("deploy-a as 'v1:tool_call:call-1', deploy-b as 'v1:tool_call:call-1'",)
SDK_LIKE_RESULTS: Final = (
    "orchestrator: Error: mailer is not a valid tool, try one of [approver].",
    "orchestrator: Agent error: 'interrupt_id=<v1:agent_as_tool:call-1:q> | no interrupt found'",
    "orchestrator: send-mail: done",
    'orchestrator: {"result": null}',
    "orchestrator: Error running sub-agent: Dynamic node mailer failed",
)


def logging(run: Observed) -> Observed:
    """``run`` as a variant that logs ``SDK_LIKE`` records at every step would record it: the
    same violations, every step's evidence with those errors, warnings and results added.  What
    its steps violated stays the run's own: logging makes no violation, so a variant stands
    beside an SDK's I5 or D from a restart (``beside``) only where its own run shows one."""
    steps = tuple(
        replace(
            step,
            errors=step.errors + SDK_LIKE_ERRORS,
            results=step.results + SDK_LIKE_RESULTS,
            warnings=step.warnings + SDK_LIKE_WARNINGS,
            stored=step.stored + SDK_LIKE_STORED,
            shown=step.shown + SDK_LIKE_SHOWN,
        )
        for step in run.steps
    )
    return replace(run, steps=steps)


# What the SDKs (and the adapters, for them) raise where a step fails, and what they tell a model
# in a failed call's result, in the words the shipped witnesses' sentences quote: the speaking
# variants' words (``spoken``).
SDK_LIKE_RAISED: Final = (
    *SDK_LIKE_ERRORS,
    "no confirmation is pending: nothing to answer",
    "no response given",
    "a run is waiting for approvals: answer it first",
)
SDK_LIKE_TOLD: Final = (
    "Agent 'mailer' is already processing a request",
    "Agent error: 'str' object has no attribute 'get'",
    "Agent error: orchestrator/mailer: first request of a conversation with a previous_response_id",
    "Agent error: string indices must be integers, not 'str'",
    "Agent 'mailer' did NOT run and the human's response was NOT applied: its interrupted turn is "
    "not available. Do not retry the call.",
    "Error: agent 'mailer' stopped waiting on unresolved long-running tool call(s) (pending call "
    "ids: ['adk-<uuid>']), which AgentTool cannot resume because its nested session is discarded.",
    "Error running sub-agent: Dynamic node mailer failed",
    '{"result": null}',
    # what a sub-agent answers a prompt it has no turn scripted for (scenarios.tree: an agent's
    # final answer), handed up in a call's place by an SDK that asked it the wrong prompt (ADK's
    # single_turn sub-agent asked the root's prompt after a resume)
    "done",
)


# Texts only the scripted provider writes, and only for an agent whose provider is stateful (its
# response ids, in the model state a request carries and in its refusals of a request over one:
# fakes.model.ScriptedModel): a sentence that must contain one names violations of that class's
# scenarios alone, as a failure cause of CAUSE_CLASSES does (``implied_classes``), and a speaking
# variant says one only in a run of that class, as an SDK passing on the provider's words would
PROVIDER_CLASSES: Final = {RESPONSE_ID: "stateful-provider"}
# What must be pending after a step (I3's sentence, and I11's at a depth: a part of it), when
# the pattern names two questions or more (``^pending Q(, Q)+$``): a step raises a question only
# where none waits unanswered (a prompt to a turn that waits is answered with its question, an
# answer resumes only what it answers), so the first step after which two wait asked them
# together, and such a sentence names that class's scenarios alone (tests/test_exemption_canary
# holds every scenario the canary runs to it)
TWO_PENDING: Final = re.compile(r"\^pending (.+)\(, \1\)\+\$")
TWO_PENDING_INVARIANTS: Final = ("I3", "I11")
TWO_PENDING_CLASS: Final = "questions-asked-together"
# ... and when it names a question of an action after its first (``label#N``, N of 2 or more: a
# number starting 2 to 9), which an action asks only once an answer approved the one before it,
# and asks in that answer's step, while the answer is carried out: the scenario is a
# ``re-interrupt`` one (the same test holds every scenario the canary runs to it)
LATER_QUESTION: Final = re.compile(r"#[2-9]")
LATER_QUESTION_CLASS: Final = "re-interrupt"
# A re-sent answer must fail and change nothing (I9) only where a deploy took away a call it
# names (scenarios.oracle: an answer a damaged turn refused is carried out when it is re-sent
# after a repair, and before one its re-send may fail but need not), and a deploy takes a call
# away only while it asks: I9 at a re-send names ``deploy-skew`` scenarios alone
REFUSED_RESEND: Final = ("I9", "resend")
REFUSED_RESEND_CLASS: Final = "deploy-skew"


def _sayable(text: str, run: Observed) -> bool:
    """Whether an SDK could say ``text`` in ``run``: not a stateful provider's words where no
    provider is stateful (``PROVIDER_CLASSES``)."""
    return all(name in run.classes for key, name in PROVIDER_CLASSES.items() if key in text)


def _innermost_call(name: str) -> str:
    """The toolUseId of the call that asked, out of the reference's name of its question
    (``harness.reference.naming``: ``...tool:<depth>.<toolUseId>:<question>``)."""
    parts = name.rsplit(":", 2)
    return parts[-2].split(".", 1)[-1] if len(parts) == 3 else name


# How the SDKs name a question at the root, from the reference's name and its place among the
# run's questions: strands (an interrupt id of the call that asked, as its tool asks it or as a
# hook asks it before the tool call), LangGraph (lg-N), ADK (confirm-N), openai-agents (agent,
# tool and call).
SDK_LIKE_NAMES: Final[tuple[Callable[[str, int], str], ...]] = (
    lambda name, _: f"v1:tool_call:{_innermost_call(name)}:4d3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a",
    lambda name, _: (
        f"v1:before_tool_call:{_innermost_call(name)}:4d3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a"
    ),
    lambda _, number: f"lg-{number}",
    lambda _, number: f"confirm-{number}",
    lambda name, _: f"mailer:approval:{_innermost_call(name)}",
)
# a question's name in a sentence, and what comes before it: "<label>#<n> as '<name>'" (I3, I5,
# I9, I14, D), "<label>#<n> asked under '<name>'" and "'<name>' shown for <label>#<n>, ..." (I1,
# I12); the reference's names are percent-quoted, so never hold a quote
_NAMED: Final = re.compile(r"(as |asked under )'([^']*)'|(^|; )'([^']*)'(?= shown for )")
# a text a model got in a call's place, quoted as the checker quotes it (I2): where the checker
# names any text it got (not where it names another call's result, or the action's own words)
_TOLD: Final = re.compile(
    r"^(.*'s model got )('.*'|\".*\")"
    r"( under toolUseId ('[^']*'|\"[^\"]*\")(, not the call's answer)?)$"
)


# An event I8 names, as it names one with neither a type nor an agent ("(? of ?)"): an SDK that
# hands its callbacks raw stream events (strands' tool stream events) says no more of them
_EVENT: Final = re.compile(r"^(event \d+ )\([^()]* of [^()]*\)( carries .*)$", re.DOTALL)
SDK_LIKE_EVENT: Final = "(? of ?)"


def _reworded(
    run: Observed, word: Callable[[Violation], Violation | None]
) -> tuple[Observed, tuple[int, ...]] | None:
    """``run`` with each violation ``word`` rewords (None: kept), and the positions reworded;
    None where none is."""
    violations = list(run.violations)
    changed = []
    for position, (violation, kind) in enumerate(run.violations):
        worded = word(violation)
        if worded is not None and worded != violation:
            violations[position] = (worded, kind)
            changed.append(position)
    if not changed:
        return None
    return replace(run, violations=tuple(violations)), tuple(changed)


def _raising(text: str) -> Callable[[Violation], Violation | None]:
    def word(violation: Violation) -> Violation | None:
        if violation.invariant != "O" or violation.expected != "no error":
            return None
        return replace(violation, seen=brief(text))  # as O shows what a step raised

    return word


def _telling(text: str) -> Callable[[Violation], Violation | None]:
    def word(violation: Violation) -> Violation | None:
        found = _TOLD.match(violation.seen) if violation.invariant == "I2" else None
        if found is None:
            return None
        return replace(violation, seen=found.group(1) + repr(brief(text)) + found.group(3))

    return word


def _naming(name: Callable[[str, int], str]) -> Callable[[Violation], Violation | None]:
    numbers: dict[str, int] = {}  # one run's questions, numbered as they are first named

    def rename(found: re.Match[str]) -> str:
        before, named = found.group(1, 2) if found.group(2) is not None else found.group(3, 4)
        number = numbers.setdefault(named, len(numbers) + 1)
        return f"{before}'{name(named, number)}'"

    def word(violation: Violation) -> Violation | None:
        expected = _NAMED.sub(rename, violation.expected)
        return replace(violation, expected=expected, seen=_NAMED.sub(rename, violation.seen))

    return word


def _eventing(violation: Violation) -> Violation | None:
    found = _EVENT.match(violation.seen) if violation.invariant == "I8" else None
    if found is None:
        return None
    return replace(violation, seen=found.group(1) + SDK_LIKE_EVENT + found.group(2))


def spoken(run: Observed) -> Iterator[tuple[Observed, tuple[int, ...]]]:
    """``run`` as variants that speak as the SDKs do would have recorded it, each with the
    positions of the violations whose sentences it changed: one raising each error an SDK raises
    (``SDK_LIKE_RAISED``) where the variant raised its own, one telling a model what an SDK tells
    it in a call's place (``SDK_LIKE_TOLD``) where the variant told another text, one naming its
    questions as each SDK names them (``SDK_LIKE_NAMES``), and one publishing its events as raw
    stream events, with no type or agent an event checker could name (``SDK_LIKE_EVENT``).
    Speaking changes nothing of what a variant does: the same violations at the same steps, only
    the words an SDK chooses (its errors, its results, the ids it shows, the shape of its events)
    said in its words.  A witness whose sentence quotes an SDK's words is challenged by them, as
    an anchored one is by the logging variants.  What only a stateful provider says is said only
    where one is (``_sayable``)."""
    words = [_raising(text) for text in SDK_LIKE_RAISED if _sayable(text, run)]
    words += [_telling(text) for text in SDK_LIKE_TOLD if _sayable(text, run)]
    words += [_naming(name) for name in SDK_LIKE_NAMES]
    words.append(_eventing)
    for word in words:
        made = _reworded(run, word)
        if made is not None:
            yield made


@dataclass(frozen=True)
class VariantRun:
    """One run of a known-bad variant, as the findings judge it."""

    variant: str
    run: Observed
    # what a target must express to run the scenario (harness.targets.base.expressible_needs)
    needs: frozenset[str] = frozenset()


@dataclass(frozen=True, order=True)
class Hidden:
    """A variant's run with violations that a findings file excuses whole: hidden, unless the
    variant is shown to be the very bug of every class that excused it (``same_bug``)."""

    file: str  # the findings file's view: <target>-<release>
    variant: str
    scenario: str
    excused_by: tuple[str, ...]  # the classes (or "finding <scenario>") that excused it
    # per class that excused it, the regression file of its shown_by on which the variant fails
    # only as the SDK's recorded finding says, the class's bug among it; empty unless each has one
    same_bug: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        shown = {"same_bug": list(self.same_bug)} if self.same_bug else {}
        return {
            "file": self.file,
            "variant": self.variant,
            "scenario": self.scenario,
            "excused_by": list(self.excused_by),
        } | shown

    def describe(self) -> str:
        excused = ", ".join(self.excused_by)
        said = f"{self.file}: {self.variant} run {self.scenario} wholly excused by {excused}"
        if self.same_bug:
            said += " (the same bug: the variant shows " + ", ".join(self.same_bug) + ")"
        return said


def shows_the_class(document: FindingsFile, found: FindingClass, run: Observed) -> bool:
    """Whether ``run``, a variant's run of a regression file, fails there only as the SDK does and
    as ``found`` records: it violates something, every violation is excused by the SDK's recorded
    finding for that file (its exact sentences, each anchor recorded at its step), and one of
    them is what a witness of ``found`` names.  Then, on the class's own demonstration, the
    variant's bug is the SDK's."""
    if run.generated or not run.violations:
        return False
    verdict = judge_findings(document, [run])
    if verdict.new or verdict.stale or not verdict.expected:
        return False
    if any(item.recorded_class is not None for item in verdict.expected):
        return False
    return any(
        witness.matches(violation, kind, run.steps)
        for violation, kind in run.violations
        for witness in found.witnesses
    )


def _same_bug(
    document: FindingsFile, classes: Iterable[str], regressions: dict[str, Observed]
) -> tuple[str, ...]:
    """For each class, the first of its ``shown_by`` files on which the variant (its runs of the
    regression files, by name) shows the class's bug as the SDK does; empty unless each has
    one."""
    by_name = {found.name: found for found in document.classes}
    shown = []
    for name in classes:
        found = by_name.get(name)
        if found is None:  # a regression finding excused it: not a class's generalisation
            return ()
        demonstration = next(
            (
                scenario
                for scenario in found.shown_by
                if scenario in regressions
                and shows_the_class(document, found, regressions[scenario])
            ),
            None,
        )
        if demonstration is None:
            return ()
        shown.append(demonstration)
    return tuple(shown)


def hidden_runs(
    file: str,
    document: FindingsFile,
    runs: Iterable[VariantRun],
    expressible: frozenset[str] | None = None,
) -> list[Hidden]:
    """The variant's generated runs with violations that ``document`` excuses whole, each judged
    alone (as if the variant were the file's target).  A regression finding names the exact
    sentences of its one scenario, so a variant that shows them there shows the SDK's failure
    itself; a class is what generalises, and what may be too wide.  So a run classes excuse
    whole is marked ``same_bug`` where, for each of them, the variant also fails on a regression
    file the class names as its demonstration (``shown_by``) only as the SDK's recorded finding
    there says, the class's bug among it (``shows_the_class``): then the class excuses the bug it
    records, not a look-alike, and no witness could tell the two apart.  A run of a scenario the
    file's target cannot express (``expressible``, None: all it is asked) is not asked: the SDK
    never runs it, so no bug of the SDK could pass unseen there."""
    runs = tuple(runs)
    regressions: dict[str, dict[str, Observed]] = {}
    for each in runs:
        if not each.run.generated:
            regressions.setdefault(each.variant, {})[each.run.scenario] = each.run
    found = []
    for each in runs:
        if not (each.run.generated and each.run.violations):
            continue
        if expressible is not None and not each.needs <= expressible:
            continue
        verdict = judge_findings(document, [each.run])
        if verdict.new:
            continue
        excused_by = sorted(
            {item.recorded_class or f"finding {item.scenario}" for item in verdict.expected}
        )
        same = _same_bug(document, excused_by, regressions.get(each.variant, {}))
        found.append(Hidden(file, each.variant, each.run.scenario, tuple(excused_by), same))
    return sorted(found)


def unnarrowed(document: FindingsFile) -> list[str]:
    """The classes of ``document`` that only their sentences narrow: no scenario classes, and no
    witness with an anchor.  Such a class excuses every violation of its sentences' shape in any
    generated scenario, whatever caused it: a new bug that writes the same sentence passes under
    its explanation."""
    return [
        found.name
        for found in document.classes
        if not found.scenario_classes and not any(witness.anchored for witness in found.witnesses)
    ]


# "beside" drops that anchor alone, where the witness has others too (with none other, it is
# "anchor"): what stands beside a violation must be challenged on its own, as the one anchor a
# logging variant cannot say (it is a violation of the run, not a record of it); where the
# witness also names what that violation saw (``beside_seen``), it drops that alone; "by-then"
# lets the anchors of a witness that keeps them to steps up to the violation's
# (``anchored_by_then``) come from any step of their kind again
BROADENINGS: Final = ("pattern", "anchor", "beside", "by-then", "scenario-classes")


@dataclass(frozen=True, order=True)
class Broadening:
    """One class witness broadened one way (``BROADENINGS``)."""

    file: str
    recorded_class: str
    witness: str  # the witness, described (Witness.describe): its position changes with edits
    how: str

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "class": self.recorded_class,
            "witness": self.witness,
            "broadened": self.how,
        }

    def describe(self) -> str:
        return f"{self.file}: class {self.recorded_class}: {self.witness} ({self.how})"


# Violations two checkers always write together, at one step: at an answer or a re-send, an
# action that ran more often than was due there is I2's "a sibling's action ran" and I10's
# "runs ... in this step" alike (harness.checkers.delivery: one count, the same labels), so a
# witness of either names a violation the other always stands beside.  Each pair: the
# invariant, a text its sentence must contain (in ``expected`` or ``seen``), and the invariant
# beside it.
TOGETHER: Final = (
    ("I2", ": a sibling's action ran", "I10"),
    ("I10", " in this step", "I2"),
)
TOGETHER_STEPS: Final = ("answer", "resend")


def implied_besides(witness: Witness) -> frozenset[str]:
    """The invariants of the violations that stand beside every violation ``witness`` can name,
    read off the witness alone (``TOGETHER``).  A ``beside`` one of them meets narrows
    nothing."""
    if witness.step not in TOGETHER_STEPS:
        return frozenset()
    said = [
        *(required_literals(witness.expected) if witness.expected is not None else ()),
        *(required_literals(witness.seen) if witness.seen is not None else ()),
    ]
    return frozenset(
        beside
        for invariant, text, beside in TOGETHER
        if witness.invariant == invariant and any(text in literal for literal in said)
    )


def _besides_nothing(witness: Witness) -> bool:
    """Whether the witness's ``beside`` (with no ``beside_seen``) is met wherever the rest of
    it is: one of its implied besides is what it names."""
    return (
        witness.beside is not None
        and witness.beside_seen is None
        and any(full(witness.beside, name) for name in implied_besides(witness))
    )


def implied_classes(witness: Witness) -> frozenset[str]:
    """The scenario classes of every scenario whose violation ``witness`` can name, read off the
    witness alone: a violation at a re-send step, or one whose anchors were recorded at a re-send
    step (``anchored_at``), is one of a scenario with a re-send; the
    oracle writes some failure causes only for the scenarios of one class
    (``scenarios.oracle.CAUSE_CLASSES``), so an expected sentence that must contain one names
    that class's scenarios alone; the scripted provider writes a response id only where a
    provider is stateful (``PROVIDER_CLASSES``), so a sentence that must name one does too; and
    two questions wait only where a step asked them together (``TWO_PENDING``), an action's
    later question only where an answer approved its earlier one (``LATER_QUESTION``), and a
    re-sent answer must fail only where a deploy took its call away (``REFUSED_RESEND``).
    A class whose every scenario is of another (``scenarios.classes.WITHIN``) implies that one
    too.  Dropping such a class from a class narrows nothing less."""
    implied = {"resend"} if "resend" in (witness.step, witness.anchored_at) else set()
    expected = required_literals(witness.expected) if witness.expected is not None else ()
    implied |= {
        name for cause, name in CAUSE_CLASSES.items() if any(cause in text for text in expected)
    }
    if (
        witness.invariant in TWO_PENDING_INVARIANTS
        and witness.expected is not None
        and TWO_PENDING.fullmatch(witness.expected)
    ):
        implied.add(TWO_PENDING_CLASS)
    if witness.invariant in TWO_PENDING_INVARIANTS and any(
        LATER_QUESTION.search(text) for text in expected
    ):
        implied.add(LATER_QUESTION_CLASS)
    if (witness.invariant, witness.step) == REFUSED_RESEND:
        implied.add(REFUSED_RESEND_CLASS)
    sentences = (*expected, *(required_literals(witness.seen) if witness.seen else ()))
    implied |= {
        name for text, name in PROVIDER_CLASSES.items() if any(text in said for said in sentences)
    }
    return frozenset(implied).union(*(WITHIN.get(name, ()) for name in implied))


def broadened(found: FindingClass, position: int, how: str) -> tuple[FindingClass, Witness] | None:
    """The class and its witness at ``position`` broadened ``how``; None where that broadening
    changes nothing (no anchor to drop, no scenario class to drop but those the witness implies
    (``implied_classes``), no ``beside`` beside another anchor, no anchor but a ``beside`` the
    witness implies (``implied_besides``))."""
    witness = found.witnesses[position]
    if how == "scenario-classes":
        implied = implied_classes(witness)
        kept = tuple(name for name in found.scenario_classes if name in implied)
        if kept == tuple(found.scenario_classes):  # none, or only what the witness implies
            return None
        return found.model_copy(update={"scenario_classes": kept}), witness
    if how == "beside":
        if witness.beside_seen is not None:  # what the violation beside saw, dropped alone
            return found, witness.model_copy(update={"beside_seen": None})
        alone = witness.model_copy(update={"beside": None})
        if witness.beside is None or not alone.anchored or _besides_nothing(witness):
            return None
        return found, alone
    if how == "by-then":
        if not witness.anchored_by_then:
            return None
        return found, witness.model_copy(update={"anchored_by_then": False})
    if how == "anchor":
        alone = witness.model_copy(update={"beside": None})
        if not witness.anchored or (_besides_nothing(witness) and not alone.anchored):
            return None
        update: dict[str, Any] = {"error": None, "result": None, "warning": None}
        update |= {"stored": None, "shown": None, "beside": None, "beside_seen": None}
        update |= {"anchored_at": None, "anchored_by_then": False}
        if witness.expected is None and witness.seen is None:
            update["seen"] = BROAD  # an error alone: nothing would be left to name
        return found, witness.model_copy(update=update)
    sentences = {key: BROAD for key in ("expected", "seen") if getattr(witness, key) is not None}
    return found, witness.model_copy(update=sentences or {"error": BROAD})


class Sample:
    """The variants' runs, the logging variants' (``logging``) and the speaking variants'
    (``spoken``, each logging too), their generated runs' violations indexed by invariant and
    step kind (what a witness names first).  Of a speaking variant's run only the violations its
    words changed are indexed: the others are the variant's own, indexed already."""

    def __init__(self, runs: Iterable[VariantRun]) -> None:
        self.runs = tuple(runs)
        self.index: dict[tuple[str, str], list[tuple[Observed, int]]] = {}
        for each in self.runs:
            if not each.run.generated:
                continue  # a class covers generated scenarios only
            everything = tuple(range(len(each.run.violations)))
            self._add(each.run, everything)
            self._add(logging(each.run), everything)
            for speaking, changed in spoken(each.run):
                self._add(speaking, changed)
                self._add(logging(speaking), changed)

    def _add(self, run: Observed, positions: tuple[int, ...]) -> None:
        for position in positions:
            violation, kind = run.violations[position]
            self.index.setdefault((violation.invariant, kind), []).append((run, position))

    def named(self, found: FindingClass, witness: Witness) -> Iterator[tuple[int, int]]:
        """Each violation (by its run's identity and position) ``witness`` of ``found`` names."""
        for run, position in self.index.get((witness.invariant, witness.step), ()):
            violation, kind = run.violations[position]
            if found.narrows_to(run.classes) and witness.matches(violation, kind, run.steps):
                yield id(run), position


def challenged(found: FindingClass, position: int, how: str, sample: Sample) -> bool | None:
    """Whether broadening the class's witness at ``position`` ``how`` makes it name a variant's
    violation the shipped witness rejects (None: that broadening changes nothing).

    A ``beside`` names a violation of the run, which no logging variant can add: a broadened
    sentence pattern or scenario class is asked with it set aside in both witnesses, as the
    logging variants set aside what an SDK logs, so what is asked is whether that pattern or that
    scenario class narrows anything; whether the ``beside`` does is asked on its own
    (``BROADENINGS``), on the variants' runs as they are."""
    made = _compared(found, position, how)
    if made is None:
        return None
    wider, witness, original = made
    shipped = set(sample.named(found, original))
    return any(hit not in shipped for hit in sample.named(wider, witness))


def _compared(
    found: FindingClass, position: int, how: str
) -> tuple[FindingClass, Witness, Witness] | None:
    """The class and its witness at ``position`` broadened ``how``, and the shipped witness they
    are compared with (``challenged``: a ``beside`` set aside in both where a sentence pattern or
    the scenario classes are broadened)."""
    made = broadened(found, position, how)
    if made is None:
        return None
    wider, witness = made
    original = found.witnesses[position]
    if how in ("pattern", "scenario-classes") and original.beside is not None:
        original = original.model_copy(update={"beside": None, "beside_seen": None})
        witness = witness.model_copy(update={"beside": None, "beside_seen": None})
    return wider, witness, original


# The parts of a broadened witness a variant's violation can fail (``nearest``), in the order
# they are asked: the first three each on their own, the anchors only where the rest hold.
MISSED: Final = ("scenario classes", "expected", "seen", "anchors")
NAMED_BOTH: Final = "named by the shipped witness too"


def nearest(
    found: FindingClass, position: int, how: str, sample: Sample
) -> tuple[tuple[str, int], ...]:
    """Why a broadening ``challenged`` finds unchallenged names nothing new, for the triage of
    the files: of the variants' violations of the witness's invariant at its step kind, how many
    fail which parts of the broadened witness (``MISSED``, joined by "+"), and how many the
    shipped witness names as well (``NAMED_BOTH``); most first.  None at all: no variant writes a
    sentence there, so only a new variant or a new shape could challenge it."""
    made = _compared(found, position, how)
    if made is None:
        return ()
    wider, witness, _ = made
    tally: dict[str, int] = {}
    for run, place in sample.index.get((witness.invariant, witness.step), ()):
        violation, kind = run.violations[place]
        missed = [
            part
            for part, holds in zip(
                MISSED[:3],
                (
                    wider.narrows_to(run.classes),
                    witness.expected is None or full(witness.expected, violation.expected),
                    witness.seen is None or full(witness.seen, violation.seen),
                ),
                strict=True,
            )
            if not holds
        ]
        if not missed and not witness.matches(violation, kind, run.steps):
            missed = [MISSED[3]]
        reason = "+".join(missed) or NAMED_BOTH
        tally[reason] = tally.get(reason, 0) + 1
    return tuple(sorted(tally.items(), key=lambda item: (-item[1], item[0])))


def unchallenged(file: str, document: FindingsFile, sample: Sample) -> tuple[list[Broadening], int]:
    """The broadenings of ``document``'s class witnesses no variant run challenges, and how many
    broadenings were tried."""
    left, tried = [], 0
    for found in document.classes:
        for position in range(len(found.witnesses)):
            for how in BROADENINGS:
                verdict = challenged(found, position, how, sample)
                if verdict is None:
                    continue
                tried += 1
                if not verdict:
                    described = found.witnesses[position].describe()
                    left.append(Broadening(file, found.name, described, how))
    return sorted(left), tried

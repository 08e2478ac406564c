"""Known-bad variants: each historical bug, put back into the reference, is caught by the checkers.

For every variant a concrete scenario (a regression file, or a small one written here) runs clean
on the reference and breaks the named invariants on the variant.  The expected invariants are a
subset of what fires (one bug usually breaks several), plus, where it says something, invariants
that must stay quiet.  The variants are reachable by name, never listed as installed targets, and
never change the reference they run beside.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

import harness
from harness.campaigns.crashes import crash_campaign
from harness.checkers import check
from harness.forking import ForkIsolated
from harness.history import History
from harness.reference.agent_as_tool import SubAgentTool
from harness.runner import run_scenario
from harness.targets import registry
from harness.targets.base import Target
from harness.targets.reference import ReferenceTarget
from harness.targets.variants import KNOWN_BAD, VARIANTS, Variant, VariantTarget
from harness.targets.variants_continuation import RestoreHookTool
from harness.targets.variants_routing import AnswersByLocalIdTool
from scenarios.loading import REGRESSIONS, load_scenario, parse_scenario, regression_files
from scenarios.model import Scenario

# Delivery is right: every approved action runs exactly once, nothing else runs.
DELIVERY = frozenset({"I2", "I3", "I4"})

# A preserve_context sub-agent and an ephemeral one both ask in one turn; only the ephemeral
# one is answered.  The parked preserve_context turn must stay pending and be answered later.
PARKED_BESIDE_ANSWERED: dict[str, Any] = {
    "description": "a parked preserve_context sub-agent stays pending while a sibling is answered",
    "source": "docs/invariants.md, I3 (partial answers); routing.py: resume is decided by state",
    "classes": ["partial-answers"],
    "tree": {
        "name": "orchestrator",
        "turns": [[{"tool": "secretary", "id": "call-1"}, {"tool": "courier", "id": "call-2"}]],
        "sub_agents": [
            {
                "name": "secretary",
                "preserve_context": True,
                "actions": [{"tool": "send_invite", "label": "send-invite"}],
                "turns": [[{"tool": "send_invite", "id": "t1"}]],
            },
            {
                "name": "courier",
                "actions": [{"tool": "ship", "label": "ship"}],
                "turns": [[{"tool": "ship", "id": "t1"}]],
            },
        ],
    },
    "steps": [
        {"run": "invite the team and ship the badges"},
        {"answer": {"ship": "approve"}},
        {"answer": {"send-invite": "approve"}},
    ],
}

# The same ephemeral sub-agent is called in three consecutive orchestrator turns, each call asks
# the same question and is approved: three parkings of one owner with the same pending set.
THREE_CALLS_IN_A_ROW: dict[str, Any] = {
    "description": "one ephemeral sub-agent called in three consecutive turns, each approved",
    "source": "docs/invariants.md, I7 (bounded continuation): 1512 B after 0, 3 and 6 calls",
    "classes": ["partial-answers"],
    "tree": {
        "name": "orchestrator",
        "turns": [
            [{"tool": "clerk", "id": "c1", "prompt": "file form A"}],
            [{"tool": "clerk", "id": "c2", "prompt": "file form B"}],
            [{"tool": "clerk", "id": "c3", "prompt": "file form C"}],
        ],
        "sub_agents": [
            {
                "name": "clerk",
                "actions": [{"tool": "file", "label": "file-form"}],
                "turns": [[{"tool": "file", "id": "t1"}]],
            }
        ],
    },
    "steps": [
        {"run": "file the three forms"},
        {"answer": {"file-form": "approve"}},
        {"answer": {"file-form": "approve"}},
        {"answer": {"file-form": "approve"}},
    ],
}


# The clerk's approval re-sent after a restart that came once the turn had ended and a new
# prompt had the clerk ask again under the same toolUseIds: the re-send must be refused.
RESENT_AFTER_A_RESTART_AND_A_NEW_PROMPT: dict[str, Any] = {
    "description": "an approval re-sent after a restart and a new prompt that asks again",
    "source": "docs/invariants.md, I14 (answers naming no pending question are refused)",
    "classes": ["unknown-answers", "restart-anywhere"],
    "tree": {
        "name": "orchestrator",
        "turns": [[{"tool": "clerk", "id": "c1"}]],
        "sub_agents": [
            {
                "name": "clerk",
                "actions": [{"tool": "file", "label": "file-form"}],
                "turns": [[{"tool": "file", "id": "t1"}]],
            }
        ],
    },
    "steps": [
        {"run": "file the form"},
        {"answer": {"file-form": "approve"}},
        {"restart": True},
        {"run": "file the form"},
        {"resend": 1},
    ],
}


# Two sub-agents' actions asked under one toolUseId (t1), the auditor's asking twice; the clerk's
# approved, then that approval re-sent.  The auditor's question must stay pending and the
# re-send be refused.
APPROVAL_RE_SENT_BESIDE_A_SHARED_TOOL_USE_ID: dict[str, Any] = {
    "description": "an approval re-sent where another sub-agent's action shares its toolUseId",
    "source": "docs/invariants.md, I1 and I14 (answers naming no pending question are refused)",
    "classes": ["unknown-answers", "colliding-ids"],
    "tree": {
        "name": "orchestrator",
        "turns": [[{"tool": "clerk", "id": "c1"}, {"tool": "auditor", "id": "c2"}]],
        "sub_agents": [
            {
                "name": "clerk",
                "actions": [{"tool": "file", "label": "file-form"}],
                "turns": [[{"tool": "file", "id": "t1"}]],
            },
            {
                "name": "auditor",
                "actions": [{"tool": "audit", "label": "audit-books", "questions": 2}],
                "turns": [[{"tool": "audit", "id": "t1"}]],
            },
        ],
    },
    "steps": [
        {"run": "file and audit"},
        {"answer": {"file-form": "approve"}},
        {"resend": 1},
    ],
}

# An approval re-sent after a restart that came once the turn ended (the new-prompt scenario's
# tree and steps, without its new prompt): refused, with no request.
RESENT_AFTER_AN_IDLE_RESTART: dict[str, Any] = RESENT_AFTER_A_RESTART_AND_A_NEW_PROMPT | {
    "description": "an approval re-sent after a restart that came once the turn ended",
    "source": "docs/invariants.md, I14 and D (a restart changes nothing the run does)",
    "steps": [
        {"run": "file the form"},
        {"answer": {"file-form": "approve"}},
        {"restart": True},
        {"resend": 1},
    ],
}


def regression(stem: str) -> tuple[str, Scenario]:
    return stem, load_scenario(REGRESSIONS / f"{stem}.yaml")


def coverage_regression(stem: str) -> tuple[str, Scenario]:
    """A regression file of a shape only the coverage sample draws (not run by default)."""
    return stem, load_scenario(REGRESSIONS / "coverage" / f"{stem}.yaml")


def inline(name: str, data: dict[str, Any]) -> tuple[str, Scenario]:
    return name, parse_scenario(data, name)


SHARED_TOOL_USE_ID_RE_SENT: Final = inline(
    "approval-re-sent-beside-a-shared-tool-use-id", APPROVAL_RE_SENT_BESIDE_A_SHARED_TOOL_USE_ID
)


@dataclass(frozen=True)
class Case:
    slug: str
    scenario: tuple[str, Scenario]  # (name, scenario)
    fires: frozenset[str]  # invariants that must be among those reported
    quiet: frozenset[str] = frozenset()  # invariants that must not be reported

    @property
    def id(self) -> str:
        return f"{self.slug}@{self.scenario[0]}"


CASES = (
    Case(
        "loose-answer-lookup",
        coverage_regression("adversarial-ids-answered"),
        frozenset({"I2", "I4", "O"}),
        quiet=frozenset({"I1"}),
    ),
    Case("retry-continues-parked", coverage_regression("retried-parked-call"), frozenset({"I7"})),
    Case(
        "refused-restore-keeps-one",
        coverage_regression("refused-restore-of-several"),
        frozenset({"I9", "O"}),
    ),
    Case(
        "gate-approval-stands",
        coverage_regression("retried-gated-call-after-result"),
        frozenset({"I3", "O"}),
    ),
    Case("restore-drops-state", coverage_regression("state-read-after-resume"), frozenset({"I17"})),
    Case("parked-by-shared-key", coverage_regression("two-root-sessions"), frozenset({"I2"})),
    # one user's call starts from what the other user's left on the shared agent tool: the
    # provider refuses another user's response id; with a restart between the calls (the agent
    # tool rebuilt) only the restart-free run is refused
    Case(
        "provider-state-on-the-tool",
        coverage_regression("two-sessions-provider-state"),
        frozenset({"I7", "O"}),
    ),
    Case(
        "provider-state-on-the-tool",
        coverage_regression("two-sessions-restart-between-calls"),
        frozenset({"I5", "I6", "D"}),
        quiet=frozenset({"I7"}),
    ),
    # ... where the agent tool hands the refusal to the caller as the call's result, the caller
    # is told it (I2) and goes on without the call's question (I3), as strands' does
    Case(
        "provider-state-on-the-tool-as-a-result",
        coverage_regression("two-sessions-provider-state"),
        frozenset({"I2", "I3", "I7"}),
    ),
    # ... the whole conversation, messages and response id together: the provider takes it as a
    # follow-up of the conversation it knows, so nothing refuses it (no O), where the id alone
    # is refused
    Case(
        "conversation-on-the-tool",
        coverage_regression("two-sessions-provider-state"),
        frozenset({"I7", "I16"}),
        quiet=frozenset({"O"}),
    ),
    Case(
        "conversation-on-the-tool",
        regression("ephemeral-call-fresh-provider-state"),
        frozenset({"I7"}),
    ),
    # the first call of the sub-agent carries its caller's response id, before any call of its
    # own: I7 names it so, and the provider refuses it (O)
    Case(
        "caller-provider-state",
        regression("ephemeral-call-fresh-provider-state"),
        frozenset({"I7", "O"}),
    ),
    # the earlier call's messages without its response id: the provider refuses the follow-up,
    # the caller is told so in the call's place (I2) and goes on, so no step fails (no O), where
    # history-accumulation's step fails with the refusal
    Case(
        "history-accumulation-as-a-result",
        regression("ephemeral-call-fresh-provider-state"),
        frozenset({"I2", "I7"}),
        quiet=frozenset({"O"}),
    ),
    Case(
        "parked-messages-on-the-tool",
        coverage_regression("two-sessions-restart-between-calls"),
        frozenset({"I5", "I6", "D"}),
    ),
    Case(
        "parked-messages-on-the-tool",
        coverage_regression("two-sessions-window-count"),
        frozenset({"I7", "I16"}),
    ),
    Case(
        "agent-state-on-the-tool",
        coverage_regression("two-sessions-window-count"),
        frozenset({"I17"}),
        quiet=DELIVERY,
    ),
    Case(
        "window-counted-twice",
        coverage_regression("state-read-after-resume"),
        frozenset({"I17"}),
        quiet=DELIVERY,
    ),
    Case(
        "restore-drops-window-count",
        coverage_regression("state-read-after-resume"),
        frozenset({"I17"}),
        quiet=frozenset({"I6", "D"}),
    ),
    Case("shared-object", regression("deep-nesting"), frozenset({"I2", "I3", "I5", "I6", "I11"})),
    Case("no-namespacing", regression("colliding-ids"), frozenset({"I1", "I2", "I4"})),
    # a gated call's sub-agent asks under its gate's id, and the gate takes the answer
    Case("gate-raises-nested-as-its-own", regression("gated-agent-call"), frozenset({"I1", "I2"})),
    Case("no-namespacing", regression("mixed"), frozenset({"I1", "I11"})),
    Case(
        "forward-to-all",
        regression("colliding-ids"),
        frozenset({"I2", "I4", "I10"}),
        quiet=frozenset({"I1"}),
    ),
    Case("drop-model-state", regression("stateful-model"), frozenset({"I5", "I6"})),
    Case(
        "drop-conversation-manager-state",
        regression("sliding-window"),
        frozenset({"I6"}),
        quiet=DELIVERY,
    ),
    Case("exposed-continuation", regression("event-payload"), frozenset({"I8"}), quiet=DELIVERY),
    Case(
        "restored-turn-streamed-again",
        regression("restored-turn-not-re-emitted"),
        frozenset({"I8"}),
        quiet=DELIVERY,
    ),
    Case("swallow-restore-failure", regression("schema-skew-payload-missing"), frozenset({"I9"})),
    # a damaged turn fails the rebuild that follows the damage, not the answer to its call: every
    # later step finds nothing rebuilt, and the question the refusal must keep pending is gone
    Case("restore-at-load", regression("schema-skew-payload-missing"), frozenset({"I9"})),
    Case("rebuild-context", regression("partial-answers"), frozenset({"I2", "O"})),
    Case("no-ownership-check", regression("shared-session"), frozenset({"I3", "I10"})),
    Case(
        "resume-by-responses",
        inline("parked-beside-answered", PARKED_BESIDE_ANSWERED),
        frozenset({"I2", "I3"}),
    ),
    Case(
        "history-accumulation",
        inline("three-calls-in-a-row", THREE_CALLS_IN_A_ROW),
        frozenset({"I7"}),
        quiet=DELIVERY,
    ),
    Case(
        "swap-twin-answers",
        regression("twin-calls-answered-one-by-one"),
        frozenset({"I2", "I10", "O"}),
        quiet=frozenset({"I1", "I4"}),
    ),
    # twin calls sharing a label, answered per call: only the per-call judgment of I2 sees it
    Case(
        "swap-twin-answers",
        regression("twin-calls-answered-per-call"),
        frozenset({"I2"}),
        quiet=frozenset({"I3", "I4", "I10", "O"}),
    ),
    # twin calls' results crossed after a resume: only I2's per-call reading of the results
    # the parent's model was sent sees it (nothing ran wrongly, the root's answer is its own)
    Case(
        "swap-twin-results",
        regression("twin-calls-results-per-call"),
        frozenset({"I2"}),
        quiet=frozenset({"I3", "I4", "I10", "O"}),
    ),
    Case("swap-twin-results", regression("twin-calls-answer-order"), frozenset({"I2"})),
    # a second call of one ephemeral sub-agent turned away while the first's turn is parked:
    # its question never goes up (I3), the caller's model gets an error for its answer (I2)
    Case("busy-sub-agent", regression("twin-calls"), frozenset({"I2", "I3"})),
    # ... and turned away whoever calls it: the second user's call under the first's toolUseId
    # is never asked (I3), its caller's model gets an error (I2) and its turn ends (O)
    Case(
        "busy-across-sessions",
        coverage_regression("two-root-sessions"),
        frozenset({"I2", "I3", "O"}),
    ),
    # ... and turned away whenever an earlier call of the message stands, where the first twin
    # answered at once and the second was the one to ask: its question is never shown at depth
    # (I3, I11), its approval never delivered (I2), and the turn ends without it (O)
    Case(
        "one-call-per-message",
        regression("deep-twin-calls-the-asking-one-turned-away"),
        frozenset({"I2", "I3", "I11", "O"}),
    ),
    # an action's second question asked under its first's id (I12), which the first answer,
    # re-sent, is then taken for, though it names an answered question (I14)
    Case("call-named-questions", regression("re-interrupt"), frozenset({"I12", "I14"})),
    # an answered question's answer re-sent is taken (I14) and sent down to the call that asked,
    # which fails (its parent's model told an error in its place: I2, O) and loses the question
    # it asked since (I3)
    Case(
        "stale-answer-fails-its-call",
        regression("stale-answer-sub-agent-asks-again"),
        frozenset({"I2", "I3", "I14", "O"}),
    ),
    # both of strands' bugs at once: the clerk's twin call turned away (I2, I3, I11 at the run),
    # then the first answer re-sent taken (I14) and its call failed, its questions lost (I3, I11)
    Case(
        "busy-sub-agent-takes-stale-answers",
        regression("twin-calls-turned-away-then-the-answer-re-sent"),
        frozenset({"I2", "I3", "I11", "I14"}),
    ),
    # the root stored without its parked turn: after the restart nothing is pending (I5, D),
    # the answer finds no turn to resume (O), its action never runs (I2) and the sub-agent's
    # model is never asked again (I6), nor its tool after the question run (I15)
    Case(
        "parked-turn-not-stored",
        regression("clerk-called-again-restart-between-answers"),
        frozenset({"D", "I2", "I5", "I6", "I15", "O"}),
    ),
    # a refused answer stays attached to the questions it named, still pending (I12 alone)
    Case("refused-answer-attached", regression("schema-skew-answer-re-sent"), frozenset({"I12"})),
    # a turn that ends is not stored: its continuation outlives the turn in the store (I7), and a
    # restart after the end brings back the interrupted turn, so the next prompt is refused (O)
    # and the run differs from its control (D, I5)
    Case(
        "ended-turn-not-stored", regression("restart-anywhere"), frozenset({"D", "I5", "I7", "O"})
    ),
    # a preserve_context session left out of the store once its turn ends: after a restart
    # while nothing waits, its next call starts without its history (I6) and its question is
    # named as a first call's (I5, D)
    Case(
        "idle-session-not-stored",
        regression("preserve-context-history-across-an-idle-restart"),
        frozenset({"D", "I5", "I6"}),
    ),
    Case("reuse-stale-answers", regression("stale-answer-id"), frozenset({"I14", "O"})),
    Case("reuse-stale-answers", regression("re-interrupt"), frozenset({"I14", "I2", "I3"})),
    # the next prompt's question, asked under the same toolUseIds, takes the re-sent answer
    # (I14: it ran, the question is gone; I3) where no restart came between
    Case(
        "resent-answer-routed-from-memory",
        regression("stale-answer-next-prompt"),
        frozenset({"I14", "I2", "I3", "O"}),
    ),
    # ... and a restart between empties the table: the re-send is refused, as it must be (no
    # I14), and only the difference from the run without restarts shows the bug (D, I5, I6)
    Case(
        "resent-answer-routed-from-memory",
        inline("resent-after-a-restart-and-a-new-prompt", RESENT_AFTER_A_RESTART_AND_A_NEW_PROMPT),
        frozenset({"D", "I5", "I6"}),
        quiet=frozenset({"I14", "O"}),
    ),
    # the clerk's approval reaches the auditor's call under the same toolUseId (I1), which asks
    # its second question under its first's id (I12); the approval re-sent is taken for it, so
    # the auditor's action runs unapproved (I4, I14)
    Case(
        "ids-of-the-call-alone",
        SHARED_TOOL_USE_ID_RE_SENT,
        frozenset({"I1", "I4", "I12", "I14"}),
    ),
    # ... where each question keeps its own name (no-namespacing alone), the auditor's second
    # question has an id of its own: the re-send names nothing pending and is refused
    Case(
        "no-namespacing",
        SHARED_TOOL_USE_ID_RE_SENT,
        frozenset({"I1", "I3"}),
        quiet=frozenset({"I4", "I12", "I14"}),
    ),
    # the root's last request sent again at the first step after the restart, a refused re-send:
    # one request the run without restarts never made (D, I6), the refusal as it must be
    Case(
        "last-request-replayed-when-rebuilt",
        inline("resent-after-an-idle-restart", RESENT_AFTER_AN_IDLE_RESTART),
        frozenset({"D", "I6"}),
        quiet=frozenset({"I14", "O"}),
    ),
    # the re-sent first answer, once the turn has ended, runs the prompt again: the action asks
    # again (I3, I10) where the answer had to be refused (I14)
    Case(
        "resume-runs-the-prompt-again",
        regression("re-interrupt"),
        frozenset({"I3", "I10", "I14"}),
    ),
    # the re-sent first answer answers the action's second question, which runs it (I4, I14),
    # and is then refused with the turn's state dropped: the second question still waits
    Case(
        "stale-answer-refused-once-carried-out",
        regression("re-interrupt"),
        frozenset({"I4", "I14"}),
        quiet=frozenset({"I3", "O"}),
    ),
    Case(
        "stale-answer-ends-the-turn",
        regression("stale-answer-after-the-next-prompt"),
        frozenset({"I13", "I14", "O"}),
    ),
    Case("gate-answers-nested", regression("gated-agent-call"), frozenset({"I2", "I4", "O"})),
    Case("gate-asked-again", regression("gated-agent-call"), frozenset({"I2", "I3", "O"})),
    Case("replay-turn", regression("lookup-then-ask"), frozenset({"I15"}), quiet=DELIVERY),
    # the lookup and the note, made before the restart, are delivered again at it: each runs
    # twice (I15 at the restart), and nothing else differs
    Case(
        "effects-delivered-again-at-a-restart",
        regression("lookup-then-ask"),
        frozenset({"I15"}),
        quiet=DELIVERY,
    ),
    Case("drop-gone-calls", regression("deploy-renames-sub-agent"), frozenset({"I3", "I9", "O"})),
    Case("drop-gone-calls", regression("deploy-drops-tool"), frozenset({"I3", "I9", "O"})),
    Case("retry-reuses-ids", regression("retried-agent-call"), frozenset({"O"})),
    Case("retry-reuses-ids", regression("retried-action-after-denial"), frozenset({"I3", "O"})),
    Case("retry-reuses-ids", regression("retried-action-after-result"), frozenset({"I4", "O"})),
    Case("retry-reuses-ids", regression("retried-gated-call"), frozenset({"I3", "O"})),
    Case("truncated-ids", regression("adversarial-ids"), frozenset({"I1", "I2", "I3", "I4"})),
    # two agent tools over clones of one agent: registered under the agent's name, the calls
    # of both tool names find no tool
    Case("tools-named-by-agent", regression("clone-sub-agents"), frozenset({"I2", "I3", "O"})),
    # an answer without an id while two questions are pending: refused by the reference, taken
    # for both by the variant; a lone question answered so runs on both
    Case(
        "one-answer-for-all",
        regression("resume-without-id-two-pending"),
        frozenset({"I14", "O"}),
    ),
    Case(
        "one-answer-for-all",
        regression("resume-without-id-one-pending"),
        frozenset(),
        quiet=frozenset({"I2", "I3", "I4", "I14", "O"}),
    ),
    # a restored turn sent without the lookup result it parked with, in the control run too:
    # only I16, judging each request on its own, sees it
    Case(
        "drop-restored-result",
        regression("lookup-then-ask"),
        frozenset({"I16"}),
        quiet=DELIVERY | {"I5", "I6", "I15", "D", "O"},
    ),
    # a message's results with its last result twice, the lookup's beside the answered call's
    # after the resume, in the control run too: only I16 sees it
    Case(
        "last-result-twice",
        regression("lookup-then-ask"),
        frozenset({"I16"}),
        quiet=DELIVERY | {"I5", "I6", "I15", "D", "O"},
    ),
    # billing and shipping, called in one message, each asked the other's prompt (O); the
    # approval of each one's action reaches the call of the other prompt (I2); no question is
    # lost or asked twice
    Case(
        "crossed-inputs",
        regression("two-answers-then-a-sub-agent-asks-again"),
        frozenset({"O", "I2"}),
        quiet=frozenset({"I3", "I4", "I10", "I14"}),
    ),
    # the later prompt's call reuses the finished call's toolUseId: the root's kept approval runs
    # its action again without asking (I10, I4: twice over the scenario), so its question is
    # missing (I3, I11); nothing is refused
    Case(
        "approvals-kept",
        regression("deep-call-reuses-a-finished-id-then-a-new-prompt"),
        frozenset({"I3", "I4", "I10", "I11"}),
        quiet=frozenset({"O"}),
    ),
    # the later prompt's sub-agent call runs its actions under the toolUseIds the first call's
    # were answered under: the agent tool's kept answers run them without asking (I10, I4), so
    # their questions are missing (I3)
    Case(
        "approvals-on-the-tool",
        regression("cancelled-question-shown-late-then-a-new-prompt"),
        frozenset({"I3", "I4", "I10"}),
    ),
    # after the restart the first answer's save goes through and the second's is refused: that
    # step carries out its answer as the run without restarts does, then fails (I5, D: only its
    # stop reason differs; O: the error), and no action is lost or run twice
    Case(
        "saves-under-the-loaded-version",
        regression("partial-answers"),
        frozenset({"D", "I5", "O"}),
        quiet=frozenset({"I2", "I3", "I4"}),
    ),
    # the restart comes after the first prompt's turn has ended; the answer to the next prompt's
    # question is carried out as the run without restarts carries it out, each model request
    # sent twice: only the number of requests differs (D) and what each one is (I6)
    Case(
        "answers-sent-twice-when-rebuilt",
        regression("ephemeral-call-after-a-restart"),
        frozenset({"D", "I6"}),
        quiet=frozenset({"I2", "I3", "I4", "I5", "O"}),
    ),
    # after the restart the approval reaches its call and the action answers that it is done,
    # but nothing was carried out: the model's requests and the questions are the run without
    # restarts' (no I3, I6 or I10), only the approved action is missing (I2, I5, D)
    Case(
        "actions-dry-run-when-rebuilt",
        regression("colliding-ids"),
        frozenset({"D", "I2", "I5"}),
        quiet=frozenset({"I3", "I6", "I10", "O"}),
    ),
    # after the restart the next prompt's question is denied where it is asked: it never
    # reaches the root (I3, I5: nothing pending where the run without restarts waits), the
    # order is never placed (I2) and the turn ends (O); the requests before it are the run
    # without restarts' (no I6)
    Case(
        "questions-denied-when-rebuilt",
        regression("ephemeral-call-after-a-restart"),
        frozenset({"I2", "I3", "I5", "O"}),
        quiet=frozenset({"I6"}),
    ),
    # after the restart the approval is not heard: the action asks again, nothing runs, and the
    # run goes on waiting where the run without restarts went on (I6 "none", D)
    Case(
        "answers-unheard-when-rebuilt",
        regression("deep-nesting"),
        frozenset({"I2", "I3", "I5", "I6", "D"}),
    ),
    # session a's question is shown in session b too: two questions under one id at b's run
    # (I1, I3, I10), and after b's turn ends it still shows a's (I3, I13); nothing runs twice
    # and no approval goes astray (no I2, I4)
    Case(
        "every-sessions-questions-shown",
        coverage_regression("two-root-sessions"),
        frozenset({"I1", "I3", "I10", "I13"}),
        quiet=frozenset({"I2", "I4"}),
    ),
    # after the restart the clerk's second question waits but is not shown: an interrupt with no
    # question (I13), the question missing where the run without restarts shows it (I3, I5, D);
    # nothing runs that should not (no I2, I4)
    Case(
        "questions-unlisted-when-rebuilt",
        regression("clerk-called-again-restart-between-answers"),
        frozenset({"D", "I3", "I5", "I13"}),
        quiet=frozenset({"I2", "I4"}),
    ),
    # the answer to both questions is refused loudly (the publisher's publish is gone), but only
    # after the root's send ran: an action run on a refused answer (I9, I11, I4); the refusal
    # itself is the one the scenario expects (no O)
    Case(
        "runs-before-it-refuses",
        regression("deploy-renames-a-hidden-sub-agent-question"),
        frozenset({"I4", "I9", "I11"}),
        quiet=frozenset({"O"}),
    ),
)


def fired(target: Target, scenario: tuple[str, Scenario]) -> set[str]:
    name, data = scenario
    history = run_scenario(target, data, name)
    assert not history.not_applicable
    return {violation.invariant for violation in check(history)}


def comparable(history: History) -> dict[str, Any]:
    """A history without the target's name, to compare runs of two targets."""
    data = history.to_json()
    data["target"] = None
    if data["control"] is not None:
        data["control"]["target"] = None
    return data


# variants only a crash inside a step shows (no scenario step crashes): the crash campaign
CAUGHT_BY_CRASHES = {"no-write-ahead": regression("colliding-ids")}


# variants whose bug only a restart that is a new process shows (module state): the real restart
CAUGHT_BY_REAL_RESTARTS = {
    "process-memory": (
        regression("nested-approval-survives-a-new-process"),
        frozenset({"I2", "I3", "I5", "O"}),
    )
}


def test_every_variant_has_a_catching_scenario() -> None:
    caught = {case.slug for case in CASES} | set(CAUGHT_BY_CRASHES) | set(CAUGHT_BY_REAL_RESTARTS)
    assert caught == set(VARIANTS)


@pytest.mark.parametrize("slug", sorted(CAUGHT_BY_REAL_RESTARTS))
def test_the_variant_is_caught_by_a_real_restart_and_missed_by_an_in_process_one(
    slug: str,
) -> None:
    scenario, fires = CAUGHT_BY_REAL_RESTARTS[slug]
    variant = VARIANTS[slug]()
    assert fired(ReferenceTarget(), scenario) == set()
    assert fired(ForkIsolated("reference", ReferenceTarget()), scenario) == set()
    assert fired(variant, scenario) == set()  # rebuilt in this process, it remembers
    seen = fired(ForkIsolated(variant.info.name, variant), scenario)
    assert fires <= seen, f"{slug} on {scenario[0]}: fired {sorted(seen)}"


@pytest.mark.parametrize("slug", sorted(CAUGHT_BY_CRASHES))
def test_the_variant_runs_an_action_twice_across_a_crash_where_the_reference_does_not(
    slug: str,
) -> None:
    scenarios = [CAUGHT_BY_CRASHES[slug]]
    reference = crash_campaign(ReferenceTarget(), scenarios)
    assert reference
    assert all(case.crashed for case in reference)
    assert not [case for case in reference if case.twice]
    variant = crash_campaign(VARIANTS[slug](), scenarios)
    twice = [case for case in variant if case.twice]
    assert twice
    # the crash right after the action, before anything is persisted, is the one
    assert {case.point.boundary for case in twice} >= {"action"}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_variant_is_caught_where_the_reference_holds(case: Case) -> None:
    assert fired(ReferenceTarget(), case.scenario) == set()
    seen = fired(VARIANTS[case.slug](), case.scenario)
    assert case.fires <= seen, f"{case.slug} on {case.scenario[0]}: fired {sorted(seen)}"
    assert not case.quiet & seen, f"{case.slug} on {case.scenario[0]}: fired {sorted(seen)}"


SKEWED = [path for path in regression_files() if path.stem.startswith("schema-skew-")]


@pytest.mark.parametrize("path", SKEWED, ids=[path.stem for path in SKEWED])
def test_a_swallowed_restore_failure_is_caught_for_every_kind_of_skew(path: Path) -> None:
    scenario = (path.stem, load_scenario(path))
    assert fired(ReferenceTarget(), scenario) == set()
    assert {"I9", "I3"} <= fired(VARIANTS["swallow-restore-failure"](), scenario)


def test_a_variant_describes_itself_as_the_reference_with_one_bug() -> None:
    reference = ReferenceTarget.info
    for slug, build in VARIANTS.items():
        info = build().info
        assert info.name == f"bad-{slug}"
        assert info.version == harness.__version__
        assert info.capabilities == reference.capabilities
        assert info.corruptions == reference.corruptions
        assert info.description.strip()
        assert "\n" not in info.description


def test_known_bad_lists_every_variant_with_its_description() -> None:
    assert [slug for slug, _ in KNOWN_BAD] == list(VARIANTS)
    for slug, description in KNOWN_BAD:
        assert VARIANTS[slug]().info.description == description


def test_the_registry_builds_variants_by_name_but_never_lists_them() -> None:
    target = registry.get("bad-no-namespacing")
    assert target.info.name == "bad-no-namespacing"
    assert not [name for name in registry.available() if name.startswith("bad-")]
    assert set(registry.variants()) == {f"bad-{slug}" for slug in VARIANTS}
    assert registry.get("reference").info.name == "reference"


def test_an_unknown_variant_is_an_unknown_target() -> None:
    with pytest.raises(registry.UnknownTarget, match="bad-x"):
        registry.get("bad-x")


@pytest.mark.parametrize("seam", [AnswersByLocalIdTool, RestoreHookTool])
def test_a_seam_left_as_is_behaves_exactly_like_the_reference(seam: type[SubAgentTool]) -> None:
    """The variants' seams wrap reference code; with nothing overridden they must record the
    reference's history on every regression file."""
    unchanged = VariantTarget(Variant("unchanged", "the seam alone", tool_class=seam))
    for path in regression_files():
        scenario = load_scenario(path)
        expected = comparable(run_scenario(ReferenceTarget(), scenario, path.stem))
        assert comparable(run_scenario(unchanged, scenario, path.stem)) == expected, path.stem


@pytest.mark.parametrize(
    "slug", ["no-namespacing", "forward-to-all", "no-ownership-check", "resume-by-responses"]
)
def test_a_routing_variant_overrides_a_seam_and_keeps_the_references_calls(slug: str) -> None:
    """A routing bug goes back in through the reference's seams (``owns``, ``responses``), never
    through a copy of the ``prepare`` and ``run`` that call them."""
    target = VARIANTS[slug]()
    assert isinstance(target, VariantTarget)
    tool_class = target.variant.tool_class
    assert tool_class.prepare is SubAgentTool.prepare
    assert tool_class.run is SubAgentTool.run
    assert any(
        getattr(tool_class, seam) is not getattr(SubAgentTool, seam)
        for seam in ("owns", "responses")
    )


def test_running_variants_leaves_the_reference_unchanged() -> None:
    name, scenario = regression("colliding-ids")
    before = comparable(run_scenario(ReferenceTarget(), scenario, name))
    for build in VARIANTS.values():
        run_scenario(build(), scenario, name)
    assert comparable(run_scenario(ReferenceTarget(), scenario, name)) == before


def _resumes(scenario: Scenario) -> bool:
    return any(getattr(step, "resume", None) is not None for step in scenario.steps)


def _names_tools(scenario: Scenario) -> bool:
    return any(agent.tool_name is not None for agent, _ in scenario.tree.walk())


@pytest.mark.parametrize(
    ("slug", "uses"),
    [("one-answer-for-all", _resumes), ("tools-named-by-agent", _names_tools)],
)
def test_a_variant_of_a_language_addition_is_caught_only_where_a_file_uses_it(
    slug: str, uses: Any
) -> None:
    """Each of these variants differs from the reference only in what an addition to the
    language expresses (an answer without an id, a tool name apart from the agent's): every
    regression file that does not use it holds on the variant, so only the addition catches it."""
    variant = VARIANTS[slug]()
    for path in regression_files():
        scenario = load_scenario(path)
        if not uses(scenario):
            assert fired(variant, (path.stem, scenario)) == set(), path.stem

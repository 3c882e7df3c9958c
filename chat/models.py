"""Threads, messages, tool calls and runs: the checkpoint a run can always be continued from."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .indexes import DescNullsLastIndex

# What the model is told of a call a person declined or answered in its place (ToolCall.decide).
REJECTED_RESULT = "The user declined this tool call; it did not run."
RESPONDED_RESULT = "The user did not run this tool and replied instead: {message}"


class Source(models.TextChoices):
    """Where a thread or a run was started: a browser tab, a program through the API (docs/api.md), a schedule or a
    webhook trigger (docs/background.md)."""

    CHAT = "chat"
    API = "api"
    SCHEDULE = "schedule"
    TRIGGER = "trigger"


class Thread(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="threads")
    title = models.CharField(max_length=200, blank=True)
    # A number none of the thread's events has reached yet: where its event log starts counting after a restart
    # (or after Redis lost its data), so that no number a tab has seen is given out again (delivery/log.py).
    last_seq = models.BigIntegerField(default=0)
    # The model the person picked: a model configuration's id, or "default"; blank is the default too.
    model_choice = models.CharField(max_length=200, blank=True, default="")
    # The agent the thread was started with (docs/agents.md); null: none, the chat as before agents.
    agent = models.ForeignKey("agents.Agent", on_delete=models.SET_NULL, null=True, blank=True, related_name="threads")
    # The summary of its older turns the model is sent in their place (context strategy `summarise`, chat/summaries.py),
    # and the order of the last message it covers: on the row itself, so a turn reads it with the thread (no statement
    # of its own). Each summary made is also a ThreadSummary.
    summary = models.TextField(blank=True)
    summary_through = models.PositiveIntegerField(null=True, blank=True)
    # The sidebar's pin (listed first, newest pin first) and archive (out of the list, under "Archived"): when the
    # person did it, null when not (POST /t/<id>/pin and /archive, docs/protocol.md).
    pinned_at = models.DateTimeField(null=True, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    # Some message of the thread has an earlier version (an edit, a regenerate: chat/store/versions.py): only then
    # does a snapshot read the versions, so a thread that never had one costs no statement more.
    has_versions = models.BooleanField(default=False)
    # The names of the tools the person turned off for this chat (the Tools panel, `thread.set_tool`): never offered to
    # the model, and a call of one anyway gets an error result, never runs (chat/runs/execute.py). Read with the row.
    disabled_tools = models.JSONField(default=list, blank=True)
    # Where the thread was started: the sidebar marks the API's.
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CHAT)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["owner", "-updated_at"]),
            # The sidebar's two lists (chat/store/turns.py list_threads, list_archived_threads) read in their order,
            # as far as they show: a person with 10,000 chats had every one read and sorted on each page (issue 42).
            DescNullsLastIndex(
                "owner",
                F("pinned_at").desc(nulls_last=True),
                F("updated_at").desc(),
                condition=Q(archived_at__isnull=True),
                name="thread_sidebar",
            ),
            models.Index(
                fields=["owner", "-archived_at"], condition=Q(archived_at__isnull=False), name="thread_archived"
            ),
        ]

    def __str__(self):
        return self.title or str(self.id)


class Run(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running"
        WAITING = "waiting"
        COMPLETED = "completed"
        FAILED = "failed"
        CANCELLED = "cancelled"
        INTERRUPTED = "interrupted"

    ACTIVE_STATUSES = (Status.RUNNING, Status.WAITING)

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    # Why a completed run ended: done, return_direct, max_steps.
    reason = models.CharField(max_length=32, blank=True)
    steps = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    model_label = models.CharField(max_length=300, blank=True)
    # Model calls this run may make before it stops with reason max_steps; "continue" raises it.
    step_limit = models.PositiveIntegerField(default=25)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written every few seconds by the process executing the run: a stale one means that process died.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # The channel on which that process's live run reads its group `run.<thread>` (chat/runs/registry.py): blank until a
    # process takes the run. A Stop from another process is sent to that group.
    owner = models.CharField(max_length=200, blank=True)
    # What the person should know about how the run went (a tool call found in the text, a trimmed history).
    notes = models.JSONField(default=list, blank=True)
    # The run's tokens so far, summed over its model calls (chat/usage.py): {input_tokens, output_tokens, estimated,
    # cost}. Written with its pause and its end; each call's own row is a Usage.
    usage = models.JSONField(null=True, blank=True)
    # Who asked for the run: a browser tab, or a program with one of the person's API keys (kept on its usage rows).
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CHAT)
    api_key = models.ForeignKey("api.ApiKey", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        ordering = ["started_at", "id"]
        # A snapshot's "the thread's latest run" in one index step, however many runs a year of turns left (issue 42).
        indexes = [models.Index(fields=["thread", "-started_at", "-id"], name="run_latest_in_thread")]

    # The database, not a lock in one process, guarantees one active run per thread. Set here rather than in Meta,
    # whose body cannot see the class's own names.
    Meta.constraints = [
        models.UniqueConstraint(
            fields=["thread"], condition=Q(status__in=list(ACTIVE_STATUSES)), name="one_active_run_per_thread"
        )
    ]

    def __str__(self):
        return f"Run {self.pk} ({self.status})"

    def is_active(self) -> bool:
        """Running or waiting for a person: the thread takes no other run meanwhile."""
        return self.status in self.ACTIVE_STATUSES

    def can_retry(self) -> bool:
        """A run that did not get to its end (failed, interrupted, stopped) may be answered again."""
        return self.status in (self.Status.FAILED, self.Status.INTERRUPTED, self.Status.CANCELLED)

    def can_continue(self) -> bool:
        """A run stopped by its step limit may go on, with a new limit."""
        return self.status == self.Status.COMPLETED and self.reason == "max_steps"


class ShownMessages(models.Manager):
    """The messages of the branch each thread shows: every reader (the model's history, snapshots, exports, shares,
    summaries, search) sees the current branch without a filter of its own."""

    def get_queryset(self):
        return super().get_queryset().filter(active=True)


class Message(models.Model):
    class Role(models.TextChoices):
        SYSTEM = "system"
        USER = "user"
        ASSISTANT = "assistant"
        TOOL = "tool"

    class Status(models.TextChoices):
        STREAMING = "streaming"
        COMPLETE = "complete"
        CANCELLED = "cancelled"
        ERROR = "error"

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="messages")
    order = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True)
    # The model's thinking (<think>…</think>, reasoning_content, Anthropic thinking): shown collapsed, never
    # sent back to the model.
    reasoning = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPLETE)
    finish_reason = models.CharField(max_length=32, blank=True)
    # Tool messages: which call they answer, the tool's name, and what the model never sees.
    tool_call_id = models.CharField(max_length=128, blank=True)
    name = models.CharField(max_length=128, blank=True)
    artifact = models.JSONField(null=True, blank=True)
    usage = models.JSONField(null=True, blank=True)
    # A structured final answer (providers/structured.py): the JSON value of `content`, validated against the run's
    # schema. Null for every other message.
    structured = models.JSONField(null=True, blank=True)
    # A user message's attachments as the thread shows them (attachments/services.py summary): read with the message,
    # so a history without attachments costs no statement more; the rows (attachments.Attachment) hold the files.
    attachments = models.JSONField(null=True, blank=True)
    # Makes message.send idempotent: a replayed frame finds the message it already created.
    client_msg_id = models.UUIDField(null=True, blank=True)
    # Versions (chat/store/versions.py, docs/architecture.md). A thread's messages form a tree whose branch shown is the
    # `active` one; orders are contiguous along a branch. `parent` is set where a version can start, and only there:
    # on a user message, the message before it on its branch (null for a thread's first); on a run's first answer
    # to a user message, that message. The versions of a point are the messages of its thread with the same parent
    # and role, in the order they were made. `hidden_under`: on a message of a branch not shown, the version whose
    # branch it is (its id): showing that version again shows these messages, as they were when it was left.
    parent = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    active = models.BooleanField(default=True)
    hidden_under = models.BigIntegerField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # The default manager (and so `thread.messages`) sees the branch shown; `all_versions` every message. Cascading
    # deletes use the unfiltered base manager: a thread's delete takes every version with it.
    objects = ShownMessages()
    all_versions = models.Manager()

    class Meta:
        ordering = ["thread", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["thread", "order"], condition=Q(active=True), name="message_order_unique_in_branch"
            ),
            models.UniqueConstraint(
                fields=["thread", "client_msg_id"],
                condition=Q(client_msg_id__isnull=False),
                name="client_msg_id_unique_in_thread",
            ),
        ]
        # The versions of a thread's first question (no parent: chat/store/versions.py versions_of) without reading
        # the thread's other parentless messages (its tool results, its later model calls) (issue 42).
        indexes = [
            models.Index(
                fields=["thread", "order"], condition=Q(parent__isnull=True, role="user"), name="message_first_question"
            )
        ]

    def __str__(self):
        return f"{self.role} #{self.order}"

    def is_version_point(self) -> bool:
        """A user message (edits make its versions) or a run's first answer to one (regenerations make them)."""
        return self.role == self.Role.USER or (self.role == self.Role.ASSISTANT and self.parent_id is not None)


class ThreadSummary(models.Model):
    """A summary of a thread's older turns, made when its history passed a share of the model's window (context
    strategy `summarise`, chat/summaries.py): what it says, the order of the last message it covers, which model
    made it and what that cost (its Usage row too). The thread's current one is also on the thread's row."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="summaries")
    run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    text = models.TextField()
    through_order = models.PositiveIntegerField()
    # The last message it covers: the summary holds for a branch that shows that message (chat/store/versions.py).
    through_message = models.ForeignKey(Message, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    model_label = models.CharField(max_length=300, blank=True)
    usage = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["thread", "created_at", "id"]

    def __str__(self):
        return f"Summary of {self.thread_id} through #{self.through_order}"


class ToolCall(models.Model):
    class Status(models.TextChoices):
        STREAMING = "streaming"
        REQUESTED = "requested"
        AWAITING_APPROVAL = "awaiting_approval"
        RUNNING = "running"
        SUCCESS = "success"
        ERROR = "error"
        REJECTED = "rejected"
        # Not run: the person answered in its place (an approval's "respond"); the model gets that answer.
        REPLIED = "replied"
        CANCELLED = "cancelled"

    # Calls without a result yet: a run that stops closes them (cancelled), so the history stays one a model accepts.
    OPEN_STATUSES = (Status.STREAMING, Status.REQUESTED, Status.RUNNING, Status.AWAITING_APPROVAL)
    # Calls of a paused step whose result comes when the run resumes: approved (requested) or still waiting.
    PENDING_STATUSES = (Status.REQUESTED, Status.AWAITING_APPROVAL)
    # Calls that ended with a result rather than an error: the tool's, or a person's reply in its place.
    ANSWERED_STATUSES = (Status.SUCCESS, Status.REPLIED)

    # Made in Python when the model starts the call, so the card has its id before the row is written.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="tool_calls")
    index = models.PositiveIntegerField(default=0)
    call_id = models.CharField(max_length=128)
    name = models.CharField(max_length=128)
    args = models.JSONField(default=dict, blank=True)
    # The arguments as the model wrote them, when a person edited them before approving.
    original_args = models.JSONField(null=True, blank=True)
    # The choices offered while the call awaits approval: {"approve", "edit", "reject", "respond"} → bool.
    approval = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.REQUESTED)
    result = models.TextField(blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # How many images of its artifact a card shows (tools/artifacts.py): a page that loads the call opens its card to
    # show them, as the live event does, without reading the artifact to find out.
    images = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["message", "index"]

    def __str__(self):
        return f"{self.name} ({self.status})"

    def is_open(self) -> bool:
        return self.status in self.OPEN_STATUSES

    def finish(self, status: str, text: str) -> None:
        """The call ended with `status`; `text` is its result on success (or a person's reply), else its error.
        Held, not saved: the run writes a step's calls together."""
        self.status, self.finished_at = status, timezone.now()
        self.result, self.error = (text, "") if status in self.ANSWERED_STATUSES else ("", text)

    def decide(self, decision: str, *, args: dict | None = None, message: str = "") -> bool:
        """Apply a person's decision to this waiting call and save it. False, and nothing changed, when the call
        no longer waits: the conditional UPDATE is the lock, so of two simultaneous decisions one changes the row.
        A rejected or answered call is finished here; an approved or edited one goes back to requested."""
        changes: dict = {"status": self.Status.REQUESTED}
        if decision == ToolCallDecision.Decision.EDIT:
            changes.update(args=args, original_args=self.args)
        elif decision == ToolCallDecision.Decision.REJECT:
            reason = REJECTED_RESULT + (f" Their reason: {message}" if message else "")
            changes.update(status=self.Status.REJECTED, result="", error=reason, finished_at=timezone.now())
        elif decision == ToolCallDecision.Decision.RESPOND:
            # The person's answer is the call's result, not an error: the model reads it as what the user said.
            reply = RESPONDED_RESULT.format(message=message)
            changes.update(status=self.Status.REPLIED, result=reply, error="", finished_at=timezone.now())
        waiting = ToolCall.objects.filter(pk=self.pk, status=self.Status.AWAITING_APPROVAL)
        if not waiting.update(**changes):
            return False
        for name, value in changes.items():
            setattr(self, name, value)
        return True


class OpenInputRequest(models.Model):
    """A running tool's request for the person's input while it is open (chat/runs/interaction.py): the request
    itself lives in the run's process, this row only lets the approvals inbox (inbox/) list it from any process.
    Deleted when the request closes; a row whose run is no longer running (its process died) is not shown."""

    id = models.CharField(max_length=32, primary_key=True)  # the request's id, as events name it
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")
    # The ToolCall's id as events give it (its row may not be written yet while the step's tools run).
    tool_call = models.UUIDField()
    tool_name = models.CharField(max_length=128, blank=True)
    message = models.TextField(blank=True)
    schema = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["thread", "-created_at"])]


class ToolCallDecision(models.Model):
    """Who decided what about a call that awaited approval, and when: the audit trail."""

    class Decision(models.TextChoices):
        APPROVE = "approve"
        EDIT = "edit"
        REJECT = "reject"
        RESPOND = "respond"

    tool_call = models.OneToOneField(ToolCall, on_delete=models.CASCADE, related_name="decision")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    decision = models.CharField(max_length=16, choices=Decision.choices)
    message = models.TextField(blank=True)
    original_args = models.JSONField(default=dict, blank=True)
    edited_args = models.JSONField(null=True, blank=True)
    # "Approve for the rest of this thread" was chosen with this decision.
    for_thread = models.BooleanField(default=False)
    decided_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.decision} {self.tool_call_id}"


class ThreadToolGrant(models.Model):
    """A tool a person approved for the rest of a thread: its calls there no longer wait."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="tool_grants")
    tool_name = models.CharField(max_length=128)
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["thread", "tool_name"], name="one_grant_per_tool_and_thread")]

    def __str__(self):
        return f"{self.tool_name} in {self.thread_id}"


class Usage(models.Model):
    """One model call's tokens, and its cost when its model configuration is priced: what the admin's report and
    the daily token budget add up (chat/usage.py). Written with the run's end or pause, one INSERT for its calls.
    Kept when its thread or run is deleted: what was spent stays spent. No secrets: counts, names, a price."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    thread = models.ForeignKey(Thread, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    model_config = models.ForeignKey(
        "modelconfig.ModelConfiguration",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("model configuration"),
        help_text=_(
            "Empty: the model from the AGENTWEB_LLM_* environment variables (or a configuration since deleted)."
        ),
    )
    # The model as the run named it (the configuration's name, or the environment's model and server).
    model_label = models.CharField(_("model"), max_length=300, blank=True)
    # The agent the thread uses, by slug: empty until agents exist (issue 14, items 1-5).
    agent = models.CharField(max_length=100, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    # The server sent no count (or only one of the two): estimated from the text, about four characters a token.
    estimated = models.BooleanField(default=False)
    # In the configuration's prices' currency; null when it has no price.
    cost = models.DecimalField(max_digits=16, decimal_places=6, null=True, blank=True)
    # The run's: through the API, and with which key (null once the key is deleted; `source` stays).
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CHAT)
    api_key = models.ForeignKey(
        "api.ApiKey", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("API key")
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("usage")
        verbose_name_plural = _("usage")
        indexes = [models.Index(fields=["user", "created_at"])]

    def __str__(self):
        return f"{self.input_tokens} in / {self.output_tokens} out"

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class TokenBudget(models.Model):
    """A person's own daily token budget, in place of AGENTWEB_DAILY_TOKEN_BUDGET (chat/usage.py)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="token_budget")
    daily_tokens = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=_(
            "Tokens (input and output) this person may spend per day (UTC) before new runs are refused."
            " Blank: no budget for this person, whatever AGENTWEB_DAILY_TOKEN_BUDGET says."
        ),
    )

    class Meta:
        verbose_name = _("daily token budget")

    def __str__(self):
        return f"{self.user}: {self.daily_tokens if self.daily_tokens is not None else 'no budget'}"


class GroupTokenBudget(models.Model):
    """A group's daily token budget: its members' in place of AGENTWEB_DAILY_TOKEN_BUDGET, unless a person has their
    own (TokenBudget). A person in several groups with budgets gets the most generous of them (chat/usage.py
    budget_for; docs/teams.md, Groups)."""

    group = models.OneToOneField("auth.Group", on_delete=models.CASCADE, related_name="token_budget")
    daily_tokens = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=_(
            "Tokens (input and output) each member may spend per day (UTC) before new runs are refused."
            " Blank: no budget for the members, whatever AGENTWEB_DAILY_TOKEN_BUDGET says."
        ),
    )

    class Meta:
        verbose_name = _("group's daily token budget")

    def __str__(self):
        return f"{self.group}: {self.daily_tokens if self.daily_tokens is not None else 'no budget'}"


class ChatDefaults(models.Model):
    """What a person's new chats start with unless they pick otherwise on the empty chat (the settings page): an
    agent and a model, each by what the pickers send (an agent's slug, a model configuration's id). Kept as text:
    one no longer offered to the person (deleted, disabled, or their groups changed) is simply not applied
    (chat/home.py defaults_for), so removing an agent or a model never touches this row."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_defaults")
    agent = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=100, blank=True)

    class Meta:
        verbose_name = _("person's chat defaults")
        verbose_name_plural = _("people's chat defaults")

    def __str__(self):
        return f"{self.user}: agent {self.agent or '—'}, model {self.model or '—'}"

"""An agent: the model, prompt, tools and limits of a chat, as data an admin manages and a person picks
(docs/agents.md). A thread without an agent behaves as every chat did before agents: the global prompt, every
tool the person may use, AGENTWEB_MAX_STEPS."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import IntegrityError, models, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _

from tools.groups import may_use

#: An approval override's values: the tool's calls always wait for a person, or never do.
REQUIRE, SKIP = "require", "skip"
APPROVAL_VALUES = (REQUIRE, SKIP)
#: The placeholders filled in the system prompt at run time.
PLACEHOLDERS = ("{date}", "{user}", "{agent}")
#: The empty chat's starting prompts an agent may offer: how many, and how long each may be.
MAX_STARTER_PROMPTS = 4
STARTER_PROMPT_CHARS = 200
#: How many slugs a new own agent tries when others of its name are being made at the same moment.
SLUG_TRIES = 20


class Agent(models.Model):
    name = models.CharField(max_length=100)
    # Unique among the shared agents, and among each person's own (Meta.constraints): a person's own slug says
    # nothing of anyone else's agents.
    slug = models.SlugField(max_length=60, help_text=_("How frames, files and links name the agent."))
    description = models.TextField(blank=True, help_text=_("Shown on the empty chat, under the name."))
    model = models.ForeignKey(
        "modelconfig.ModelConfiguration",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="agents",
        help_text=_("Blank: the default model. A model a person picks for a thread wins over this one."),
    )
    system_prompt = models.TextField(
        blank=True,
        help_text=_("{date}, {user} and {agent} are filled in at each run. Blank: the global AGENTWEB_SYSTEM_PROMPT."),
    )
    all_tools = models.BooleanField(default=True, help_text=_("Every tool the person may use; else only those listed."))
    tools = models.JSONField(
        default=list,
        blank=True,
        help_text=_(
            'Tool names, e.g. ["calculator", "docs__search"] (MCP tools as <server>__<tool>). '
            "Used when 'all tools' is off."
        ),
    )
    step_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(200)],
        help_text=_("Model calls per run. Blank: AGENTWEB_MAX_STEPS."),
    )
    approvals = models.JSONField(
        _("approval overrides"),
        default=dict,
        blank=True,
        help_text=_(
            'Per tool: "require" (always ask) or "skip" (never ask), e.g. {"fetch_url": "require"}. '
            "The admin's argument rules still apply first."
        ),
    )
    temperature = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(2.0)],
        help_text=_("Blank: the model's."),
    )
    top_p = models.FloatField(
        _("top_p"),
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=_("Blank: the model's."),
    )
    max_output_tokens = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)], help_text=_("Blank: the model's.")
    )
    response_schema = models.JSONField(
        _("structured final answer"),
        null=True,
        blank=True,
        help_text=_("A JSON Schema the final answer must fit (docs/agents.md). Blank: a plain text answer."),
    )
    context_strategy = models.JSONField(
        default=dict,
        blank=True,
        help_text=_(
            'How older turns are kept: empty (trimmed to the window), {"kind": "last_n", "last_n": 6} or '
            '{"kind": "summarise", "share": 0.6, "model": "<model configuration id>"} (docs/agents.md).'
        ),
    )
    starter_prompts = models.JSONField(
        default=list,
        blank=True,
        help_text=f"Up to {MAX_STARTER_PROMPTS} short prompts the empty chat offers as buttons when this agent is "
        "picked (one per line). Blank: the page's own suggestions.",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="agents",
        help_text=_("Blank: made by an admin, offered to everyone. Else that person's own agent."),
    )
    is_default = models.BooleanField(
        _("default"),
        default=False,
        help_text=_("New chats take it when the person picks none. At most one, and only a shared one."),
    )
    groups = models.ManyToManyField(
        Group,
        blank=True,
        related_name="agents",
        help_text=_(
            "A shared agent: who may pick and run it. None selected: everyone. A person's own agent is "
            "theirs whatever this says (docs/teams.md, Groups)."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["is_default"], condition=Q(is_default=True), name="one_default_agent"),
            models.UniqueConstraint(
                fields=["slug"],
                condition=Q(owner__isnull=True),
                name="shared_agent_slug",
                violation_error_message="A shared agent already has this slug.",
            ),
            models.UniqueConstraint(
                fields=["owner", "slug"],
                condition=Q(owner__isnull=False),
                name="own_agent_slug_per_owner",
                violation_error_message="This person already has an agent with this slug.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        from .services import approval_problems, schema_problems, starter_problems, strategy_problems, tool_problems

        errors: dict[str, Any] = {}
        if self.is_default and self.owner_id is not None:
            errors["is_default"] = "Only a shared agent (no owner) can be the default."
        if not isinstance(self.tools, list) or not all(isinstance(n, str) for n in self.tools):
            errors["tools"] = "A list of tool names."
        else:
            problems = tool_problems(self.tools)
            if problems:
                errors["tools"] = problems
        approval = approval_problems(self.approvals)
        if approval:
            errors["approvals"] = approval
        if self.response_schema is not None:
            schema = schema_problems(self.response_schema)
            if schema:
                errors["response_schema"] = schema
        strategy = strategy_problems(self.context_strategy)
        if strategy:
            errors["context_strategy"] = strategy
        starters = starter_problems(self.starter_prompts)
        if starters:
            errors["starter_prompts"] = starters
        if errors:
            raise ValidationError(errors)

    def validate_constraints(self, exclude: Any = None) -> None:
        # Making this agent the default is allowed: save() takes the mark off the other one.
        super().validate_constraints(exclude={*(exclude or ()), "is_default"})

    def save(self, *args: Any, **kwargs: Any) -> None:
        with transaction.atomic():
            if self.is_default:
                Agent.objects.filter(is_default=True).exclude(pk=self.pk).update(is_default=False)
            super().save(*args, **kwargs)

    def save_as_own(self, owner) -> None:
        """Save this new agent as `owner`'s, under the first slug its name gives that is free among their own agents
        and the shared ones (`name`, `name-2`, …). Several made at once (two tabs) may find the same one free: the
        database's constraint refuses all but one, and the others take the next."""
        self.owner = owner
        for _attempt in range(SLUG_TRIES):
            self.slug = free_slug(self.name, owner)
            try:
                with transaction.atomic():
                    self.save()
                return
            except IntegrityError:
                if not Agent.objects.filter(owner=owner, slug=self.slug).exists():
                    raise  # not the slug: another rule the row breaks
        raise IntegrityError(f"no free slug for {self.name!r} after {SLUG_TRIES} tries")

    def public_info(self) -> dict[str, str]:
        return {"slug": self.slug, "name": self.name}

    def group_names(self) -> frozenset[str]:
        """The names of the groups it allows (none: everyone); prefetch `groups` when reading many."""
        return frozenset(group.name for group in self.groups.all())

    def may_use(self, user_id: int | None, groups: frozenset[str]) -> bool:
        """Whether the person `user_id`, in `groups`, may pick and run it: their own agent always, a shared one as
        its groups say (the rule: tools/groups.py; visible_to says the same in SQL)."""
        return (self.owner_id is not None and self.owner_id == user_id) or (
            self.owner_id is None and may_use(self.group_names(), groups)
        )


def visible_to(user):
    """The agents `user` may pick: their own, and the shared ones (made by an admin) that name no group or one of
    theirs — Agent.may_use as a filter, in the statement that reads them (no statement of its own)."""
    limits = Agent.groups.through.objects.filter(agent_id=OuterRef("pk"))
    theirs = limits.filter(group__user=user.pk) if user.pk is not None else limits.none()
    shared = Q(owner__isnull=True) & (~Exists(limits) | Exists(theirs))
    return Agent.objects.filter(shared | Q(owner_id=user.pk))


def free_slug(name: str, owner) -> str:
    """A slug for `owner`'s new agent: free among their own agents and the shared ones (which they see anyway), so it
    never depends on, and never tells, what other people named theirs."""
    base = (slugify(name) or "agent")[:50]
    taken = set(visible_to(owner).filter(slug__startswith=base).values_list("slug", flat=True))
    slug, number = base, 1
    while slug in taken:
        number += 1
        slug = f"{base}-{number}"
    return slug

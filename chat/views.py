from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.utils.translation import gettext_lazy as _

from agents.services import agents_for_picker, sees_prompt
from agents.services import step_limit as agent_step_limit
from modelconfig.services import available_models
from providers.demo import CONNECT_HELP
from tools.services import groups_of, settings_stamp

from . import queries, store
from .access import NotFound, get_thread_for_user
from .home import defaults_for, save_defaults, usage_by_day
from .models import Message, ToolCall
from .starters import empty_chat_starters

# How many of a thread's last messages the page carries as HTML: its first paint shows the conversation's end
# without waiting for the websocket's snapshot (which then replaces them with the live view: the newest page of
# messages, earlier pages loading as the person scrolls up, static/chat/pages.js).
FIRST_SCREEN_MESSAGES = 20
# Set by the page when the person dismisses the demo model's notice.
DEMO_NOTICE_COOKIE = "agentweb_demo_notice"


#: The page's theme, from the settings page: a cookie, so every page (login included) is drawn in it at once.
THEME_COOKIE = "agentweb_theme"
THEMES = (("system", _("Same as the system")), ("light", _("Light")), ("dark", _("Dark")))


@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    """The person's home (docs/ui.md, Settings): their new chats' agent and model, theme, password, shared links
    (the sharing app's tag reads them), API keys, notifications, their usage over the last 30 days, and the admin
    for staff. Two forms post here, told apart by `form`: "theme" (a cookie) and "defaults" (chat.ChatDefaults)."""
    theme = request.COOKIES.get(THEME_COOKIE, "system")
    stamp, saved_defaults = queries.stamp_and_defaults(request.user.pk)
    agents = agents_for_picker(request.user, stamp=stamp)
    models = available_models(groups=groups_of(request.user, stamp=stamp), stamp=stamp)
    defaults_error = ""
    if request.method == "POST" and request.POST.get("form") == "defaults":
        defaults_error = save_defaults(
            request.user,
            agent=request.POST.get("agent", ""),
            model=request.POST.get("model", ""),
            agents=agents,
            models=models,
        )
        if not defaults_error:
            return redirect(f"{request.path}?saved=defaults")
    elif request.method == "POST":
        chosen = request.POST.get("theme")
        if chosen in dict(THEMES):
            response = redirect(f"{request.path}?saved=1")
            response.set_cookie(THEME_COOKIE, chosen, max_age=365 * 86400, samesite="Lax", httponly=True)
            return response
    default_agent, default_model = defaults_for(saved=saved_defaults, agents=agents, models=models)
    context = {
        "themes": THEMES,
        "theme": theme,
        "saved": bool(request.GET.get("saved")),
        "agents": agents,
        "models": models,
        "default_agent": default_agent,
        "default_model": default_model,
        "defaults_error": defaults_error,
        "usage": usage_by_day(request.user),
    }
    return render(request, "chat/settings.html", context, status=400 if defaults_error else 200)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return _thread_page(request, thread=None)


@login_required
def thread_page(request: HttpRequest, thread_id) -> HttpResponse:
    try:
        thread = get_thread_for_user(request.user, thread_id)
    except NotFound:
        raise Http404("No such thread.") from None
    return _thread_page(request, thread=thread)


def _thread_page(request: HttpRequest, *, thread) -> HttpResponse:
    get_token(request)  # sets the CSRF cookie the sidebar's rename and delete requests send back
    # Read once, first: the model configurations, the agents and the person's tools and groups are then this
    # process's, as of that stamp.
    if thread is None:  # the empty chat also shows the person's defaults: read with the stamp, one statement
        stamp, saved_defaults = queries.stamp_and_defaults(request.user.pk)
    else:
        stamp, saved_defaults = settings_stamp(), None
    agents = agents_for_picker(request.user, stamp=stamp)
    models = available_models(groups=groups_of(request.user, stamp=stamp), stamp=stamp)
    model_info = store.thread_model_info(thread, stamp=stamp)
    if thread is None:
        agents, model_info = _with_defaults(agents, models, model_info, saved_defaults)
    threads, archived_threads = store.sidebar_threads(user=request.user)
    context = {
        "thread": thread,
        "threads": threads,
        "archived_threads": archived_threads,
        "model_info": model_info,
        # The picker's entries: ids, names and labels, never a key.
        # Only those the person's groups allow (tools/groups.py); their groups are kept per stamp too.
        "available_models": models,
        "connect_help": CONNECT_HELP,
        # The demo notice, once dismissed in this browser (static/chat/models.js sets the cookie), stays hidden.
        "demo_notice_dismissed": request.COOKIES.get(DEMO_NOTICE_COOKIE) == "dismissed",
        # What "Continue" gives a run that stopped at its step limit (run.continue without `steps`).
        "max_steps": agent_step_limit(store.thread_agent(thread))
        if thread is not None
        else settings.AGENTWEB_MAX_STEPS,
        # The agents the empty chat offers (the admin's and the person's own), and the thread's (docs/agents.md).
        "agents": agents,
        # The empty chat's starting prompts, by agent (chat/starters.py); a stored thread has none to show.
        "starters": empty_chat_starters(request.user, agents, stamp=stamp) if thread is None else None,
        "thread_agent": store.thread_agent_info(thread) if thread is not None else None,
        # Whether the share form offers to show the thread's system prompt: only one the person can read.
        "shares_prompt": thread is not None and sees_prompt(request.user, thread.agent),
        "user_agents": settings.AGENTWEB_USER_AGENTS,
        **_first_screen(thread),
    }
    return render(request, "chat/thread.html", context)


def _with_defaults(
    agents: list[dict], models: list[dict], model_info: dict, saved: tuple[str, str] | None
) -> tuple[list[dict], dict]:
    """The empty chat as the person's defaults set it (settings page): their default agent pressed in place of the
    site's, and their default model shown in place of the site's (the picked agent's own model still wins, and so
    does what they pick on the page: docs/agents.md, What wins over what). `model_info` gains `personal`, which
    tells the page to send that model with the first message."""
    agent, model = defaults_for(saved=saved, agents=agents, models=models)
    if agent:
        agents = [{**a, "is_default": a["slug"] == agent} for a in agents]
    if model:
        model_info = {**next(m for m in models if m["id"] == model), "personal": True}
    return agents, model_info


def _first_screen(thread) -> dict:
    """The last messages of `thread`, rendered on the server: user text is escaped by the template, the model's
    Markdown goes through the sharing page's sanitising renderer (its `markdown` filter, in templates/chat/thread.html).
    Tool calls show as their names and states only."""
    if thread is None:
        return {"first_screen": [], "earlier_messages": False}
    shown = Message.objects.filter(thread=thread).exclude(role__in=[Message.Role.TOOL, Message.Role.SYSTEM])
    # One more than shown, newest first through the thread's order index: whether earlier ones exist, without
    # counting a long thread's messages.
    last = list(
        shown.order_by("-order").prefetch_related(Prefetch("tool_calls", queryset=ToolCall.objects.order_by("index")))[
            : FIRST_SCREEN_MESSAGES + 1
        ]
    )
    earlier = len(last) > FIRST_SCREEN_MESSAGES
    last = last[:FIRST_SCREEN_MESSAGES]
    last.reverse()
    first_screen = []
    for message in last:
        item = {"id": message.pk, "role": message.role, "status": message.status, "content": message.content}
        if message.role == Message.Role.ASSISTANT:
            item["tool_calls"] = [{"name": call.name, "status": call.status} for call in message.tool_calls.all()]
        first_screen.append(item)
    return {"first_screen": first_screen, "earlier_messages": earlier}

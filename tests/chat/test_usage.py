"""Usage through the websocket, against the scripted model server: each answer's tokens as the server reported them
(estimated and labelled when it reported none), the run's totals, the stored rows the admin's report adds up, the
cost at a configuration's prices, and the daily token budget that stops new runs."""

from decimal import Decimal

import pytest
from django.utils import timezone

from chat.models import Message, Run, Thread, TokenBudget, Usage
from modelconfig.models import ModelConfiguration
from providers import openai as openai_module
from tests.support.model_server import ErrorResponse, Hang, SSEResponse, openai_sse_body

pytestmark = pytest.mark.django_db(transaction=True)


def reply(text="", calls=(), usage=None):
    tool_calls = [{"id": i, "name": n, "arguments": a} for i, n, a in calls]
    return SSEResponse(openai_sse_body(text=text, tool_calls=tool_calls, usage=usage))


def counts(prompt, completion):
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completed_usages(events):
    return [e["usage"] for e in events if e["type"] == "message.completed"]


@pytest.fixture(autouse=True)
def forget_refusals():
    openai_module.USAGE_OPTION_REFUSED.clear()
    yield
    openai_module.USAGE_OPTION_REFUSED.clear()


async def test_usage_totals_equal_what_the_server_reported(connect, owner, model_server):
    model_server.enqueue(
        reply(calls=[("c1", "calculator", {"expression": "1+1"})], usage=counts(100, 20)),
        reply(calls=[("c2", "calculator", {"expression": "2+2"})], usage=counts(130, 21)),
        reply("2 and 4", usage=counts(160, 9)),
    )
    client = await connect(owner)
    await client.ask("sums")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert completed_usages(events) == [
        {"input_tokens": 100, "output_tokens": 20, "estimated": False, "cost": None},
        {"input_tokens": 130, "output_tokens": 21, "estimated": False, "cost": None},
        {"input_tokens": 160, "output_tokens": 9, "estimated": False, "cost": None},
    ]
    # A run of three steps made three calls; its totals are their sum.
    assert events[-1]["usage"] == {"input_tokens": 390, "output_tokens": 50, "estimated": False, "cost": None}
    rows = [r async for r in Usage.objects.order_by("id")]
    assert [(r.input_tokens, r.output_tokens, r.estimated) for r in rows] == [
        (100, 20, False),
        (130, 21, False),
        (160, 9, False),
    ]
    run = await Run.objects.aget()
    thread = await Thread.objects.aget()
    assert {(r.user_id, r.thread_id, r.run_id, r.model_config_id) for r in rows} == {
        (owner.pk, thread.pk, run.pk, None)
    }
    assert rows[0].model_label == run.model_label and "test-model" in run.model_label
    assert run.usage == events[-1]["usage"]
    stored = [m.usage async for m in Message.objects.filter(role="assistant").order_by("order")]
    assert stored == completed_usages(events)

    # A reload shows the same: the snapshot carries each answer's usage, and the run's totals.
    other = await connect(owner)
    await other.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None)
    snapshot = await other.until("thread.snapshot")
    answers = [m for m in snapshot[-1]["messages"] if m["role"] == "assistant"]
    assert [m["usage"] for m in answers] == completed_usages(events)
    assert snapshot[-1]["run"]["usage"] == events[-1]["usage"]


async def test_an_answer_the_server_did_not_count_is_estimated_and_labelled(connect, owner, model_server):
    model_server.enqueue(reply("x" * 400, usage=False))
    client = await connect(owner)
    await client.ask("hello there")
    events = await client.run_to_end()
    [usage] = completed_usages(events)
    assert usage["estimated"] is True
    assert usage["output_tokens"] == 4 + 100  # the message's overhead and its text, four characters a token
    assert usage["input_tokens"] > 0
    assert events[-1]["usage"]["estimated"] is True
    row = await Usage.objects.aget()
    assert (row.input_tokens, row.output_tokens, row.estimated) == (usage["input_tokens"], 104, True)


async def test_a_server_that_refuses_stream_options_answers_and_the_usage_is_estimated(
    connect,
    owner,
    model_server,
):
    refusal = {"object": "error", "message": "stream_options: Extra inputs are not permitted", "code": 400}
    model_server.enqueue(ErrorResponse(400, refusal), reply("hi", usage=False), reply("again", usage=False))
    client = await connect(owner)
    await client.ask("hello")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert completed_usages(events)[0]["estimated"] is True
    thread = str((await Thread.objects.aget()).pk)
    await client.ask("and again", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    assert [("stream_options" in r["json"]) for r in model_server.requests] == [True, False, False]


async def test_a_priced_configuration_gives_each_call_its_cost(connect, owner, model_server):
    config = await ModelConfiguration.objects.acreate(
        name="Priced",
        api="openai",
        base_url=model_server.base_url,
        model="priced-model",
        is_default=True,
        price_input=Decimal("2.50"),
        price_output=Decimal("10"),
    )
    model_server.enqueue(
        reply(calls=[("c1", "calculator", {"expression": "1+1"})], usage=counts(1000, 100)),
        reply("2", usage=counts(1200, 50)),
    )
    client = await connect(owner)
    await client.ask("price it")
    events = await client.run_to_end()
    # 1000 * 2.50 / 1e6 + 100 * 10 / 1e6 = 0.0035; 1200 * 2.50 / 1e6 + 50 * 10 / 1e6 = 0.0035
    assert [u["cost"] for u in completed_usages(events)] == ["0.003500", "0.003500"]
    assert events[-1]["usage"]["cost"] == "0.007000"
    rows = [r async for r in Usage.objects.order_by("id")]
    assert [r.cost for r in rows] == [Decimal("0.0035"), Decimal("0.0035")]
    assert {r.model_config_id for r in rows} == {config.pk}
    assert {r.model_label for r in rows} == {"Priced"}


async def test_the_daily_budget_stops_new_runs_and_lets_the_run_in_progress_finish(
    connect,
    owner,
    model_server,
    settings,
):
    settings.AGENTWEB_DAILY_TOKEN_BUDGET = 150
    model_server.enqueue(
        reply(calls=[("c1", "calculator", {"expression": "1+1"})], usage=counts(100, 20)),
        reply("2", usage=counts(130, 5)),  # past the budget mid-run: the run still finishes
    )
    client = await connect(owner)
    await client.ask("first")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    thread = str((await Thread.objects.aget()).pk)
    await client.ask("second", thread=thread, ref="r1")
    error = await client.until("error")
    assert error[-1]["code"] == "budget_exhausted" and error[-1]["ref"] == "r1"
    assert "255 of 150 tokens" in error[-1]["message"]
    await client.ask("a new thread", ref="r2")
    assert (await client.until("error"))[-1]["code"] == "budget_exhausted"
    await client.send(type="run.regenerate", thread=thread, ref="r3")
    assert (await client.until("error"))[-1]["code"] == "budget_exhausted"
    # Nothing was written: one thread, one run, the first turn's messages.
    assert await Thread.objects.acount() == 1
    assert await Run.objects.acount() == 1
    assert not await Message.objects.filter(content__in=["second", "a new thread"]).aexists()
    assert len(model_server.requests) == 2


async def test_a_run_still_running_holds_back_its_share_and_a_second_chat_is_told_to_wait(
    connect, owner, settings, calculator_needs_approval
):
    settings.AGENTWEB_DAILY_TOKEN_BUDGET, settings.AGENTWEB_BUDGET_RUN_RESERVE = 2000, 1500
    client = await connect(owner)
    await client.ask("what is 23*19?")
    await client.until("run.waiting")  # the run waits for a decision: it will spend more once resumed
    spent = sum([row.input_tokens + row.output_tokens async for row in Usage.objects.all()])
    assert 500 < spent < 2000  # its first model call (the demo model's estimate) leaves less than the share

    await client.ask("a second chat", ref="r1")

    error = (await client.until("error"))[-1]
    assert error["code"] == "budget_exhausted"
    assert f"{spent:,} of 2,000 tokens today, and 1 answer still running" in error["message"]
    assert await Thread.objects.acount() == 1


async def test_without_a_budget_nothing_is_refused(connect, owner, model_server, settings):
    settings.AGENTWEB_DAILY_TOKEN_BUDGET = 0
    model_server.enqueue(reply("one", usage=counts(10**6, 10**5)), reply("two"))
    client = await connect(owner)
    await client.ask("first")
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    thread = str((await Thread.objects.aget()).pk)
    await client.ask("second", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"


async def test_a_persons_own_budget_replaces_the_default(connect, owner, stranger, model_server, settings):
    await TokenBudget.objects.acreate(user=owner, daily_tokens=50)
    await TokenBudget.objects.acreate(user=stranger, daily_tokens=None)  # none at all for this one
    settings.AGENTWEB_DAILY_TOKEN_BUDGET = 10
    model_server.enqueue(reply("one", usage=counts(40, 20)), reply("two", usage=counts(40, 20)))
    client = await connect(owner)
    await client.ask("first")
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    thread = str((await Thread.objects.aget(owner=owner)).pk)
    await client.ask("second", thread=thread)
    assert (await client.until("error"))[-1]["code"] == "budget_exhausted"
    # Raised in the admin: the next turn of any process sees it (the budgets are kept per settings stamp).
    budget = await TokenBudget.objects.aget(user=owner)
    budget.daily_tokens = 1000
    await budget.asave()
    await client.ask("third", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    other = await connect(stranger)
    model_server.enqueue(reply("three", usage=counts(400, 20)))
    await other.ask("no budget for me")
    assert (await other.run_to_end())[-1]["type"] == "run.completed"


def test_the_admin_report_adds_up_by_user_agent_model_and_day(client, owner, stranger):
    from django.contrib.auth import get_user_model

    admin_user = get_user_model().objects.create_superuser("boss", password="boss-password-1")
    day = timezone.now() - timezone.timedelta(days=1)
    Usage.objects.create(user=owner, model_label="Qwen", input_tokens=100, output_tokens=10, cost=Decimal("0.5"))
    Usage.objects.create(user=owner, model_label="Llama", input_tokens=200, output_tokens=20, estimated=True)
    Usage.objects.create(user=stranger, model_label="Qwen", input_tokens=1, output_tokens=2, created_at=day)
    client.force_login(admin_user)
    page = client.get("/admin/chat/usage/")
    assert page.status_code == 200
    report = page.context["report"]
    assert report["totals"] == {
        "calls": 3,
        "input": 301,
        "output": 32,
        "tokens": 333,
        "cost": Decimal("0.5"),
        "estimated": 1,
    }
    groups = {group["key"]: group["rows"] for group in report["groups"]}
    assert [(r["name"], r["tokens"]) for r in groups["user"]] == [("owner", 330), ("stranger", 3)]
    assert [(r["name"], r["tokens"]) for r in groups["model"]] == [("Llama", 220), ("Qwen", 113)]
    assert [(r["name"], r["calls"]) for r in groups["agent"]] == [("", 3)]
    assert [r["tokens"] for r in groups["day"]] == [330, 3]
    assert b"usage-report" in page.content
    # The filters narrow the report too.
    narrowed = client.get("/admin/chat/usage/", {"user__id__exact": stranger.pk}).context["report"]
    assert narrowed["totals"]["tokens"] == 3
    # Read-only: the rows are what was spent.
    assert client.get("/admin/chat/usage/add/").status_code == 403


async def test_a_call_stopped_mid_answer_counts_estimated_and_one_that_got_nothing_does_not(
    connect,
    owner,
    model_server,
):
    prelude = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"x" * 40 + b'"}}]}\n\n'
    model_server.enqueue(Hang(prelude=prelude))
    client = await connect(owner)
    await client.ask("go on forever")
    await client.until("message.delta")
    thread = str((await Thread.objects.aget()).pk)
    await client.send(type="run.cancel", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.cancelled"
    row = await Usage.objects.aget()
    assert (row.output_tokens, row.estimated) == (4 + 10, True)  # the message's overhead and the text so far
    assert (await Run.objects.aget()).usage["output_tokens"] == 14

    # A server that refused the request (nothing answered): no tokens were spent.
    model_server.enqueue(ErrorResponse(404, {"error": {"message": "no such model"}}))
    await client.send(type="run.retry", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.failed"
    assert await Usage.objects.acount() == 1

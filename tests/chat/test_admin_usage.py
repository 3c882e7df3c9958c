"""The usage report and the daily budgets in the admin, as a superuser sees them: costs as money, the rows read-only
(they are what was spent: deleting one would give budget back), and a budget given to a person picked by name."""

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from chat.models import TokenBudget, Usage

pytestmark = pytest.mark.django_db

LIST = "/admin/chat/usage/"


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("boss", password="boss-password-1"))
    return client


def spent(user, *costs):
    for cost in costs:
        Usage.objects.create(user=user, model_label="Qwen", input_tokens=100, output_tokens=10, cost=Decimal(cost))


def report_text(page: str) -> str:
    return page.split('id="usage-report"')[1].split("</section>")[0]


def test_the_reports_costs_are_money_not_seventeen_decimals(admin_client, owner, stranger):
    spent(owner, "0.1", "0.2", "0.000004")
    spent(stranger, "12.345678")
    page = admin_client.get(LIST).content.decode()
    report = report_text(page)
    assert "<td>$12.65</td>" in report  # the total: 12.645682, to the cent above 1
    assert "<td>$0.30</td>" in report  # the owner's: 0.300004, below 1 to two significant digits
    assert "<td>$12.35</td>" in report  # the stranger's
    assert "0.30000" not in report


def test_a_cost_in_the_list_is_money_too(admin_client, owner):
    spent(owner, "0.5")
    rows = admin_client.get(LIST).content.decode().split('id="result_list"')[1]
    assert ">$0.50<" in rows and "0.500000" not in rows


def test_usage_rows_cannot_be_deleted_added_or_changed(admin_client, owner):
    spent(owner, "0.5")
    row = Usage.objects.get()
    page = admin_client.get(LIST).content.decode()
    assert "Delete selected" not in page and 'value="delete_selected"' not in page
    assert admin_client.get(f"{LIST}{row.pk}/delete/").status_code == 403
    assert admin_client.post(LIST, {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"})
    assert Usage.objects.count() == 1
    assert admin_client.get(f"{LIST}add/").status_code == 403
    change = admin_client.get(f"{LIST}{row.pk}/change/").content.decode()
    assert 'name="_save"' not in change  # shown read-only, nothing to save


def test_a_daily_budget_is_given_to_a_person_picked_by_name(admin_client, owner, stranger):
    page = admin_client.get("/admin/chat/tokenbudget/add/").content.decode()
    assert "vForeignKeyRawIdAdminField" not in page  # no user id to type
    assert ">owner<" in page or "/admin/autocomplete/" in page  # a select of people, or a search for them by name
    response = admin_client.post("/admin/chat/tokenbudget/add/", {"user": owner.pk, "daily_tokens": 5000})
    assert response.status_code == 302
    assert TokenBudget.objects.get().user == owner


def test_the_reports_statements_do_not_grow_with_its_rows(admin_client, owner):
    """Each row shows its thread and run: read with the rows, not one statement each (bench/data found 183)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from chat.models import Run, Thread

    def add(rows):
        for n in range(rows):
            thread = Thread.objects.create(owner=owner, title=f"chat {n}")
            run = Run.objects.create(thread=thread)
            Usage.objects.create(user=owner, thread=thread, run=run, model_label="Qwen", input_tokens=1)

    def statements():
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(LIST).status_code == 200
        return len(captured.captured_queries)

    add(2)
    statements()  # the session's first page reads once what a session keeps (its language choice, …)
    few = statements()
    add(20)
    assert statements() == few


def test_the_report_charts_the_tokens_of_each_day_by_model_and_by_agent_with_a_table_beside(admin_client, owner):
    import datetime

    from django.utils import timezone

    today = timezone.now().replace(hour=12)
    for days_ago, model, agent, tokens, cost in [
        (0, "Qwen", "helper", 1000, "0.5"),
        (0, "Llama", "", 300, None),
        (2, "Qwen", "helper", 200, "0.1"),
    ]:
        Usage.objects.create(
            user=owner,
            model_label=model,
            agent=agent,
            input_tokens=tokens,
            cost=Decimal(cost) if cost else None,
            created_at=today - datetime.timedelta(days=days_ago),
        )
    response = admin_client.get(LIST)
    charts = {chart.key: chart for chart in response.context["report"]["charts"]}
    by_model = charts["model"]
    assert by_model.series == ["Qwen", "Llama"]
    assert len(by_model.days) == 3  # the day between, with nothing, is a day of the axis too
    assert by_model.tokens == [[200, 0], [0, 0], [1000, 300]]
    assert charts["agent"].series == ["helper", "(none)"]
    page = response.content.decode()
    figure = page.split('id="usage-chart-model"')[1].split("</figure>")[0]
    assert figure.count("<rect ") == 3  # a day's bar has one part per model that spent that day
    assert f"{today:%Y-%m-%d}, Qwen: 1,000 tokens, $0.50</title>" in figure
    assert 'role="img"' in figure and "<desc " in figure and "Qwen: 1.2 k" in figure
    table = figure.split('class="usage-chart-table"')[1]
    row = f'<th scope="row">{today:%Y-%m-%d}</th><td>1,000 <span class="usage-chart-cost">$0.50</span></td>'
    assert row in table


def test_the_chart_is_empty_but_says_so_when_nothing_is_selected(admin_client):
    page = admin_client.get(LIST).content.decode()
    assert "No calls selected." in page and "<svg" not in page.split('id="usage-charts"')[1].split("</section>")[0]


def test_the_chart_reads_a_bounded_window_whatever_the_table_holds(admin_client, owner):
    """A month of days at most: older rows are in the totals and tables, not drawn."""
    import datetime

    from django.utils import timezone

    from chat.usage_report import CHART_DAYS

    now = timezone.now()
    for days_ago in (0, CHART_DAYS + 10):
        Usage.objects.create(
            user=owner, model_label="Qwen", input_tokens=5, created_at=now - datetime.timedelta(days=days_ago)
        )
    report = admin_client.get(LIST).context["report"]
    assert report["totals"]["tokens"] == 10
    assert len(report["charts"][0].days) == 1

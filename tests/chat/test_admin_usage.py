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
    return page.split('id="usage-report"')[1].split("</div>")[0]


def test_the_reports_costs_are_money_not_seventeen_decimals(admin_client, owner, stranger):
    spent(owner, "0.1", "0.2", "0.000004")
    spent(stranger, "12.345678")
    page = admin_client.get(LIST).content.decode()
    report = report_text(page)
    assert "<td>12.65</td>" in report  # the total: 12.645682, to the cent above 1
    assert "<td>0.300004</td>" in report  # the owner's: below 1, to the millionth it was stored in
    assert "<td>12.35</td>" in report  # the stranger's
    assert "0.30000" not in report.replace("0.300004", "")


def test_a_cost_in_the_list_is_money_too(admin_client, owner):
    spent(owner, "0.5")
    rows = admin_client.get(LIST).content.decode().split('id="result_list"')[1]
    assert ">0.50<" in rows and "0.500000" not in rows


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
    few = statements()
    add(20)
    assert statements() == few

import asyncio
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from mcpservers.models import McpServer

# The MCP tests' own: this process's connections with quick retries, closed after each test; a tool call record.
from tests.mcpservers.conftest import connections, record  # noqa: F401
from tests.support.mcp_servers.running import OAuthServer
from tools.context import ToolContext, ToolUser
from tools.executor import execute_tool
from tools.services import mcp_tools, toolset_for_user


@pytest.fixture
def oauth_server(record):  # noqa: F811 (the fixture imported above)
    server = OAuthServer(record).start()
    yield server
    server.stop()


@pytest.fixture
def people(db):
    made = get_user_model().objects
    return made.create_user("alice", password="pw-alice-1"), made.create_user("bob", password="pw-bob-1")


def per_person_row(server: OAuthServer, **fields) -> McpServer:
    values = {"name": "srv", "transport": "http", "url": server.url, "per_person": "oauth", "require_approval": False}
    row = McpServer.objects.create(**(values | fields))
    mcp_tools()  # the manager learns of it
    return row


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def connect_oauth(client: Client, server: OAuthServer, account: str, name: str = "srv"):
    """The person presses Connect, signs in at the authorization server as `account`, and comes back."""
    started = client.post(f"/mcp/connections/{name}/connect")
    assert started.status_code == 302, started.content
    assert started["Location"].startswith(server.base), page_messages(client.get(started["Location"]))
    back = server.sign_in(started["Location"], account)
    parts = urlsplit(back)
    assert parts.path == "/mcp/connections/callback"
    return client.get(f"{parts.path}?{parts.query}", follow=True)


def call(user, tool="srv__whoami", *, connect=None):
    """The tool as a run calls it, for `user` (through the executor: the person's context injected)."""
    toolset = toolset_for_user(user=user)
    context = ToolContext(user=ToolUser(id=user.pk, username=user.get_username()), connect=connect)
    return asyncio.run(execute_tool(toolset.registry, tool, {}, context=context))


def page_messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []

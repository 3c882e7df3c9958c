"""The mcpServers format and the checks of a server's configuration."""

import json

import pytest

from tools.mcp.config import McpConfigError, McpServerConfig, load_config_file, parse_mcp_servers


def test_a_stdio_and_an_http_server():
    stdio, http = parse_mcp_servers(
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "server-files"], "env": {"ROOT": "/srv"}},
                "search": {"url": "https://mcp.example.com/mcp", "headers": {"X-Key": "k"}, "requireApproval": False},
            }
        }
    )
    assert (stdio.name, stdio.transport, stdio.command, stdio.args, dict(stdio.env)) == (
        "files",
        "stdio",
        "npx",
        ("-y", "server-files"),
        {"ROOT": "/srv"},
    )
    assert stdio.require_approval and stdio.source == "file" and stdio.offered_tools is None
    assert (http.transport, http.url, dict(http.headers), http.require_approval) == (
        "http",
        "https://mcp.example.com/mcp",
        {"X-Key": "k"},
        False,
    )


def test_offered_and_exempt_tools():
    [config] = parse_mcp_servers(
        {"mcpServers": {"s": {"url": "http://h/mcp", "offeredTools": ["a", "b"], "approvalExempt": ["a"]}}}
    )
    assert config.offers("a") and not config.offers("c")
    assert not config.requires_approval("a") and config.requires_approval("b")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], 'an "mcpServers" object'),
        ({"mcpServers": {"s": "npx"}}, "MCP server 's': its entry must be a JSON object"),
        ({"mcpServers": {"s": {}}}, "MCP server 's': give either 'command'"),
        ({"mcpServers": {"s": {"command": "x", "url": "http://h"}}}, "not both"),
        ({"mcpServers": {"s": {"command": "x", "args": "-y"}}}, "MCP server 's': 'args' must be a list of strings"),
        ({"mcpServers": {"s": {"command": "x", "env": {"A": 1}}}}, "MCP server 's': 'env' must be an object of"),
        ({"mcpServers": {"s": {"url": "ftp://h"}}}, "MCP server 's': 'url' must be an http:// or https:// address"),
        ({"mcpServers": {"s": {"url": "http://h", "requireApproval": "no"}}}, "'requireApproval' must be true or"),
        ({"mcpServers": {"s": {"url": "http://h", "timeout": 0}}}, "MCP server 's': 'timeout' must be between"),
        ({"mcpServers": {"s": {"url": "http://h", "type": "sse"}}}, "'type' 'sse' is not supported"),
        ({"mcpServers": {"s": {"url": "http://h", "cwd": "/"}}}, "MCP server 's': unknown field(s) 'cwd'"),
        ({"mcpServers": {"my__server": {"url": "http://h"}}}, "MCP server 'my__server': the name must be"),
        ({"mcpServers": {"s": {"url": "http://h", "headers": {"A": "x\ny"}}}}, "the header A must be one line"),
    ],
)
def test_errors_name_the_server_and_the_field(document, message):
    with pytest.raises(McpConfigError) as raised:
        parse_mcp_servers(document)
    assert message in str(raised.value)


def test_a_file_that_is_not_json_says_where(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {\n  "s": {"url": }\n}}')
    with pytest.raises(McpConfigError, match=r"mcp.json is not valid JSON: .* \(line 2, column 16\)"):
        load_config_file(str(path))


def test_a_missing_file_and_a_bad_entry_name_the_file(tmp_path):
    with pytest.raises(McpConfigError, match="cannot be read"):
        load_config_file(str(tmp_path / "none.json"))
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"s": {"command": ""}}}))
    with pytest.raises(McpConfigError, match=r"mcp.json: MCP server 's': 'command' is required"):
        load_config_file(str(path))


def test_only_what_the_connection_depends_on_is_in_its_key():
    config = McpServerConfig(name="s", transport="http", url="http://h/mcp")
    same = McpServerConfig(name="s", transport="http", url="http://h/mcp", timeout=5, require_approval=False)
    other = McpServerConfig(name="s", transport="http", url="http://h/mcp", headers={"A": "b"})
    assert config.connection_key() == same.connection_key() != other.connection_key()


def test_every_mistake_of_every_server_is_reported_at_once():
    document = {
        "mcpServers": {
            "a": {"command": "x", "args": "-y", "env": {"K": 1}, "timeout": 0},
            "b": {"url": "ftp://h"},
            "good": {"url": "http://h/mcp"},
        }
    }
    with pytest.raises(McpConfigError) as raised:
        parse_mcp_servers(document)
    assert raised.value.problems == [
        "MCP server 'a': 'args' must be a list of strings.",
        "MCP server 'a': 'env' must be an object of strings.",
        "MCP server 'a': 'timeout' must be between 0 and 3600 seconds, got 0.0.",
        "MCP server 'b': 'url' must be an http:// or https:// address.",
    ]

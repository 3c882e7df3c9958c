import ipaddress

import pytest

from tests.tools.local_http import LocalServer, Reply
from tools.net import BlockedURL, blocked_reason, check_url, guarded_request


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("192.168.1.1", "a private address"),
        ("100.64.0.1", "not a public address"),
        ("169.254.1.1", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("::1", "a loopback address"),
        ("fe80::1", "a link-local address"),
        ("fc00::1", "a private address"),
        ("224.0.0.1", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("240.0.0.1", "a private address"),
        ("::ffff:127.0.0.1", "an IPv6 form of 127.0.0.1, a loopback address"),
        ("::ffff:169.254.169.254", "an IPv6 form of 169.254.169.254, a cloud metadata address"),
        ("::127.0.0.1", "an IPv6 form of 127.0.0.1, a loopback address"),
        ("2002:a00:1::", "an IPv6 form of 10.0.0.1, a private address"),
        ("64:ff9b::a00:1", "an IPv6 form of 10.0.0.1, a private address"),
    ],
)
def test_it_refuses_addresses_that_are_not_public(address, reason):
    assert blocked_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111"])
def test_it_accepts_public_addresses(address):
    assert blocked_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    "url", ["ftp://example.com/", "file:///etc/passwd", "gopher://example.com/", "javascript:alert(1)", "/relative"]
)
async def test_it_refuses_schemes_other_than_http_and_https(url):
    with pytest.raises(BlockedURL, match="Only http and https"):
        await check_url(url)


async def test_it_refuses_a_name_that_resolves_to_loopback():
    with pytest.raises(BlockedURL, match=r"Refused to fetch localhost: it resolves to .*, a loopback address\."):
        await check_url("http://localhost/")


async def test_it_refuses_a_legacy_spelling_of_a_loopback_address():
    with pytest.raises(BlockedURL, match=r"127\.0\.0\.1, a loopback address"):
        await check_url("http://127.1/")


async def test_it_lets_an_allow_listed_host_through_with_its_checked_address():
    checked = await check_url("http://LOCALHOST:8080/x", allowed_hosts={"localhost"})

    assert checked.host == "localhost" and "127.0.0.1" in checked.addresses


async def test_it_reports_a_name_that_does_not_resolve():
    with pytest.raises(BlockedURL, match=r"Cannot resolve no-such-host\.invalid"):
        await check_url("http://no-such-host.invalid/")


async def test_it_connects_to_the_checked_address_with_the_original_host_header():
    with LocalServer({"/": Reply(body=b"hi")}) as server:
        fetched = await guarded_request("GET", server.url(host="localhost"), allowed_hosts={"localhost"})

    assert fetched.body == b"hi"
    assert server.requests[0][2]["Host"] == f"localhost:{server.port}"


async def test_it_drops_credentials_on_a_redirect_to_another_origin():
    with LocalServer({"/": Reply(body=b"landed")}) as target:
        moved = Reply(302, headers={"Location": target.url(host="localhost")})
        with LocalServer({"/": moved}) as origin:
            headers = {"Authorization": "Bearer secret", "Accept": "text/plain"}
            await guarded_request("GET", origin.url(), headers=headers, allowed_hosts={"127.0.0.1", "localhost"})

    assert origin.requests[0][2]["Authorization"] == "Bearer secret"
    assert "Authorization" not in target.requests[0][2] and target.requests[0][2]["Accept"] == "text/plain"


async def test_it_stops_reading_past_the_size_cap():
    with LocalServer({"/": Reply(body=b"x" * 100_000)}) as server:
        fetched = await guarded_request("GET", server.url(), allowed_hosts={"127.0.0.1"}, max_bytes=1000)

    assert (len(fetched.body), fetched.truncated) == (1000, True)

"""The desk's outer gate over real HTTP: a foreign Host (DNS rebinding), a foreign Origin and an
oversized body are refused before the application reads anything or writes a version."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from flows.desk.gate import host_name, is_loopback
from tasks.settings import load_settings
from tests.desk_csrf import csrf_for, session_csrf


@pytest.fixture
def desk_url(tmp_path: Path) -> Iterator[str]:
    """A desk of an empty store served as ``brief desk`` serves it (its server and protocol) on a
    free loopback port, in a thread."""
    from flows.desk.app import create_app
    from flows.desk.server import desk_server

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n\n[desk]\nhosts = ["desk.example.org"]\n')
    settings = load_settings(str(config))
    app = create_app(settings, "127.0.0.1", "ann", ui_url="http://127.0.0.1:4200")
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    server = desk_server(app, settings)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    APPS[f"http://127.0.0.1:{port}"] = app
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


APPS: dict[str, object] = {}  # each served desk's application, by its address


def session_and_csrf(client: httpx.Client, url: str) -> str:
    """A session of the desk at ``url`` (no people: no page of it has a form) and its CSRF token."""
    client.get(f"{url}/signin")
    return csrf_for(client.cookies["desk_session"], APPS[url])


def test_a_foreign_host_is_refused_before_any_session_or_token(desk_url: str) -> None:
    with httpx.Client() as client:
        page = client.get(f"{desk_url}/today", headers={"Host": "evil.example:8484"})
        assert page.status_code == 421
        assert "set-cookie" not in page.headers and "csrf" not in page.text
        assert "[desk] hosts" in page.text and page.text.count("\n") == 1
        assert f"open it as {desk_url} " in page.text  # with its port: an address that works
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
        assert page.headers["x-frame-options"] == "DENY"
        # a name that merely starts like a loopback address is not loopback
        assert client.get(f"{desk_url}/signin", headers={"Host": "127.evil.example"}).status_code == 421
        # the rebinding site's POST carries its own name too
        posted = client.post(
            f"{desk_url}/today/mark", headers={"Host": "evil.example:8484"}, data={"csrf": "x"}
        )
        assert posted.status_code == 421
        # loopback names, and the configured public name, are served
        assert client.get(f"{desk_url}/signin").status_code == 200
        port = desk_url.rsplit(":", 1)[1]
        assert client.get(f"{desk_url}/signin", headers={"Host": f"localhost:{port}"}).status_code == 200
        named = client.get(f"{desk_url}/signin", headers={"Host": "desk.example.org"})
        assert named.status_code == 200


def test_a_post_from_another_origin_is_refused_even_with_a_valid_token(desk_url: str) -> None:
    with httpx.Client() as client:
        csrf = session_and_csrf(client, desk_url)
        foreign = client.post(
            f"{desk_url}/signout", data={"csrf": csrf}, headers={"Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403 and "another site" in foreign.text
        opaque = client.post(f"{desk_url}/signout", data={"csrf": csrf}, headers={"Origin": "null"})
        assert opaque.status_code == 403
        cross = client.post(
            f"{desk_url}/signout", data={"csrf": csrf}, headers={"Sec-Fetch-Site": "cross-site"}
        )
        assert cross.status_code == 403
        own = client.post(f"{desk_url}/signout", data={"csrf": csrf}, headers={"Origin": desk_url})
        assert own.status_code == 303


def raw_request(url: str, head: str, body: bytes = b"", timeout: float = 5.0) -> tuple[str, float]:
    """Send ``head`` and ``body`` over a plain socket; the status line and how long it took."""
    host, port = url.removeprefix("http://").split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(head.encode() + body)
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.split(b"\r\n", 1)[0].decode(), time.monotonic() - started


def test_a_huge_announced_body_is_refused_before_it_is_read(desk_url: str) -> None:
    port = desk_url.rsplit(":", 1)[1]
    head = (
        f"POST /today/mark HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {300 * 1024 * 1024}\r\n\r\n"
    )
    # only the head and a few bytes are sent: an answer proves nothing waited for the 300 MB
    status, took = raw_request(desk_url, head, b"csrf=x&")
    assert status == "HTTP/1.1 413 Request Entity Too Large"
    assert took < 2


def test_a_chunked_body_is_refused_once_it_passes_the_limit(desk_url: str) -> None:
    port = desk_url.rsplit(":", 1)[1]
    head = (
        f"POST /today/mark HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"a" * 32 * 1024
    body = b"".join(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" for _ in range(3))  # 96 KiB, no end
    status, _ = raw_request(desk_url, head, body)
    assert status == "HTTP/1.1 413 Request Entity Too Large"


def whole_answer(url: str, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """Send ``request`` over a plain socket and read until the desk closes the connection: the
    status line, the headers (lower-case names) and the body."""
    host, port = url.removeprefix("http://").split(":")
    answer = b""
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request)
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def assert_desk_headers(headers: dict[str, str]) -> None:
    from flows.desk.headers import HEADERS

    for name, value in HEADERS.items():
        assert headers.get(name.lower()) == value, (name, headers)


MALFORMED = {
    "a Content-Length that is not a number": "POST /today/mark HTTP/1.1\r\nHost: {host}\r\nContent-Length: abc\r\n\r\n",
    "two Content-Lengths that disagree": (
        "POST /today/mark HTTP/1.1\r\nHost: {host}\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabc"
    ),
    "a negative Content-Length": "POST /today/mark HTTP/1.1\r\nHost: {host}\r\nContent-Length: -1\r\n\r\n",
    "a request line that is not one": "GARBAGE\r\n\r\n",
    "a request line without a version": "GET /today\r\nHost: {host}\r\n\r\n",
    # past the server's limit for a head not yet ended (16 KiB): refused before it ends
    "a header with a NUL in it": "GET /signin HTTP/1.1\r\nHost: {host}\r\nX-A: a\x00b\r\n\r\n",
    "a request target that is not ASCII": "GET /t\u00e9 HTTP/1.1\r\nHost: {host}\r\n\r\n",
    "a header line too long": "GET /today HTTP/1.1\r\nHost: {host}\r\nX-Long: " + "a" * 20_000,
}


@pytest.mark.parametrize("request_text", MALFORMED.values(), ids=list(MALFORMED))
def test_a_request_the_server_cannot_parse_is_a_400_of_one_line_with_the_desk_headers(
    desk_url: str, request_text: str
) -> None:
    host = desk_url.removeprefix("http://")
    status, headers, body = whole_answer(desk_url, request_text.format(host=host).encode())
    assert status == "HTTP/1.1 400 Bad Request"
    assert_desk_headers(headers)
    assert headers["content-type"] == "text/plain; charset=utf-8"
    assert int(headers["content-length"]) == len(body)
    text = body.decode()
    assert text.startswith("refused: the request is not HTTP the desk can read") and text.count("\n") == 1
    assert text.endswith("\n")


def test_the_body_limit_a_missing_page_head_and_options_carry_the_desk_headers(desk_url: str) -> None:
    host = desk_url.removeprefix("http://")
    status, headers, body = whole_answer(
        desk_url,
        f"POST /today/mark HTTP/1.1\r\nHost: {host}\r\nContent-Length: {10**9}\r\n\r\n".encode(),
    )
    assert status == "HTTP/1.1 413 Request Entity Too Large" and body.count(b"\n") == 1
    assert_desk_headers(headers)
    status, headers, body = whole_answer(
        desk_url, f"GET /no/such/page HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    )
    assert status == "HTTP/1.1 404 Not Found" and body == b"not found: the desk has no page /no/such/page\n"
    assert_desk_headers(headers)
    status, headers, body = whole_answer(
        desk_url,
        f"GET /no/such%00page%E2%80%AE HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode(),
    )
    assert status == "HTTP/1.1 404 Not Found" and body == b"not found: the desk has no page /no/such?page?\n"
    # HEAD: GET's status and length, without the body
    got = whole_answer(
        desk_url, f"GET /signin HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    )
    status, headers, body = whole_answer(
        desk_url, f"HEAD /signin HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    )
    assert status == got[0] == "HTTP/1.1 200 OK" and body == b""
    assert headers["content-length"] == got[1]["content-length"] == str(len(got[2]))
    assert_desk_headers(headers)
    # OPTIONS: the desk takes no cross-site requests, so no preflight passes; a 405 names what the page takes
    status, headers, body = whole_answer(
        desk_url,
        f"OPTIONS /today HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example\r\n"
        "Access-Control-Request-Method: POST\r\nConnection: close\r\n\r\n".encode(),
    )
    assert status == "HTTP/1.1 405 Method Not Allowed" and body.count(b"\n") == 1
    assert headers["allow"] == "GET, HEAD" and "access-control-allow-origin" not in headers
    assert_desk_headers(headers)
    # a page with a form takes its POST too (two routes of one path); a static file names each once
    for path, allowed in (
        ("/questions", "GET, HEAD, POST"),
        ("/signin", "GET, HEAD, POST"),
        ("/static/desk.css", "GET, HEAD"),
    ):
        status, headers, _ = whole_answer(
            desk_url,
            f"PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode(),
        )
        assert status == "HTTP/1.1 405 Method Not Allowed", path
        assert ", ".join(sorted(headers["allow"].split(", "))) == allowed, (path, headers["allow"])
        assert_desk_headers(headers)


def test_a_websocket_upgrade_is_a_plain_request_gated_and_answered_by_the_desk(desk_url: str) -> None:
    host = desk_url.removeprefix("http://")
    upgrade = (
        "Upgrade: websocket\r\nConnection: Upgrade, close\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    status, headers, body = whole_answer(
        desk_url, f"GET /signin HTTP/1.1\r\nHost: {host}\r\n{upgrade}".encode()
    )
    assert status == "HTTP/1.1 200 OK" and b"<h1>No sign-in</h1>" in body  # the page, not a handshake
    assert_desk_headers(headers)
    status, headers, body = whole_answer(
        desk_url, f"GET /signin HTTP/1.1\r\nHost: evil.example\r\n{upgrade}".encode()
    )
    assert status == "HTTP/1.1 421 Misdirected Request" and body.count(b"\n") == 1  # the gate saw it
    assert_desk_headers(headers)
    status, headers, _ = whole_answer(
        desk_url,
        f"GET /signin HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n\r\n".encode(),
    )
    assert status == "HTTP/1.1 200 OK"
    assert_desk_headers(headers)


def test_the_desk_protocol_is_the_one_uvicorn_would_pick_with_the_desk_400(tmp_path: Path) -> None:
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    from flows.desk.app import create_app
    from flows.desk.server import DeskProtocol, RefusedWithHeaders, server_config

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n')
    settings = load_settings(str(config))
    chosen = server_config(create_app(settings, "127.0.0.1", "ann"), settings)
    chosen.load()
    # h11 here; httptools wherever it is installed (uvicorn's "auto"): either way with the desk's 400
    assert chosen.http_protocol_class is DeskProtocol and chosen.ws_protocol_class is None
    assert issubclass(DeskProtocol, AutoHTTPProtocol) and issubclass(DeskProtocol, RefusedWithHeaders)
    assert DeskProtocol.send_400_response is RefusedWithHeaders.send_400_response


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("127.evil.example", False),
        ("evil.example", False),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
    ],
)
def test_loopback_is_decided_by_the_parsed_address(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:8484", "127.0.0.1"),
        ("[::1]:8484", "::1"),
        ("Desk.Example.org", "desk.example.org"),
        ("evil.example:notaport", None),
        ("a/b", None),
        ("", None),
    ],
)
def test_the_host_header_is_parsed_with_its_port(header: str, name: str | None) -> None:
    assert host_name(header) == name


def test_behind_a_proxy_the_public_name_posts_and_a_broken_origin_is_a_refusal(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n\n[desk]\nhosts = ["https://Desk.Example.org:8443/"]\n')
    settings = load_settings(str(config))
    assert settings.desk.hosts == ["desk.example.org"]  # a name as a browser sends it
    app = create_app(settings, "127.0.0.1", "ann", ui_url="http://127.0.0.1:4200")
    # a proxy serving https that sets Host to the desk; the public name written https:// makes the
    # session cookie Secure, which a browser (and httpx) sends over https only
    desk = TestClient(app, base_url="https://127.0.0.1:8484")
    page = desk.get("/signin")
    assert "secure" in page.headers["set-cookie"].lower()
    csrf = session_csrf(desk)
    proxied = desk.post(
        "/signout",
        data={"csrf": csrf},
        headers={"Origin": "https://desk.example.org"},
        follow_redirects=False,
    )
    assert proxied.status_code == 303
    broken = desk.post("/signout", data={"csrf": csrf}, headers={"Origin": "http://[::1"})
    assert broken.status_code == 403 and "another site" in broken.text
    other_port = desk.post("/signout", data={"csrf": csrf}, headers={"Origin": "http://127.0.0.1:3000"})
    assert other_port.status_code == 403


def test_a_host_that_is_not_a_name_is_refused_when_the_config_loads(tmp_path: Path) -> None:
    from storage.errors import ConfigError

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n\n[desk]\nhosts = ["desk.example.org/desk"]\n')
    with pytest.raises(
        ConfigError, match=r"\[desk\] hosts is wrong: 'desk.example.org/desk' is not a host name"
    ):
        load_settings(str(config))

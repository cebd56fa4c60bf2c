from __future__ import annotations

import pytest

from tasks.normalize import canonical_url, clean_text, content_hash, guess_language


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTPS://WWW.Example.COM:443/a/b/?utm_source=x&utm_medium=y#frag", "https://example.com/a/b"),
        ("http://example.com:80/x?b=2&a=1&fbclid=zz", "http://example.com/x?a=1&b=2"),
        ("https://example.com:8443/x/", "https://example.com:8443/x"),
        ("https://example.com/", "https://example.com"),
        ("  https://example.com/p?id=7  ", "https://example.com/p?id=7"),
    ],
)
def test_canonical_url(raw: str, expected: str) -> None:
    assert canonical_url(raw) == expected


def test_clean_text_drops_markup_scripts_and_handlers() -> None:
    dirty = (
        '<p>Hello <b>world</b></p><script>alert(1)</script><img src=x onerror="alert(2)">'
        "<style>p{}</style>&amp; more"
    )
    assert clean_text(dirty) == "Hello world & more"


def test_clean_text_survives_broken_markup() -> None:
    assert clean_text("<p>unclosed <b>bold") == "unclosed bold"
    assert clean_text(None) == ""


def test_content_hash_ignores_case_and_spacing() -> None:
    assert content_hash("A  Title", "Body text") == content_hash("a title", "body   TEXT")
    assert content_hash("A title", "Body") != content_hash("A title", "Other body")


@pytest.mark.parametrize(
    ("text", "declared", "expected"),
    [
        ("OpenAI releases a new model for the developers", None, "en"),
        ("PyTorch 1.9 发布，新增多项功能与改进", None, "zh"),
        ("OpenAI maakt GPT-5 per direct beschikbaar voor de gebruikers van het platform", None, "nl"),
        ("whatever", "en-US", "en"),
        ("", None, "und"),
    ],
)
def test_guess_language(text: str, declared: str | None, expected: str) -> None:
    assert guess_language(text, declared) == expected

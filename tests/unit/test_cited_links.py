"""Cited links lose their tracking parameters and nothing else."""

from __future__ import annotations

import pytest

from tasks.normalize import without_tracking


@pytest.mark.parametrize(
    ("published", "cited"),
    [
        ("https://a.example/p?utm_source=rss&utm_medium=feed", "https://a.example/p"),
        (
            "https://a.example/P?id=7&UTM_Campaign=x&Page=2&fbclid=z&b=%20B#Sec",
            "https://a.example/P?id=7&Page=2&b=%20B#Sec",
        ),
        ("https://a.example/p?gclid=1&mc_cid=2&mc_eid=3", "https://a.example/p"),
        ("https://a.example/p?utm_source=x#top", "https://a.example/p#top"),
        ("https://a.example/p?z=1&a=2&utm_term=t", "https://a.example/p?z=1&a=2"),
    ],
)
def test_tracking_parameters_are_dropped_the_rest_kept_as_published(published: str, cited: str) -> None:
    assert without_tracking(published) == cited


@pytest.mark.parametrize(
    "url",
    [
        "https://a.example/2025/08/story",
        "https://a.example/p?Z=1&a=&&b=2#frag",
        "https://a.example/p?utmost=1&ref=rss&clid=4",  # look alike, are not tracking parameters
        "https://a.example/utm_source/p#utm_medium=x",
    ],
)
def test_a_link_without_them_is_byte_identical(url: str) -> None:
    assert without_tracking(url) == url

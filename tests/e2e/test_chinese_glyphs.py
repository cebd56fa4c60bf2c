"""A brief with a Chinese title, in Debian's chromium: the title is drawn with real glyphs, not boxes.

Without a CJK font (``.ci/run`` installs ``fonts-noto-cjk``) every Chinese character is drawn
as the same empty box, the glyph of a character no font has. The page under test is the brief
as published, with a probe script added to the test's copy: it draws each Chinese character
of the title in the title's own computed font, and compares each drawing with the box.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest

from storage.brief import Window
from tasks.render import render, view
from tasks.write import arrange
from tests.factories import brief as make_brief
from tests.factories import brief_item, citation

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
TITLE = "OpenAI发布最强小模型GPT-5.4 mini"
PROBE = """<script>
const title = document.querySelector('h3[lang="zh"]');
const style = getComputedStyle(title);
const canvas = document.createElement('canvas');
canvas.width = canvas.height = 64;
const pen = canvas.getContext('2d');
function drawn(ch) {
  pen.clearRect(0, 0, 64, 64);
  pen.font = `${style.fontWeight} 48px ${style.fontFamily}`;
  pen.fillText(ch, 4, 52);
  return Array.from(pen.getImageData(0, 0, 64, 64).data.filter((_, i) => i % 4 === 3)).join(',');
}
const chars = [...new Set(title.textContent.match(/[\\u4e00-\\u9fff]/g))];
const box = drawn('\\u0378');  // unassigned: no font has it
document.body.dataset.glyphs = JSON.stringify({
  family: style.fontFamily,
  chars: chars.join(''),
  boxes: chars.filter((c) => drawn(c) === box).join(''),
  distinct: new Set(chars.map(drawn)).size,
});
</script>
"""


def brief(kind: str) -> str:
    """The published page or the email body of an English brief whose first story is Chinese."""
    story = brief_item(
        "st-1",
        TITLE,
        language="zh",
        importance=0.9,
        summary="OpenAI发布了GPT-5.4 mini和nano两款小模型。",
        citations=[
            citation(
                "art-1",
                url="https://news.aibase.com/zh/daily/26342#3",
                source="aibase_daily",
                published="2026-03-18T08:00:00+00:00",
                kind="digest",
                outlet_label="aibase #3",
            )
        ],
    )
    window = Window(start="2026-03-17T00:00:00+00:00", end="2026-03-19T00:00:00+00:00")
    doc = make_brief(*arrange([story], top=5, quotas={}, quick_links=5), day=date(2026, 3, 18), window=window)
    return render(kind, view(doc, {}))  # type: ignore[arg-type]


def glyphs(page: str, folder: Path, environ: dict[str, str] | None = None) -> dict:
    """What the probe found, with the page drawn by chromium (under ``environ`` when given)."""
    folder.mkdir(parents=True, exist_ok=True)
    probed = folder / "page.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"))
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            f"--user-data-dir={folder / 'profile'}",
            "--dump-dom",
            probed.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=environ,
    )
    found = re.search(r'data-glyphs="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.parametrize("kind", ["html", "email"])
def test_a_chinese_title_is_drawn_with_real_glyphs(kind: str, tmp_path: Path) -> None:
    page = brief(kind)
    assert '<html lang="en">' in page and re.search(r'<h3 lang="zh"', page)
    found = glyphs(page, tmp_path)
    assert found["chars"] == "发布最强小模型"
    assert "Noto Sans CJK SC" in found["family"]  # the page's stack names the CJK fonts
    assert found["boxes"] == "", f"drawn as boxes (no CJK font? apt-get install fonts-noto-cjk): {found}"
    assert found["distinct"] == len(found["chars"]), found


def test_the_probe_sees_boxes_where_no_cjk_font_is_reachable(tmp_path: Path) -> None:
    """The same page with only one Latin font for chromium to find: every character is a box.
    So the test above can fail, and does on a machine without a CJK font."""
    fonts = tmp_path / "latin-only"
    fonts.mkdir()
    latin = _latin_font()
    (fonts / latin.name).symlink_to(latin)
    config = tmp_path / "fonts.conf"
    config.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n'
        f"<fontconfig><dir>{fonts}</dir><cachedir>{tmp_path / 'fc-cache'}</cachedir></fontconfig>\n"
    )
    found = glyphs(brief("html"), tmp_path / "run", {**os.environ, "FONTCONFIG_FILE": str(config)})
    assert found["boxes"] == found["chars"] == "发布最强小模型" and found["distinct"] == 1, found


def _latin_font() -> Path:
    """A font file fontconfig gives for English text and that has no Chinese, else skip."""
    fc_match, fc_query = shutil.which("fc-match"), shutil.which("fc-query")
    if not (fc_match and fc_query):
        pytest.skip("fontconfig's fc-match and fc-query are not installed")
    path = Path(
        subprocess.run(
            [fc_match, "-f", "%{file}", "sans-serif:lang=en"], capture_output=True, text=True
        ).stdout
    )
    langs = subprocess.run([fc_query, "-f", "%{lang}", str(path)], capture_output=True, text=True).stdout
    if not path.is_file() or "zh" in langs.split("|"):
        pytest.skip(f"no Latin-only font to draw with (fontconfig gives {path})")
    return path

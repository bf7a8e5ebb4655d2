"""The HTML report renders in headless Chromium (issue 7's acceptance): a screenshot is taken
and decoded with the stdlib, and must not be blank: many distinct colours, a good share of
non-white pixels, and the figures' own colours (touched-line shading, the role colours of
the write bars) on screen, which only a rendered SVG produces."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from png_pixels import read_png
from report_helpers import ObjCase

from cachefit.cli.main import main

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists(
    "/usr/bin/chromium") else None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (`make test-deps` installs it)")

SHADE = (0xFF, 0xF3, 0xC4)      # access_figure: touched cache line
ROLE0 = (0x1F, 0x77, 0xB4)
ROLE1 = (0xD6, 0x27, 0x28)


def screenshot(html: Path, png: Path, profile_dir: Path) -> None:
    assert CHROMIUM is not None
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
         "--window-size=1200,1600", f"--user-data-dir={profile_dir}",
         "--hide-scrollbars", html.resolve().as_uri()],
        capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0 and png.is_file(), proc.stderr[-2000:]


def test_report_renders_in_headless_chromium(obj_case: ObjCase, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "report.html"
    assert main(["report", str(obj_case.profile), "--type", "obj", "--binary",
                 str(obj_case.binary), "--layouts", str(obj_case.plan), "--object-align",
                 "64", "--html", str(html)]) == 0
    png = tmp_path / "shot.png"
    screenshot(html, png, tmp_path / "chromium-profile")
    image = read_png(png)
    assert (image.width, image.height) == (1200, 1600)
    colours: Counter[tuple[int, int, int]] = Counter(
        image.pixel(x, y) for y in range(image.height) for x in range(0, image.width, 2))
    total = sum(colours.values())
    non_white = total - colours[(255, 255, 255)]
    assert len(colours) >= 200, f"only {len(colours)} colours: blank page?"
    assert non_white / total >= 0.05, f"only {non_white / total:.1%} non-white"
    assert colours[SHADE] >= 1000, "no touched-line shading: the SVG figures did not render"
    assert colours[ROLE0] >= 10 and colours[ROLE1] >= 10, "no write bars in role colours"

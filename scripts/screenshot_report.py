"""Render a report.html in headless Chromium and save the whole page as a PNG, to look at it as a person would.

    python scripts/screenshot_report.py results/quickstart/report.html results/reference/quickstart/screenshots/report-1280.png --width 1280

    python scripts/screenshot_report.py REPORT OUT.png --width 390    # a phone's width

Needs Debian's `chromium` (apt-get install -y chromium) or another Chromium/Chrome on PATH (--chromium to name
it). The page height is measured first (a copy of the page with a one-line script, read back with --dump-dom),
so the screenshot holds the whole page, not one window. Headless Chromium's window is at least 500 px wide, so a
narrower width renders the page in an iframe of that width (its own viewport: media queries see that width) in a
500-px window, and the screenshot is cut to the iframe.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MEASURE = ("<script>window.addEventListener('load', () => document.body.setAttribute('data-height', "
           "String(Math.ceil(document.documentElement.scrollHeight))));</script>")
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MIN_WINDOW = 500  # headless Chromium's narrowest window
FRAME = ('<!DOCTYPE html><html><head><style>body {{ margin: 0; }} iframe {{ border: 0; display: block; }}</style></head>'
         '<body><iframe src="{src}" style="width: {width}px; height: {height}px" scrolling="no"></iframe>{script}</body></html>')
FRAME_MEASURE = ("<script>document.querySelector('iframe').addEventListener('load', e => document.body.setAttribute("
                 "'data-height', String(Math.ceil(e.target.contentDocument.documentElement.scrollHeight))));</script>")


def find_chromium(name: str | None) -> str:
    """The Chromium executable: `name`, else the first of CANDIDATES on PATH; SystemExit with how to install."""
    for candidate in ([name] if name else CANDIDATES):
        path = shutil.which(candidate)
        if path:
            return path
    raise SystemExit("no Chromium found: install Debian's chromium (apt-get install -y chromium) or pass --chromium")


def chromium(exe: str, args: list[str], profile: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with a throw-away profile (no sandbox: containers often run as root)."""
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--virtual-time-budget=5000",
            "--allow-file-access-from-files"]  # a narrow width's frame reads its page's height
    return subprocess.run(base + args, capture_output=True, text=True, timeout=timeout, check=False)


def page_height(exe: str, report: Path, width: int, profile: str, timeout: float) -> int:
    """The rendered page's height in CSS pixels at `width`, from a copy of the page with MEASURE added."""
    with tempfile.TemporaryDirectory() as tmp:
        if width < MIN_WINDOW:
            copy = Path(tmp) / "frame.html"
            copy.write_text(FRAME.format(src=report.as_uri(), width=width, height=800, script=FRAME_MEASURE))
            width = MIN_WINDOW
        else:
            copy = Path(tmp) / "measure.html"
            copy.write_text(report.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>", 1),
                            encoding="utf-8")
        done = chromium(exe, [f"--window-size={width},800", "--dump-dom", copy.as_uri()], profile, timeout)
    found = re.search(r'data-height="(\d+)"', done.stdout)
    if not found:
        raise SystemExit(f"could not measure the page height (chromium exit {done.returncode}): {done.stderr[-500:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", type=Path, help="the report.html to render")
    p.add_argument("out", type=Path, help="the PNG to write")
    p.add_argument("--width", type=int, default=1500, help="window width in CSS pixels (default 1500)")
    p.add_argument("--max-height", type=int, default=16000, help="cut the page at this height (default 16000)")
    p.add_argument("--chromium", default=None, help="the Chromium executable (default: found on PATH)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per Chromium call (default 120)")
    args = p.parse_args(argv)
    if not args.report.is_file():
        raise SystemExit(f"{args.report} does not exist")
    exe = find_chromium(args.chromium)
    report = args.report.resolve()
    with tempfile.TemporaryDirectory(prefix="ganeval-chromium-") as profile:
        height = min(page_height(exe, report, args.width, profile, args.timeout), args.max_height)
        out = args.out.resolve()
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp_png = out.with_name(out.name + ".tmp.png")
        page = report.as_uri()
        if args.width < MIN_WINDOW:  # the page in a frame of that width, the shot cut to it
            frame = Path(profile) / "frame.html"
            frame.write_text(FRAME.format(src=report.as_uri(), width=args.width, height=height, script=""))
            page = frame.as_uri()
        done = chromium(exe, [f"--window-size={max(args.width, MIN_WINDOW)},{height}", f"--screenshot={tmp_png}",
                              page], profile, args.timeout)
        if not tmp_png.is_file():
            raise SystemExit(f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr[-500:]}")
        if args.width < MIN_WINDOW:
            from PIL import Image

            with Image.open(tmp_png) as im:
                im.crop((0, 0, args.width, height)).save(tmp_png)
        tmp_png.replace(out)  # atomic: a reader never sees half a PNG
    print(f"{out}: {args.width}×{height} px of {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

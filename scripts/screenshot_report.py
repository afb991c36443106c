"""Render a report.html in headless Chromium and save the whole page as a PNG, to look at it as a person would.

    python scripts/screenshot_report.py results/quickstart/report.html results/reference/quickstart/report.png

Needs Debian's `chromium` (apt-get install -y chromium) or another Chromium/Chrome on PATH (--chromium to name
it). The page height is measured first (a copy of the page with a one-line script, read back with --dump-dom),
so the screenshot holds the whole page, not one window.
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
            "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--virtual-time-budget=5000"]
    return subprocess.run(base + args, capture_output=True, text=True, timeout=timeout, check=False)


def page_height(exe: str, report: Path, width: int, profile: str, timeout: float) -> int:
    """The rendered page's height in CSS pixels at `width`, from a copy of the page with MEASURE added."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "measure.html"
        copy.write_text(report.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>", 1), encoding="utf-8")
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
        done = chromium(exe, [f"--window-size={args.width},{height}", f"--screenshot={tmp_png}", report.as_uri()],
                        profile, args.timeout)
        if not tmp_png.is_file():
            raise SystemExit(f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr[-500:]}")
        tmp_png.replace(out)  # atomic: a reader never sees half a PNG
    print(f"{out}: {args.width}×{height} px of {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

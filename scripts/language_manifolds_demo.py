"""Make results/reference/language_manifolds: a demonstration of the study on made-up languages in three planted
families (`ganeval.studies.language_manifolds.planted_families`: a ring, a Gaussian blob and a swiss roll, each
language under its own rotation and scale in 50 dimensions), labelled a demonstration throughout: the paper's 16
Wikipedias' vectors are not available offline, so its claim reads *not tested: stand-in data*.

    PYTHONPATH=. python scripts/language_manifolds_demo.py [--work FOLDER] [--out FOLDER] [--runs 20]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

DEMONSTRATION = ("made-up languages in three planted families (a noisy ring, an 8-d Gaussian blob, a swiss roll; three "
                 "languages each, every one its own draw under its own random rotation into 50 dimensions and its own "
                 "scale), written by scripts/language_manifolds_demo.py")

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parent.parent
    ap.add_argument("--work", type=Path, default=Path("language_demo_vectors"), help="folder for the .vec files")
    ap.add_argument("--out", type=Path, default=root / "results" / "reference" / "language_manifolds")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--sample-size", type=int, default=500)
    a = ap.parse_args()
    if a.out.exists() and any(a.out.iterdir()):
        raise SystemExit(f"{a.out} is not empty: choose another --out")
    from ganeval.studies.language_manifolds import planted_families

    files, fams = planted_families(a.work)
    langs = "{" + ", ".join(f"{k}: {v}" for k, v in files.items()) + "}"
    famd = "{" + ", ".join(f"{k}: {v}" for k, v in fams.items()) + "}"
    cmd = [sys.executable, "-m", "ganeval", "experiment=language_manifolds", f"languages={langs}", f"families={famd}",
           f"runs={a.runs}", f"sample_size={a.sample_size}", "vocab=1200", "kid_subset=500",
           f"demonstration='{DEMONSTRATION}'", "progress=false", f"results_dir={a.out}"]
    raise SystemExit(subprocess.call(cmd))

"""The torus search's record (scripts/torus_search.py, issue 13 and 26): its logged candidates read back, ranked
against the criterion, the bad model chosen blind to IMD, and search.md. Apart from the search, which trains."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ganeval.studies.torus import PAPER


def logged(path: Path) -> set[str]:
    """Candidate keys already in the log (name and full definition), so a rerun skips them."""
    if not path.exists():
        return set()
    keys = set()
    for line in path.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            keys.add(rec["key"])
    return keys


def append(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line and flush it to disk (append-only)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(record, sort_keys=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def describe(rec: dict[str, Any]) -> str:
    """One line for the console: each metric's good and bad mean ± half-width, overlaps and the verdict."""
    parts = []
    for m in ("fid", "kid", "imd"):
        r = rec["metrics"][m]
        parts.append(f"{m} {r['good']['mean']:.4g}±{r['good']['half_width']:.2g} vs {r['bad']['mean']:.4g}"
                     f"±{r['bad']['half_width']:.2g} {'ov' if r['intervals_overlap'] else 'SEP'}")
    hole = {k: round(float(np.mean(v)), 3) for k, v in rec["hole_fraction"].items()}
    return (f"{rec['candidate']}: {'; '.join(parts)}; hole {hole}; holds={rec['criteria']['holds']}; per seed (subsample "
            f"intervals) {rec['criteria']['per_seed_paper_claim']} ({rec['wall_s']:.0f} s)")


def closeness(rec: dict[str, Any]) -> tuple[int, float]:
    """How near a logged candidate comes to the criterion: the number of its four parts met (FID overlap, KID
    overlap, IMD separates, good FID near the paper's), then the p-value of IMD's paired difference (lower first)."""
    c = rec["criteria"]
    met = sum(bool(c[k]) for k in ("fid_overlap", "kid_overlap", "imd_separates", "good_fid_near_paper"))
    imd = rec["metrics"]["imd"]
    return (-met, imd["diff_p"] if imd["bad"]["mean"] > imd["good"]["mean"] else 2.0)


# A bad model chosen without looking at IMD (issue #26): the bad model's mean FID over seeds within this factor of the
# good one's (the paper's is 0.00627 / 0.00529 = 1.19) and more of its samples in the hole than the good one's
BLIND_FID_RATIO = (1.2, 2.0)
PAPER_FID_RATIO = PAPER["fid"]["bad"][0] / PAPER["fid"]["good"][0]


def fid_ratio(rec: dict[str, Any]) -> float:
    """The bad model's mean FID over seeds divided by the good one's."""
    m = rec["metrics"]["fid"]
    return float(m["bad"]["mean"] / m["good"]["mean"])


def blind_criterion(rec: dict[str, Any]) -> bool:
    """Whether a logged candidate is a bad model like the paper's by FID and the hole alone (IMD is not read): FID
    ratio bad/good within BLIND_FID_RATIO, more samples in the hole than the good model, good FID near the paper's."""
    holes = {k: float(np.mean(rec["hole_fraction"][k])) for k in ("good", "bad")}
    return (BLIND_FID_RATIO[0] <= fid_ratio(rec) <= BLIND_FID_RATIO[1] and holes["bad"] > holes["good"]
            and bool(rec["criteria"]["good_fid_near_paper"]))


def blind_choice(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The candidates meeting `blind_criterion`, the one whose FID ratio is nearest the paper's first."""
    met = [r for r in recs if blind_criterion(r)]
    return sorted(met, key=lambda r: (abs(np.log(fid_ratio(r) / PAPER_FID_RATIO)), r["candidate"]))


def blind_section(recs: list[dict[str, Any]]) -> list[str]:
    """search.md's section on the bad model chosen blind to IMD: each candidate meeting the criterion, what every
    metric then shows by both kinds of interval, and the chosen one's reading."""
    met = blind_choice(recs)
    lo, hi = BLIND_FID_RATIO
    lines = ["", "## A bad model chosen without looking at IMD", "",
             f"Criterion (reads FID and the hole, not IMD): the bad model's mean FID over the seeds is {lo:g}–{hi:g}× "
             f"the good one's (the paper's: {PAPER_FID_RATIO:.2f}×), it puts more of its samples in the hole than the "
             "good model, and the good model's FID is within a factor 2 of the paper's. Among the candidates meeting "
             "it, the one with the FID ratio nearest the paper's is chosen. Intervals: across the 3 training seeds "
             "(overlap: o, separate: s) and per seed over subsample runs (the paper's kind: seeds in which good and "
             "bad separate).", ""]
    if not met:
        return lines + ["No logged candidate meets it."]
    lines += ["| candidate | FID bad/good | hole good / bad | FID: across seeds, per seed | KID | IMD | "
              "per seed: paper's pattern |", "|---|---|---|---|---|---|---|"]
    for r in met:
        m, ps = r["metrics"], r["per_seed"]

        def cell(k: str) -> str:
            apart = sum(not p["overlap"][k] for p in ps)
            return f"{'o' if m[k]['intervals_overlap'] else 's'} (p {m[k]['diff_p']:.2g}), {apart}/{len(ps)}"

        hole = " / ".join(f"{np.mean(r['hole_fraction'][k]):.3f}" for k in ("good", "bad"))
        per = r["criteria"].get("per_seed_paper_claim", [])
        lines.append(f"| {r['candidate']} | {fid_ratio(r):.2f} | {hole} | {cell('fid')} | {cell('kid')} | "
                     f"{cell('imd')} | {sum(per)}/{len(per)} |")
    best = met[0]
    m = best["metrics"]
    apart = {k: sum(not p["overlap"][k] for p in best["per_seed"]) for k in ("fid", "kid", "imd")}
    shows = ("IMD separates good from bad where FID and KID do not" if best["criteria"]["paper_claim"] else
             "the paper's pattern (FID and KID overlap, IMD separates) does not appear")
    lines += ["", f"Chosen: **{best['candidate']}** ({best['varies']}; FID ratio {fid_ratio(best):.2f}). By the "
              f"across-seed intervals {shows}: IMD good {m['imd']['good']['mean']:.3g} ± "
              f"{m['imd']['good']['half_width']:.2g} vs bad {m['imd']['bad']['mean']:.3g} ± "
              f"{m['imd']['bad']['half_width']:.2g} (paired p {m['imd']['diff_p']:.2g}), FID {m['fid']['good']['mean']:.3g} "
              f"vs {m['fid']['bad']['mean']:.3g} (p {m['fid']['diff_p']:.2g}), KID {m['kid']['good']['mean']:.3g} vs "
              f"{m['kid']['bad']['mean']:.3g} (p {m['kid']['diff_p']:.2g}). Per seed (subsample intervals) FID "
              f"separates them in {apart['fid']}/3 seeds, KID in {apart['kid']}/3, IMD in {apart['imd']}/3; the "
              f"paper's pattern in {sum(best['criteria']['per_seed_paper_claim'])}/3."]
    return lines


def summarize_log(path: Path) -> str:
    """search.md: every logged candidate, closest first, with its numbers and which parts of the criterion it met."""
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    recs.sort(key=closeness)
    held = [r["candidate"] for r in recs if r["criteria"]["holds"]]
    proto = recs[0]["protocol"] if recs else {"train_seeds": [], "runs": 0, "sample_size": 0, "confidence": 0.0}
    lines = ["# Torus search (scripts/torus_search.py): every candidate, closest to the criterion first", "",
             f"{len(recs)} candidates, each model trained with training seeds {proto['train_seeds']}, "
             f"{proto['runs']} runs of {proto['sample_size']} points per model and seed, "
             f"{proto['confidence']:.0%} t intervals across seeds. Criterion: FID's and "
             "KID's good and bad intervals overlap, IMD's do not (bad higher), good FID within a factor 2 of 0.00529. "
             + (f"Met by: {', '.join(held)}." if held else "**No candidate met it.**"), "",
             "| candidate | varies | FID good / bad | KID good / bad | IMD good / bad | hole good / bad | parts met | "
             "IMD paired p | per seed (subsample intervals): paper's pattern |", "|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        m = r["metrics"]
        def cell(k: str) -> str:
            g, b = m[k]["good"], m[k]["bad"]
            return f"{g['mean']:.4g} ± {g['half_width']:.2g} / {b['mean']:.4g} ± {b['half_width']:.2g}"

        hole = " / ".join(f"{np.mean(r['hole_fraction'][k]):.3f}" for k in ("good", "bad"))
        per = r["criteria"].get("per_seed_paper_claim", [])
        lines.append(f"| {r['candidate']} | {r['varies']} | {cell('fid')} | {cell('kid')} | {cell('imd')} | {hole} | "
                     f"{-closeness(r)[0]}/4 | {m['imd']['diff_p']:.2g} | {sum(per)}/{len(per)} |")
    lines += blind_section(recs)
    return "\n".join(lines) + "\n"

"""summary.png in the table's units with no label in a neighbour's panel; table footers that say what is written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ganeval.results import plots
from ganeval.results.intervals import decimals_for
from ganeval.results.tables import metric_label, table_markdown

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference" / "quickstart"


def _reference() -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_csv(REFERENCE / "summary.csv"), pd.read_csv(REFERENCE / "summary_seeds.csv")


def test_panels_use_the_tables_units_and_labels() -> None:
    summary, seeds = _reference()
    fig = plots.summary_figure(summary, "t", seeds=seeds)
    axes = fig.axes
    assert [ax.get_ylabel() for ax in axes] == [metric_label(m)[0] for m in dict.fromkeys(summary.metric)]
    kid_ax = axes[list(dict.fromkeys(summary.metric)).index("kid")]
    assert kid_ax.get_ylabel() == "KID×10³" == metric_label("kid")[0]
    means = np.asarray(kid_ax.containers[0].lines[0].get_ydata(), float)  # the errorbar: KID × 10³ as in table.md
    expected = summary[summary.metric == "kid"]["mean"].to_numpy() * 1e3
    np.testing.assert_allclose(means, expected)
    cell = table_markdown(summary).split("| KID×10³ |")[1].split("|")[0]
    half = summary[summary.metric == "kid"]["half_width"].to_numpy()[0] * 1e3
    assert cell.strip().startswith(f"{expected[0]:.{decimals_for(half)}f} ± ")
    plots._plt().close(fig)


def test_no_axis_label_reaches_into_the_neighbouring_panel() -> None:
    summary, seeds = _reference()
    for s, extra in ((summary, {}), (summary, {"seeds": seeds})):
        fig = plots.summary_figure(s, "a long title " * 3, **extra)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]  # each panel with its tick labels, title, labels
        for left, right in zip(boxes, boxes[1:]):
            assert left.x1 <= right.x0, (left, right)  # ordered, disjoint panels
        for ax, box in zip(fig.axes[1:], boxes):
            label = ax.yaxis.label.get_window_extent(renderer)
            assert label.x0 >= box.x1, "a y-label overlaps the panel on its left"
        plots._plt().close(fig)


def test_footer_names_comparison_csv_only_when_there_is_a_comparison() -> None:
    summary, _ = _reference()
    one = summary[summary.model == "wgan"]
    text = table_markdown(one)
    assert "nothing is bold: each dataset has one model, so there is nothing to compare" in text
    assert "comparison.csv" not in text
    two = table_markdown(summary)  # two models, no comparison given (e.g. collated jobs)
    assert "no paired comparison of the models was made" in two and "comparison.csv" not in two
    compared = table_markdown(summary, pd.read_csv(REFERENCE / "comparison.csv"))  # what the quickstart writes
    assert "bold: significantly best" in compared and "(the differences and their intervals: comparison.csv)" in compared

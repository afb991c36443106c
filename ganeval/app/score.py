"""`ganeval-score REAL FAKE [FAKE ...]` (also `python -m ganeval.app.score`): score generated sets against a real one
in one line, as pytorch-fid and torch-fidelity do, or with intervals over subsamples (--runs N --sample-size M).

The command line: parse and check the options, score (`ganeval.score`, `ganeval.app.scoring.score`), print the
result (`ganeval.app.score_print`).
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from typing import Any, NoReturn, Sequence

from ganeval.app.errors import say

EPILOG = """\
inputs (REAL, FAKE), resolved in this order:
  an existing folder        images under it, recursive, sorted (png, jpg, jpeg, webp, bmp), streamed in batches
  an existing .zip or .tar  its image members, sorted by name, streamed (uncompressed .tar; a root dataset.json
                            is ignored; absolute or '..' paths, nested archives, other files and bombs are refused)
  a reference file          recognised by its keys: pytorch-fid/TTUR/clean-fid .npz {{mu, sigma}} and EDM2 .pkl
                            (moments only: FID/FD alone, REAL only), clean-fid _kid.npz {{feats}}, an ADM
                            batch {{arr_0, mu, sigma}} (its images), ganeval's --save-ref file (features); FILE:mu and
                            FILE:sigma are refused (moments are not feature rows)
  an existing .npy/.npz     an array; FILE.npz:KEY picks one of several arrays in a .npz
  a word-vector file        fastText/word2vec .vec (or .vec.gz) or word2vec .bin: its words' vectors as features,
                            the --vocab N most frequent (the file's first N rows)
  a dataset name            a data config of ganeval/configs/data/ with its defaults, as `ganeval data=NAME`
                            loads it: {names}
  An array is features when it is 2-D (N×D) and images when it is 3-D/4-D in an image layout
  (N×H×W, N×C×H×W or N×H×W×C, C = 1 or 3) of uint8 or floats in [0, 1]; anything else is refused.
  Features default to inception for images and identity for feature arrays.

runs:
  --runs 1 (default) scores each FAKE against REAL once on all rows of both, like pytorch-fid:
  imd(real, fake, seed=SEED) (probes from numpy.random.default_rng(SEED): REAL's are the same for every
  FAKE), fid(real, fake), kid(real, fake, subsets, subset_size, seed=SEED) (its mean; its std over subsets is
  printed beside it). No interval: another --seed moves IMD and KID.
  --runs N --sample-size M runs the subsample protocol (ganeval.evaluate): run r draws M rows of each set
  with numpy.random.default_rng([SEED, r]), each metric's random choices from a stream of its own (keyed by
  its name: a metric's numbers do not depend on the others), and prints mean ± half-width of the Student-t
  interval.

examples:
  ganeval-score real_images/ fake_images/                     # Inception features, IMD, FID, KID
  ganeval-score digits fakes/ --features pixels --metrics fid,kid
  ganeval-score real.npz fake_a.npz fake_b.npz --runs 20 --sample-size 5000
  ganeval-score real.npy fake.npy --json > scores.json
  ganeval-score real.zip fakes.zip --features dinov2 --num-workers 8 --cache-dir ~/.cache/ganeval
  torchrun --nproc_per_node 4 -m ganeval.app.score real/ fakes/ --cache-dir cache   # one GPU per rank
  ganeval-score real.npy fake.npy --runs 10 --sample-size 1000 --out results/mine   # + report.html
  ganeval-score en.vec fr.vec --vocab 20000 --metrics imd     # two languages' word vectors, of any dimensions
  ganeval-score real/ fake/ --real-features inception --features dinov2 --metrics imd   # two feature spaces
  ganeval-score --save-ref cifar10_ref.npz --save-stats cifar10_stats.npz real_images/   # write references
  ganeval-score fid_stats_cifar10_train.npz fakes/ --resize legacy_tensorflow   # FID vs published moments
  ganeval-score cifar10 fakes/ --protocol cifar10_train_50k --runs 10 --sample-size 10000   # + the full-set FID
"""


def parse_option(text: str, metrics: dict[str, dict[str, Any]]) -> None:
    """'kid.subset_size=500' -> metrics['kid']['subset_size'] = 500 (YAML scalars: 500, 0.5, true, exact)."""
    import yaml

    key, eq, value = text.partition("=")
    metric, dot, name = key.strip().partition(".")
    if not eq or not dot or not name:
        raise ValueError(f"--option {text}: write METRIC.OPTION=VALUE, e.g. kid.subset_size=500")
    if metric not in metrics:
        raise ValueError(f"--option {text}: {metric} is not among --metrics ({', '.join(metrics)})")
    try:
        metrics[metric][name.strip()] = yaml.safe_load(value)
    except yaml.YAMLError as e:
        raise ValueError(f"--option {text}: cannot read the value ({e})") from None
    from ganeval.metrics import get_metric

    try:  # an unknown name or a bad value: refused here, before any input is read
        get_metric(metric).resolve(metrics[metric])
    except ValueError as e:
        raise ValueError(f"--option {text}: {e}") from None


class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (no usage block): an unknown flag named with the closest real one."""

    def error(self, message: str) -> NoReturn:
        import difflib

        hint = ""
        if message.startswith("unrecognized arguments:"):
            flags = [o[2:] for a in self._actions for o in a.option_strings if o.startswith("--")]
            for word in message.partition(":")[2].split():
                near = difflib.get_close_matches(word.split("=")[0].lstrip("-"), flags, n=1, cutoff=0.6)
                if word.startswith("-") and near:
                    hint = f" (did you mean --{near[0]}?)"
                    break
        choice = re.match(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:  # a misspelt value of a flag with choices: the closest one
            near = difflib.get_close_matches(choice.group(2), re.findall(r"'([^']*)'", choice.group(3)), n=1, cutoff=0.6)
            hint = f" (did you mean {choice.group(1)} {near[0]}?)" if near else ""
        self.exit(2, f"{self.prog}: error: {message}{hint}; `{self.prog} --help` lists the options\n")


class FullHelp(argparse.Action):
    """-h/--help of the light parser: the full parser's help (with the extractors and datasets it lists)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:  # argparse's own names
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, p: argparse.ArgumentParser, *_: Any) -> NoReturn:
        parser().print_help()
        p.exit()


def parser(light: bool = False) -> argparse.ArgumentParser:
    """The command-line parser (its help lists the dataset names a REAL or FAKE may be). `light`: the same flags
    without what the extractor registry and the data configs fill in (choices, help), so that it imports neither
    torch nor the extractors: `run` refuses a mistyped flag with it in a fraction of a second, then parses again
    with the full parser."""
    if light:
        p = Parser(prog="ganeval-score", add_help=False)
        p.add_argument("-h", "--help", action=FullHelp)
        registry: dict[str, Any] = {}
        pixels_size, protocols = 0, ""
    else:
        from ganeval.app.protocols import protocol_table
        from ganeval.app.score_inputs import data_names
        from ganeval.app.score_request import PIXELS_SIZE
        from ganeval.features.base import REGISTRY

        p = Parser(
            prog="ganeval-score", formatter_class=argparse.RawDescriptionHelpFormatter,
            description="Score generated sets (FAKE) against a real set (REAL) with IMD, FID and KID.",
            epilog=EPILOG.format(names=", ".join(data_names())))
        registry, pixels_size, protocols = dict(REGISTRY), PIXELS_SIZE, ", ".join(protocol_table())

    def choices(values: Any) -> list[Any] | None:  # the light parser checks no value against the registry
        return None if light else list(values)

    p.add_argument("real", metavar="REAL", help="the real set: folder, .npy/.npz file, word vectors (.vec, .bin) or "
                   "dataset name")
    p.add_argument("fakes", metavar="FAKE", nargs="*", help="generated set(s), each scored against REAL")
    p.add_argument("--features", choices=choices(registry), default=None,
                   help="feature extractor (default: inception for images, identity for feature arrays): "
                   + "; ".join(f"{n}: {e.help}" if e.help else n for n, e in registry.items()))
    modes = list(dict.fromkeys(m for e in registry.values() for m in e.resize))  # every extractor's, in order
    p.add_argument("--real-features", choices=choices(registry), default=None, metavar="NAME",
                   help="REAL's own extractor (default: --features), e.g. --real-features inception --features dinov2: "
                   "sets in two feature spaces, which only dimension-free metrics compare (imd, vendi)")
    p.add_argument("--vocab", type=int, default=None, metavar="N", help="word-vector inputs (.vec, .vec.gz, .bin): "
                   "read their N most frequent words (default: every word)")
    p.add_argument("--resize", default=None, choices=choices(modes),
                   help="preprocessing mode, the first one the default: " + "; ".join(
                       f"{n} {' | '.join(e.resize)}" for n, e in registry.items() if e.resize and not e.options))
    p.add_argument("--plugins", default=None, metavar="MODULE[,MODULE]", help="import these modules first (from "
                   "PYTHONPATH), so the extractors and metrics they register can be chosen (the app's plugins=[...])")
    p.add_argument("--protocol", default=None, metavar="NAME", help="a named protocol, as the ganeval app's "
                   f"protocol=NAME ({protocols}; ganeval/configs/protocol/): fixes --features, --dims, --resize, --seed, REAL and the FAKE count, "
                   "refuses other values, and prints the full-set FID its papers report beside ours")
    p.add_argument("--metrics", default=None, help="comma-separated metrics (default: imd,fid,kid; fid against a "
                   "moments-only reference)")
    p.add_argument("--save-ref", default=None, metavar="OUT.npz", help="write REAL's features, mu, sigma and "
                   "provenance (extractor, weights SHA-256, mode, count, content hash) as ganeval's reference")
    p.add_argument("--save-stats", default=None, metavar="OUT.npz", help="write REAL's mu, sigma as pytorch-fid's "
                   "statistics .npz (pytorch-fid and clean-fid read it)")
    p.add_argument("--option", action="append", default=[], metavar="METRIC.NAME=VALUE",
                   help="a metric option, repeatable: kid.subset_size=500, kid.subsets=50, imd.k=5, imd.knn=approx")
    p.add_argument("--runs", type=int, default=1, help="1: one value on the full sets (default); N > 1: the "
                   "subsample protocol with intervals (needs --sample-size)")
    p.add_argument("--sample-size", type=int, default=None, help="rows drawn from each set per run (with --runs > 1)")
    p.add_argument("--confidence", type=float, default=0.99, help="interval level with --runs > 1 (default 0.99)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: cuda if available)")
    p.add_argument("--batch-size", type=int, default=None, help="feature-extraction batch size (default 250 on a GPU; "
                   "32 on a CPU, where a larger one takes more memory)")
    p.add_argument("--weights", default=None, help="weights file of --features "
                   f"{', '.join(n for n, e in registry.items() if e.weights)} (inception: "
                   "pt_inception-2015-12-05-6726825d.pth); default: $GANEVAL_INCEPTION_WEIGHTS "
                   "($GANEVAL_DINOV2_WEIGHTS, $GANEVAL_CLIP_WEIGHTS), the torch hub / Hugging Face cache, then a download")
    p.add_argument("--real-weights", default=None, metavar="FILE", help="the weights file of REAL's own extractor "
                   "(--real-features), where it and --features both load one (--weights is then FAKE's); otherwise "
                   "--weights, --resize, --dims and --pixels-size go to whichever of the two extractors takes them")
    p.add_argument("--num-workers", type=int, default=None, help="processes decoding image files (folders, zips, tars) "
                   "(default: min(8, CPU cores), 0: in the main process)")
    p.add_argument("--size", type=int, default=None, help="resize every image file to SIZE×SIZE (PIL bilinear, as "
                   "ganeval.data.folder's size=) before the extractor's own preprocessing (--resize); without it, "
                   "image files of one set must share one size")
    p.add_argument("--pixels-size", type=int, default=None, metavar="N", help="--features pixels: an image with "
                   f"a side over N is resized to N×N (bilinear, antialiased; default {pixels_size}: 256² RGB would "
                   "give 196 608-d rows, beyond FID's memory); 0 keeps every image at its own size")
    p.add_argument("--layout", default="auto", choices=("auto", "nchw", "nhwc"), help="how 4-D image arrays are laid "
                   "out (default auto: an array fitting both N×C×H×W and N×H×W×C, e.g. 200×3×8×3, is refused)")
    chosen = {n: e.dims for n, e in registry.items() if len(e.dims) > 1}  # the extractors whose `dims` chooses
    p.add_argument("--dims", type=int, default=None, choices=choices(sorted({d for dims in chosen.values() for d in dims})),
                   help="feature dimension of " + "; ".join(f"--features {n}: {' | '.join(map(str, d))} (default "
                                                            f"{d[0]})" for n, d in chosen.items()))
    p.add_argument("--no-download", action="store_true", help="never download Inception weights")
    p.add_argument("--cache-dir", default=None, help="cache features here, keyed by content (default: no cache)")
    p.add_argument("--out", default=None, metavar="DIR", help="write runs.csv, summary.csv/json, table.md/.tex, "
                   "summary.png and report.html here (as the ganeval app does; ganeval-collate reads it)")
    p.add_argument("--overwrite", action="store_true", help="replace runs of other inputs or options in --out, and "
                   "existing --save-ref/--save-stats files")
    p.add_argument("--no-plots", action="store_true", help="no summary.png in --out")
    p.add_argument("--no-samples", action="store_true", help="no sample grids in --out (by default, with image "
                   "inputs: samples_K_NAME.png, 16 images of each input drawn with --seed, shown in report.html)")
    p.add_argument("--json", action="store_true", help="print the results as JSON on stdout (and nothing else)")
    p.add_argument("--quiet", action="store_true", help="no progress bars (on stderr)")
    return p


def import_plugins(argv: Sequence[str]) -> None:
    """Import the modules of `--plugins A,B` in `argv` (ValueError naming one that cannot be imported)."""
    import importlib

    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--plugins", default=None)
    given = pre.parse_known_args(list(argv))[0].plugins
    modules = [m.strip() for m in (given or "").split(",") if m.strip()]
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise ValueError(f"--plugins: cannot import {name!r} ({e}); is it on PYTHONPATH?") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; user errors print one line on stderr and exit 2. Output piped into a reader that stops
    early (`| head`) ends quietly, as other command-line tools do."""
    try:
        return run(argv)
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes at exit
        return 1
    finally:
        if "ganeval.features.distributed" in sys.modules:  # under torchrun: the group (joined after it was imported)
            from ganeval.features.distributed import leave_group  # left before exit; a refused flag imports no torch

            leave_group()


def run(argv: Sequence[str] | None = None) -> int:
    """The command: parse, score, print (see `main`)."""
    import time

    t0 = time.perf_counter()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        import_plugins(argv)  # before the parser: its --features choices list what they register
    except ValueError as e:
        say(f"ganeval-score: {e}")
        return 2
    parser(light=True).parse_args(argv)  # a mistyped flag refused before torch and the extractors are imported
    args = parser().parse_args(argv)
    from ganeval.app.errors import user_errors

    from ganeval.stops import terminate_as_interrupt

    terminate_as_interrupt()  # SIGTERM ends the command as Ctrl-C does: one line, what is kept
    try:
        from ganeval.app.score_protocol import apply_protocol, given_options
        from ganeval.app.score_request import DefaultMetrics, default_metrics, parse_metrics
        from ganeval.app.scoring import score

        apply_protocol(args, given_options(parser(), argv))  # --protocol: its values set, departures refused
        metrics = parse_metrics(args.metrics or default_metrics(args.real))
        if args.metrics is None:
            metrics = DefaultMetrics(metrics)
        for text in args.option:
            parse_option(text, metrics)
        result = score(
            args.real, args.fakes, metrics=metrics, features=args.features, runs=args.runs,
            sample_size=args.sample_size, confidence=args.confidence, seed=args.seed, device=args.device,
            batch_size=args.batch_size, weights=args.weights, dims=args.dims, download=not args.no_download,
            cache_dir=args.cache_dir, num_workers=args.num_workers, size=args.size, layout=args.layout,
            pixels_size=args.pixels_size,
            resize=args.resize, save_ref=args.save_ref, save_stats=args.save_stats, out=args.out,
            overwrite=args.overwrite, plots=not args.no_plots, samples=not args.no_samples, progress=not args.quiet,
            command=shlex.join(["ganeval-score", *argv]), protocol=args.protocol, vocab=args.vocab,
            real_features=args.real_features, real_weights=args.real_weights)
    except user_errors() as e:
        from ganeval.app.score_print import refusal

        say(f"ganeval-score: {refusal(e, download=not args.no_download)}")
        return 2
    except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: one line saying what is stored (ganeval.stops)
        from ganeval.app.score_print import stop_line
        from ganeval.stops import exit_status

        say(f"ganeval-score: {stop_line(e, args.cache_dir)}")
        return exit_status(e)
    except OSError as e:
        from ganeval.stops import no_space

        if (message := no_space(e)) is None:
            raise
        say(f"ganeval-score: {message}")
        return 2
    if result is None:  # a torchrun rank other than 0: its share of the features went to rank 0
        return 0
    for path in result.saved:
        print(f"wrote {path}", file=sys.stderr)
    if not result.fakes:
        return 0
    from ganeval.app.score_print import time_line

    if args.json:
        from ganeval.results.files import json_dumps

        print(json_dumps(result.to_dict(), indent=2))  # valid JSON: null for a non-finite number
    else:
        from ganeval.app.score_print import RUNS_HINT

        print(result)  # a line per model and metric, then the comparisons in words
        if result.record.config["full_sets"]:
            print(RUNS_HINT, file=sys.stderr)
        if result.out is not None:
            print(f"results in {result.out} (report.html)", file=sys.stderr)
    if result.stages:
        print(time_line(result, time.perf_counter() - t0), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

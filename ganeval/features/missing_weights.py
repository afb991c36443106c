"""Missing weights said in one line in the caller's words: every way out (the file passed, its environment variable,
where it is published) and the way to score without them, named as the face the caller used writes it."""

from __future__ import annotations

from typing import Mapping

from ganeval.features.inception import WEIGHTS_ENV, WEIGHTS_FILENAME, WEIGHTS_URL, hub_weights_path


def weights_message(error: BaseException, download: bool, words: Mapping[str, str]) -> str:
    """One line for missing weights of the extractor the error names (the FID Inception's, DINOv2's, CLIP's), naming
    every way out in the caller's terms (`words`: "weights", "weights_arg", "no_download", "pixels" as the caller
    writes them: `ganeval.app.score_print.SCORE_WORDS` for ganeval-score, `APP_WORDS` for the ganeval app,
    `ganeval.app.python_words.PY_WORDS` for `ganeval.score`, `ganeval.torchmetrics.features.WORDS`)."""
    what, env, url = (getattr(error, k, d) for k, d in (("what", "FID Inception"), ("env", WEIGHTS_ENV),
                                                          ("url", WEIGHTS_URL)))
    inception = url == WEIGHTS_URL
    lines = str(error).splitlines()
    first = lines[1:2]
    if first and "no such file" in first[0] and "not set" not in first[0]:  # a path given: only it is read
        where = first[0].strip(" -").replace("the `weights` argument", words["weights_arg"])
    else:
        failed = next((li for li in lines if "unreachable (offline?)" in li or "HF_HUB_OFFLINE" in li), None)
        got = (f"download disabled ({words['no_download']})" if not download
               else "the download failed (offline?)" if failed is None
               else "the download failed: " + failed.partition("(OSError: ")[2].rstrip(")"))
        where = f"not in {hub_weights_path() if inception else 'the Hugging Face hub cache'}; {got}"
    file = f"{WEIGHTS_FILENAME} from {url}" if inception else url
    return (f"no {what} weights ({where}): pass the file with {words['weights']} or set {env}=FILE ({file}), or "
            f"score without {'Inception' if inception else 'weights'}: {words['pixels']}")

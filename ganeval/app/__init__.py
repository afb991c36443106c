"""The app: the entry points and the way from a command to the work (configs are read only here).

- `main`: the `ganeval` command (Hydra app): compose the config, run the chosen experiment.
- `score`: the `ganeval-score` command (parse, run; `score_print`: what it prints); `scoring`: the work behind it
  (`score_inputs`: inputs and reference files, `score_request`: the request and its checks, `score_protocol`:
  named protocols, `score_samples`: sample grids).
- `pipeline`: config -> context -> data, features, generators -> protocol -> results.
- `resolvers`: the `${ganeval.*}` interpolations of the root config; `help`: the generated `--help` parts.
- `validate`: `dry_run=true`, the config checked without any work.

The paper's experiments live in `ganeval.studies`.
"""

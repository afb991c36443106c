"""The app: the entry points and the way from a command to the work (configs are read only here).

- `main`: the `ganeval` command (Hydra app): compose the config, run the chosen experiment.
- `score`: the `ganeval-score` command; `score_sets` the work behind it.
- `pipeline`: config -> context -> data, features, generators -> protocol -> results.
- `resolvers`: the `${ganeval.*}` interpolations of the root config; `help`: the generated `--help` parts.
- `validate`: `dry_run=true`, the config checked without any work.

The paper's experiments live in `ganeval.studies`.
"""

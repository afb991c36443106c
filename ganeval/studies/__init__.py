"""The paper's studies (experiments), one module per kind of experiment, each with `run(plan) -> summary`.

An experiment config selects its module with the `run_experiment` node, e.g.
`run_experiment: {_target_: ganeval.studies.gan_table.run, _partial_: true}`; `ganeval`
instantiates it and calls it with the run's plan (`ganeval.app.plan.Plan`).

- gan_table: real data vs generators (trained here or given) -> the paper's GAN table (quickstart,
  paper_table, benchmark); paper_table: our table beside the paper's Table 1 (paper_numbers) and the verdicts.
- blur_sweep: a dataset blurred at several σ against itself, normalised by an unlike reference pair.
- torus: two vanilla GANs on a 3-D torus, the fraction of samples in the hole, and the metrics.
- heat_traces: normalised heat-trace curves of several datasets with bands over runs.
- nn_internals, wordvec_dims, language_manifolds: IMD between representations that share no coordinates (CNN layers
  and training, word vectors of several dimensions, languages' word vectors); manifold_pairs: their pairwise IMD.
- er_normalisation, scalability: the Erdős–Rényi constant c = 2 and the cost statements (made by scripts/).
"""

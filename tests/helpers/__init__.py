"""What the tests share (no test module imports another): fixture paths, builders, drivers.

* `paths` -- the repository root and the fixture folders; `reader`, `reader_reference` -- reading an
  event file whole, a reference decoder, damage proofs; `health` -- synthetic runs written with
  tensorboardX and judged, step-by-step replays; `synthetic` -- noisy series and segments;
* `ui` -- apps preloaded with fixture runs, screen text; `live` -- waiting for a state, tail processes;
* `snapshot` -- running the CLI in-process; `watcher`, `tail`, `tree` -- a watcher under test, a tail
  process, the state of a tree (to prove nothing was written);
* `wandb_files`, `wandb_live`, `verl`, `mlflow` -- W&B run files and the offline SDK, a veRL live
  driver, a real MLflow server and writer;
* `deny_as_user`, `other_user` -- permission denial as a normal user sees it, a second user.
"""

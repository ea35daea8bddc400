"""The ``tfevents`` source kind: TensorBoard event files, as transformers, TRL, veRL and OpenRLHF write them.

* `kind` -- the kind's registration: which files it claims and which run they belong to.
* ``tfrecord/`` -- the TFRecord/Event reader (the plain reader, and its vectorised tier behind one
  switch in ``tfrecord/fast/``) and a writer for tests, benchmarks and the demo.
"""

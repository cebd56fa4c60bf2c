"""The ``brief`` commands, a module per group, registered on the app by ``flows/cli.py``.

``options`` holds what every command shares (``--config``, dates and times, the person);
``errors`` tells a usage error's command and a withheld brief's exit code;
``log`` reads the event log (events, replay, trace, stats, compact, export …);
``runs`` runs days and checks them (run, backfill, collect, serve, check, alerts, reparse), and
``stopped`` says where an interrupted run stopped;
``policy`` is the improvement loop (evaluate, learn, policy …, regress …, purge).

A command parses what was typed, calls a service of ``ops/`` (or a flow), and prints through
``flows/views``. The services are imported inside each command: they load polars, pyarrow and
the models, which ``brief --help`` and a mistyped option do not need.
"""

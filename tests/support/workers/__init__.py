"""Programs the tests run in processes of their own, each a module run with
`python -m support.workers.<name>` (PYTHONPATH holding tests/, as `support.start_gate.worker_env`
gives) or by path:

- `racing_writer`: the writer of the concurrency tests on every catalog (support.racing_writers).
- `append_writer`: the appending writers of the concurrent-commit tests (commit/).
- `filter_writer`: an append or an overwrite by filter, for the conflict-filter tests (commit/).
- `merge_racer`, `row_level_racer`: a MERGE, append or delete, and row-level deletes, overwrites
  and upserts racing in processes (commit/).
- `gate_worker`: the start gate's self-test worker (commit/test_start_gate.py).
- `zombie_driver`: the zombie drivers and the plain appender of the streaming commit race.
- `file_producer`, `sink_driver`: the Parquet source and the streaming driver of the sink
  kill test (streaming/).
- `table_producer`, `source_sink_driver`: the appended source table and the streaming driver of
  the PySpark 4 kill test (spark4/); `stream_commit_site`: that driver's sitecustomize (copied,
  not imported).
- `fault_writer`, `denied_writer`: the writes of the fault tests, killed or refused.
- `fault_points_site`: the kill tests' sitecustomize (copied, not imported).
- `compaction_race`: a writer or a compactor racing it (maintenance).
- `upserter`: upserts racing equality-delete conversions (maintenance).
- `expire_writer`, `expirer`: a writer and snapshot expiry racing it (maintenance).
- `model_appender`: the stateful model test's second process (table/).
- `progress_script`: the maintenance work whose progress bars the CLI test reads (cli/).
- `cluster_driver`: the driver of the standalone Spark cluster test.
- `connect_client`: the Spark Connect client (PySpark 4).

The one program kept outside: the installed-wheel smoke script of packaging/test_wheel.py, which
must run from outside the checkout (so that it imports the installed wheel, not python/).
"""

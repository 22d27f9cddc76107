"""Programs the tests run in processes of their own, each a module run with
`python -m support.workers.<name>` (PYTHONPATH holding tests/, as `support.start_gate.worker_env`
gives) or by path:

- `racing_writer`: the writer of the concurrency tests on every catalog (support.racing_writers).
- `fault_writer`, `denied_writer`: the writes of the fault tests, killed or refused.
- `fault_points_site`: the kill tests' sitecustomize (copied, not imported).
- `compaction_race`: a writer or a compactor racing it (maintenance).
- `cluster_driver`: the driver of the standalone Spark cluster test.
- `connect_client`: the Spark Connect client (PySpark 4).
"""

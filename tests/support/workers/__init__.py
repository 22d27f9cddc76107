"""Worker programs the tests run in processes of their own, each a module run with
`python -m support.workers.<name>` (PYTHONPATH holding tests/, as `support.start_gate.worker_env`
gives) or by path: the racing writer of the concurrency tests, the writer of the fault tests and
the Spark Connect client."""

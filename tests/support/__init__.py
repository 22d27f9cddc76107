"""The test suite's support package (tests/ is on sys.path: pyproject's pytest `pythonpath`).

- `oracle`: the oracle session (Apache Iceberg Java in Spark) and canonical row comparison.
- `java_oracle`: the batched Java property oracle (tests/java/PropertyOracle.java).
- `session`: the oracle jar and its side jars, fresh table names, the PySpark major version.
- `java`: the one Java compile helper (`compile_java`, `java_command`, `java_core_helper`).
- `catalogs`: the catalog factory (filesystem, sqlite, postgres, rest).
- `racing_writers`: writer processes racing on one table, and the SIGKILL loop.
- `start_gate`: ready/go files that start racing processes together (no sleeps).
- `kill_harness`, `fault_ops`: the kill and fault tests' process harness and writes.
- `maintenance_helpers`, `evolution_twins`, `row_level_data`, ...: data shared by several tests.
- `servers/`: the real servers the tests start (Postgres, S3 via moto, Iceberg REST, a fault proxy).
- `workers/`: programs run in processes of their own (`python -m support.workers.<name>`).
"""

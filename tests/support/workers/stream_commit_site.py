"""The sitecustomize of the PySpark 4 streaming kill test's driver (tests/spark4/
test_spark4_streaming_kill.py copies it into the driver's PYTHONPATH as sitecustomize.py,
inherited by the Python workers Spark starts; nothing imports it as a module): with
ICEFLOE_KILL_EVENTS set, it wraps the data source's `StreamWriter.commit` so each commit
appends `done <batch> <skipped>` to the events file and then holds `ICEFLOE_KILL_HOLD` seconds
(the window between a batch's commit and Spark's commit log). Production code has no hooks."""

import os
import time

events = os.environ.get("ICEFLOE_KILL_EVENTS")
if events:
    try:
        from icefloe.spark import _source_write
        from icefloe.write.streaming_commit import last_committed_batch
    except Exception:
        _source_write = None
    if _source_write is not None and not getattr(_source_write.StreamWriter, "_harness", False):
        original = _source_write.StreamWriter.commit

        def commit(self, messages, batchId):
            last = last_committed_batch(self.opts.load_table(), self.query_id, self.branch)
            skipped = last is not None and batchId <= last
            original(self, messages, batchId)
            with open(events, "a") as f:
                f.write(f"done {batchId} {skipped}\n")
            time.sleep(float(os.environ.get("ICEFLOE_KILL_HOLD", "0")))

        _source_write.StreamWriter.commit = commit
        _source_write.StreamWriter._harness = True

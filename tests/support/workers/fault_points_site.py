"""The sitecustomize of the kill tests' writers (tests/faults/test_faults_kill.py copies it into
the writer's PYTHONPATH as sitecustomize.py; nothing imports it as a module): with
ICEFLOE_FAULT_POINT set, it wraps icefloe's boundary functions so the process records the
point it reached in ICEFLOE_KILL_EVENTS and SIGKILLs itself there: after writing data files
(`data`), after the manifests (`manifests`, with the manifest list removed) or the manifest
list (`manifest_list`), after the new metadata file (`metadata_file`), or after the catalog's
pointer swap (`pointer`). Production code has no fault points."""

import os
import signal

point = os.environ.get("ICEFLOE_FAULT_POINT")
if point:
    from icefloe import _io, _native
    from icefloe.catalog.filesystem import FilesystemCatalog
    from icefloe.catalog.sql import SqlCatalog

    def die(reached):
        with open(os.environ["ICEFLOE_KILL_EVENTS"], "a") as f:
            f.write(f"reached {reached}\n")
        os.kill(os.getpid(), signal.SIGKILL)

    def hook(owner, name, on_return):
        original = getattr(owner, name)

        def hooked(*args, **kwargs):
            out = original(*args, **kwargs)
            on_return(args, out)
            return out

        setattr(owner, name, hooked)

    def data(args, out):
        if point == "data":
            die("data")

    def produced(args, out):
        if point == "manifests":
            _metadata, written = out
            lists = [p for p in written if p.rsplit("/", 1)[-1].startswith("snap-")]
            assert len(lists) == 1, written
            _native.delete_files(lists)
            die("manifests")
        if point == "manifest_list":
            die("manifest_list")

    def metadata_file(args, out):
        if point == "metadata_file" and str(args[0]).endswith(".metadata.json"):
            die("metadata_file")

    def pointer(args, out):
        if point == "pointer":
            die("pointer")

    for name in ("write_data_files", "delete_rows"):
        hook(_native, name, data)
    for name in ("merge_append", "fast_append", "overwrite_files", "replace_partitions", "row_delta"):
        hook(_native, name, produced)
    hook(_io, "write_new", metadata_file)
    for catalog in (FilesystemCatalog, SqlCatalog):
        hook(catalog, "_commit_table", pointer)

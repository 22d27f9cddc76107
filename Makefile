# icefloe — `make help` lists the targets.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
ICEBERG_VERSION := 1.12.0
ORACLE_DIR := .cache/oracle
ORACLE_JAR := $(ORACLE_DIR)/iceberg-spark-runtime-3.5_2.12-$(ICEBERG_VERSION).jar
# The PySpark 4 pass of `make test`: its own venv (.venv4) sharing the built extension (a .pth to
# python/), Iceberg's runtime for that Spark as its oracle.
SPARK4_VERSION := 4.1.4
VENV4 := .venv4
ORACLE4_JAR := $(ORACLE_DIR)/iceberg-spark-runtime-4.1_2.13-$(ICEBERG_VERSION).jar
# PySpark 4.0's runtime: 1.11.0 is the newest Iceberg release built for Spark 4.0 (tests/packaging/test_wheel.py
# reads icefloe's table with it in its PySpark 4.0 venv). No Iceberg runtime exists for Spark 4.2/4.3.
ICEBERG40_VERSION := 1.11.0
ORACLE40_JAR := $(ORACLE_DIR)/iceberg-spark-runtime-4.0_2.13-$(ICEBERG40_VERSION).jar
# The Spark-facing and interop tests, and the PySpark-4-only ones (tests/spark4/).
# (test_spark4_datasource reads Java's tables of tests/support/java_tables.py through the source.)
SPARK4_TESTS := tests/spark4 tests/spark/test_spark_register.py tests/spark/test_scan_spark.py tests/write/test_migration.py \
	tests/spark/test_row_level_spark.py tests/spark/test_spark_worker.py \
	tests/interop/test_interop_icefloe_writes.py tests/spark/test_spark_uuid.py \
	tests/write/test_write_distribution.py tests/spark/test_spark_timestamps.py \
	tests/spark/test_spark_nested_assign.py tests/spark/test_spark_nested_update.py \
	tests/spark/test_tpch_twins.py tests/spark/test_spark_parquet_path.py tests/spark/test_spark_parquet_s3a.py \
	tests/spark/test_spark_sql_ddl.py tests/spark/test_spark_sql.py tests/spark/test_spark_sql_views.py \
	tests/spark/test_spark_sql_functions.py tests/spark/test_spark_sql_timestamps.py tests/spark/test_spark_session_fs.py \
	tests/soak/test_soak_faults.py
# Next to the runtime, for the object-store and JDBC interop tests: S3FileIO's AWS SDK (the
# newest bundle that resolves), and the JDBC drivers of Java's JdbcCatalog.
ORACLE_EXTRA := org.apache.iceberg:iceberg-aws-bundle:$(ICEBERG_VERSION) org.xerial:sqlite-jdbc:3.54.1.0 \
	org.postgresql:postgresql:42.7.14
ORACLE_EXTRA_STAMP := $(ORACLE_DIR)/.extra-jars-$(ICEBERG_VERSION)
# Hadoop's S3A connector for each PySpark line's Hadoop (3.3.4 in PySpark 3.5, 3.4.2 in 4.1): hadoop-aws
# and the AWS SDK bundle that Hadoop release was built with (hadoop-project's aws-java-sdk versions),
# for tests/spark/test_spark_parquet_s3a.py, where Spark's own Parquet source reads S3. One folder
# per Hadoop version, kept out of the suite's session (which has no S3A connector on purpose).
S3A_HADOOP_VERSIONS := 3.3.4 3.4.2
S3A_JARS_3.3.4 := org.apache.hadoop:hadoop-aws:3.3.4 com.amazonaws:aws-java-sdk-bundle:1.12.262
S3A_JARS_3.4.2 := org.apache.hadoop:hadoop-aws:3.4.2 software.amazon.awssdk:bundle:2.29.52 \
	software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3:1.2.1
S3A_STAMPS := $(foreach v,$(S3A_HADOOP_VERSIONS),$(ORACLE_DIR)/s3a-hadoop-$(v)/.fetched)
# Apache Iceberg's RESTCatalogServer and its dependencies (tests/java/rest-server/pom.xml).
REST_CLASSPATH := $(ORACLE_DIR)/rest-server.classpath
PYTEST_ARGS ?=
# DuckDB and its TPC-H extension (the data and queries of tests/spark/test_tpch_twins.py), its
# Iceberg extension and the Avro one it needs (a second reader: tests/interop/test_other_readers.py):
# an extension loads only into the DuckDB release it was built for, so all are pinned together.
DUCKDB := "duckdb==1.5.5" "duckdb-extension-tpch==1.5.5" "duckdb-extension-iceberg==1.5.5" "duckdb-extension-avro==1.5.5"

# pip installs skip compiling every module to bytecode up front (half of pip's CPU time for these
# venvs, 39 -> 21 CPU s for .venv4 measured; most of PySpark's modules are never imported):
# Python compiles what is imported, once, on first import.
PIP_INSTALL := -m pip install -q --no-compile --disable-pip-version-check

# The venvs (.venv, .venv4 and their tool sets) are made by uv (Astral's installer, from PyPI,
# in a venv of its own): on a cold cache it spent 29 CPU s where pip spent 53 for .venv4's set
# (2026-12-06, measured side by side), resolves each venv's set in one run, compiles no bytecode
# up front, and links from its cache what a later venv installs again. `--seed` puts pip into
# each venv (the wheel install of `make release` and the benchmarks' extra installs use it).
UV_DIR := .cache/uv-tool
UV := $(UV_DIR)/bin/uv
export UV_PYTHON_DOWNLOADS := never
UV_INSTALL := pip install -q --python
# The same from uv's cache alone when it holds everything (.ci/uv_pip_install says why).
UV_PIP := bash .ci/uv_pip_install $(UV)
$(UV):
	$(PY) -m venv $(UV_DIR)
	$(UV_DIR)/bin/python $(PIP_INSTALL) "uv>=0.9,<1"

# Maven (the oracle's jars, about a dozen short runs): C1 and the serial collector, half its CPU.
export MAVEN_OPTS ?= -XX:TieredStopAtLevel=1 -XX:+UseSerialGC

.PHONY: help venv venv4 test-spark4 bench-datasource bench-worker develop release demo test test-rust test-python servers oracle golden wheel lint fmt bench bench-read bench-read-large bench-write bench-delete bench-dv-delete bench-merge bench-upsert-read bench-s3 bench-s3-write bench-compact bench-expire bench-orphans bench-scale bench-stats bench-zorder bench-bounds fuzz clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 14

$(VENV)/.installed: pyproject.toml Makefile | $(UV)
	$(UV) venv -q --clear --seed --python $(PY) $(VENV)
	$(UV_PIP) $(VPY) "pyspark>=3.5,<4" "pandas>=1.5,<3" "pyarrow>=15" "pytest>=8" "pytest-timeout>=2" \
		"ruff>=0.6" "mypy>=1.10" "maturin>=1.9.4,<2" "pg8000>=1.30" "moto[server]>=5.1,<6" \
		"pyiceberg>=0.9" "hypothesis>=6.100" "import-linter>=2.1" "pytest-xdist>=3.5" \
		"polars>=1.0" $(DUCKDB) "rich>=13" "pyyaml>=6" "sqlalchemy>=2" "sqlglot>=30.0,<31" \
		"pysail==0.7.2" "grpcio>=1.56" "grpcio-status>=1.56" "googleapis-common-protos>=1.56"
	touch $@

venv: $(VENV)/.installed  ## create .venv with the Python dependencies

$(VENV4)/.installed: pyproject.toml Makefile | $(UV)
	$(UV) venv -q --clear --seed --python $(PY) $(VENV4)
	$(UV_PIP) $(VENV4)/bin/python "pyspark[connect]==$(SPARK4_VERSION)" "pandas>=2.2,<3" "pyarrow>=15" \
		"pytest>=8" "pytest-timeout>=2" "moto[server]>=5.1,<6" "pg8000>=1.30" "rich>=13" "pyyaml>=6" \
		"sqlalchemy>=2" "pyiceberg>=0.9" "pytest-xdist>=3.5" "sqlglot>=30.0,<31" $(DUCKDB)
	echo "$(CURDIR)/python" > "$$($(VENV4)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/icefloe.pth"
	touch $@

venv4: $(VENV4)/.installed  ## create .venv4: PySpark 4 and the test dependencies, icefloe from python/

# One jar from Maven Central into a folder ($(1): group:artifact:version, $(2): the folder).
# Maven copies it out of its local repository (.cache/m2); the copy is then made a hard link of
# the repository's file, so each jar is on disk once: 1.1 GiB less for a fresh clone (the two AWS
# SDK bundles are 0.9 GiB of it). CI stop 58 was refused with 9 GiB free (.ci/run's check).
define mvn_fetch
mvn -q dependency:copy -Dartifact=$(1) -DoutputDirectory=$(2) -Dmaven.repo.local=$(CURDIR)/.cache/m2 && \
	IFS=: read -r g n v <<< "$(1)" && ln -f "$(CURDIR)/.cache/m2/$${g//.//}/$$n/$$v/$$n-$$v.jar" "$(2)/$$n-$$v.jar"
endef

$(ORACLE_JAR):
	mkdir -p $(ORACLE_DIR)
	$(call mvn_fetch,org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:$(ICEBERG_VERSION),$(ORACLE_DIR))

$(ORACLE_EXTRA_STAMP):
	mkdir -p $(ORACLE_DIR)
	for a in $(ORACLE_EXTRA); do \
		$(call mvn_fetch,$$a,$(ORACLE_DIR)) || exit 1; \
	done
	touch $@

$(REST_CLASSPATH): tests/java/rest-server/pom.xml
	mkdir -p $(ORACLE_DIR)
	mvn -q -f tests/java/rest-server/pom.xml dependency:build-classpath \
		-Dmdep.outputFile=$(CURDIR)/$(REST_CLASSPATH) -Dmaven.repo.local=$(CURDIR)/.cache/m2

$(ORACLE4_JAR):
	mkdir -p $(ORACLE_DIR)
	$(call mvn_fetch,org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:$(ICEBERG_VERSION),$(ORACLE_DIR))

$(ORACLE40_JAR):
	mkdir -p $(ORACLE_DIR)
	$(call mvn_fetch,org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:$(ICEBERG40_VERSION),$(ORACLE_DIR))

$(ORACLE_DIR)/s3a-hadoop-%/.fetched:
	mkdir -p $(@D)
	for a in $(S3A_JARS_$*); do \
		$(call mvn_fetch,$$a,$(@D)) || exit 1; \
	done
	touch $@

oracle: $(ORACLE_JAR) $(ORACLE4_JAR) $(ORACLE40_JAR) $(ORACLE_EXTRA_STAMP) $(REST_CLASSPATH) $(S3A_STAMPS)  ## fetch Apache Iceberg Java (the test oracle), its S3/JDBC jars and Hadoop's S3A connectors from Maven Central

develop: venv  ## build the extension (debug) into .venv
	$(VENV)/bin/maturin develop -q --uv 2>/dev/null || $(VENV)/bin/maturin develop -q

# The release build is the manylinux wheel of `make dist` for this machine (zig as linker,
# glibc $(MANYLINUX)'s symbols), installed editable into .venv as `maturin develop` would
# (.ci/install_editable.py); the wheel test (tests/packaging/test_wheel.py) installs the same
# file into fresh venvs, so `make test` builds the crate in release once, not twice.
MANYLINUX ?= manylinux_2_28
HOST_TARGET := $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p')
RELEASE_WHEEL_DIR := target/wheel-release
DIST_TOOLS := $(VENV)/.dist-tools
$(DIST_TOOLS): $(VENV)/.installed
	$(UV) $(UV_INSTALL) $(VPY) "ziglang>=0.13" "auditwheel>=6" "twine>=5"
	touch $@

release: venv $(DIST_TOOLS)  ## build the extension (release) into .venv: the manylinux wheel, installed editable
	rm -rf $(RELEASE_WHEEL_DIR)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/maturin build --release -q --zig --target $(HOST_TARGET) \
		--compatibility $(MANYLINUX) -o $(RELEASE_WHEEL_DIR)
	$(VPY) .ci/install_editable.py $(RELEASE_WHEEL_DIR)/icefloe-*.whl python

demo: release  ## build in release mode and run the example pipeline on local Spark
	$(VPY) examples/pipeline.py

# Without incremental compilation: a clean build (CI's) only pays for writing its caches.
test-rust:  ## cargo test (no Python needed)
	env -u MAKEFLAGS -u MFLAGS CARGO_INCREMENTAL=0 cargo test -q

servers:  ## the real servers the tests start: Postgres from Debian (as root, when missing)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null)

# pytest-xdist workers of each pass (whole files per worker: a file's module fixtures, such as
# Java's twin tables, are made once); each worker has its own Spark session and servers.
# Three workers in all for the two cores: two Spark drivers fewer than 3 + 2 (each with its
# own JIT warm-up, REST server, S3 server and Java tables), and less contention; the passes
# took 28:06 against 29:54 (2026-12-06, tests/README.md).
PYTEST_WORKERS ?= 2
PYTEST4_WORKERS ?= 1
# The soak's histories run alone (make soak): one worker per core and one more.
SOAK_WORKERS ?= 3
# Inside `make test` the shared prerequisites are already made (TEST_PREREQS_DONE).
TEST_PREREQS = $(if $(TEST_PREREQS_DONE),,release oracle servers)
# In `make test` (SPLIT_CASES=1) the PySpark 3.5 pass leaves to the PySpark 4 pass the cases
# that pass runs of the files both run (ICEFLOE_SPARK4_FILES; tests/conftest.py): each case
# runs on one line, each test on both. `make test-python` alone runs every case.
SPLIT_CASES ?=
test-python: $(TEST_PREREQS)  ## the pytest suite, Spark and interop included
	$(if $(SPLIT_CASES),ICEFLOE_SPARK4_FILES="$(SPARK4_TESTS)") ICEFLOE_TEST_WHEEL=$(wildcard $(CURDIR)/$(RELEASE_WHEEL_DIR)/icefloe-*.whl) $(if $(wildcard $(UV)),ICEFLOE_TEST_UV=$(CURDIR)/$(UV)) \
		ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=15 $(PYTEST_ARGS)

test-spark4: $(TEST_PREREQS) venv4  ## the Spark-facing and interop tests, and the data source, on PySpark 4
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE4_JAR) TZ=UTC $(VENV4)/bin/python -m pytest -q -n $(PYTEST4_WORKERS) --dist loadfile --durations=15 \
		$(SPARK4_TESTS) $(PYTEST_ARGS)

# The PySpark 4 pass with every case: both write modes of every copy-on-write / merge-on-read
# twin and every parametrized case of the files both passes run (make test runs one mode per
# twin and about half of the other cases on PySpark 4, all of them on 3.5: tests/conftest.py).
.PHONY: test-spark4-modes
test-spark4-modes:  ## the PySpark 4 pass with every case (make test runs one mode per twin and ~half the other cases there)
	$(MAKE) --no-print-directory test-spark4 ICEFLOE_SPARK4_ALL_MODES=1

# The prerequisites in two lanes side by side, each in order: what compiles (.venv, the release
# build, the docs) and what downloads (the oracle jars through one Maven, Postgres, .venv4).
.PHONY: test-prereqs-build test-prereqs-fetch
test-prereqs-build:
	$(MAKE) --no-print-directory -j1 release $(DIST_TOOLS) test-docs
test-prereqs-fetch:
	$(MAKE) --no-print-directory -j1 oracle servers venv4

# `make test` runs cargo test beside the making of the shared prerequisites (it needs none of
# them, and fills the cores while the downloads and the release build's serial steps leave them
# idle), then the two PySpark passes side by side (their lines interleave; each pytest ends with
# its summary and slowest tests). Where the time goes and what each layout measured:
# tests/README.md.
TEST_JOBS ?= 2
test:  ## everything CI runs: cargo test and the PySpark 3.5 and 4 passes, side by side
	$(MAKE) --no-print-directory $(UV)
	$(MAKE) --no-print-directory -j3 test-prereqs-build test-prereqs-fetch test-rust
	$(MAKE) --no-print-directory -j$(TEST_JOBS) TEST_PREREQS_DONE=1 SPLIT_CASES=1 test-python test-spark4

# Every case on both lines: the PySpark 3.5 pass whole, then the PySpark 4 pass with every case
# (`make test` runs each case of the files both passes run on one line only). Not in make test.
.PHONY: test-all-cases
test-all-cases: release oracle servers venv4  ## every case on both PySpark lines (make test splits the shared files' cases between them)
	$(MAKE) --no-print-directory TEST_PREREQS_DONE=1 test-python
	$(MAKE) --no-print-directory TEST_PREREQS_DONE=1 test-spark4-modes

# The long soak loops, not in make test (which runs 2 kills on each line: one at a random time, one between a commit and Spark's commit log): the streaming sinks
# killed and restarted 20 times, on PySpark 3.5 (foreachBatch) and 4 (format("icefloe")).
SOAK_KILL_RUNS ?= 20
.PHONY: soak
# The differential soak (tests/soak): SOAK_SEEDS random histories of SOAK_STEPS steps, drawn from
# SOAK_BASE_SEED (printed; a failure names its seed: rerun with ICEFLOE_SOAK_SEEDS==<seed>).
# PyIceberg, DuckDB and Sail read the icefloe twin and the shared table after every step
# (make test's slice: after the last).
SOAK_SEEDS ?= 12
# A failing history is shrunk (at most this many reruns) and saved under soak-failures/; rerun
# one with `make soak-history HISTORY=soak-failures/<file>.json`.
SOAK_SHRINK_RUNS ?= 60
SOAK_STEPS ?= 50
ifeq ($(origin SOAK_BASE_SEED), undefined)
SOAK_BASE_SEED := $(shell date +%s)
endif
soak: release oracle servers venv4  ## the differential soak (SOAK_SEEDS histories of SOAK_STEPS steps, icefloe vs Iceberg Java), then the streaming sinks killed and restarted SOAK_KILL_RUNS (20) times, PySpark 3.5 and 4 (not in make test)
	@echo "differential soak: $(SOAK_SEEDS) histories of $(SOAK_STEPS) steps from base seed $(SOAK_BASE_SEED)"
	ICEFLOE_SOAK_SEEDS=$(SOAK_SEEDS) ICEFLOE_SOAK_STEPS=$(SOAK_STEPS) ICEFLOE_SOAK_BASE_SEED=$(SOAK_BASE_SEED) \
		ICEFLOE_SOAK_SHRINK=$(SOAK_SHRINK_RUNS) ICEFLOE_SOAK_OUT=$(CURDIR)/soak-failures ICEFLOE_SOAK_READERS=each \
		ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) -m pytest -q -n $(SOAK_WORKERS) tests/soak
	ICEFLOE_KILL_RUNS=$(SOAK_KILL_RUNS) ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC \
		$(VPY) -m pytest -q tests/streaming/test_streaming_sink_kill.py
	ICEFLOE_KILL_RUNS=$(SOAK_KILL_RUNS) ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE4_JAR) TZ=UTC \
		$(VENV4)/bin/python -m pytest -q tests/spark4/test_spark4_streaming_kill.py

.PHONY: soak-history
soak-history: release oracle servers  ## rerun a saved soak history (HISTORY=<file>.json, as make soak saves a shrunk failure)
	ICEFLOE_SOAK_HISTORY=$(HISTORY) ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) -m pytest -q -s \
		tests/soak/test_differential_soak.py

.PHONY: test-fast
test-fast: release oracle servers  ## the quick inner loop: the pytest suite without the tests marked slow (PySpark 3.5)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) -m pytest -q -m "not slow" $(PYTEST_ARGS)

golden: venv oracle  ## regenerate tests/data/golden with Iceberg Java (new ids: only on purpose)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) tests/data/generate_golden.py

wheel: venv  ## build an abi3 wheel into dist/
	$(VENV)/bin/maturin build --release -o dist

# Release artifacts: manylinux abi3 wheels for each target (zig from PyPI's `ziglang` is the C
# compiler and linker, against glibc $(MANYLINUX)'s symbols, which also builds the C in zstd-sys,
# aws-lc-sys and mimalloc for aarch64) and an sdist. Each target builds in target/<triple>/, so
# it does not disturb the `make release` build.
.PHONY: dist docs test-docs
DIST_TARGETS ?= x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu

dist-wheel-%: $(DIST_TOOLS)  ## one manylinux wheel into dist/, e.g. make dist-wheel-x86_64-unknown-linux-gnu
	rustup target list --installed | grep -qx '$*' || rustup target add '$*'
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/maturin build --release --zig --target '$*' \
		--compatibility $(MANYLINUX) -o dist

dist: $(DIST_TOOLS)  ## manylinux abi3 wheels (x86_64, aarch64) + sdist into dist/, checked by auditwheel and twine
	rm -rf dist
	for t in $(DIST_TARGETS); do $(MAKE) --no-print-directory dist-wheel-$$t || exit 1; done
	$(VENV)/bin/maturin sdist -o dist
	for w in dist/*.whl; do $(VENV)/bin/auditwheel show "$$w" || exit 1; done
	$(VENV)/bin/twine check --strict dist/*
	ls -l dist

# User documentation (docs/, mkdocs.yml): mkdocs with the Material theme, the API reference
# generated from the docstrings by mkdocstrings. --strict turns every warning (a broken link, a
# missing page, a docstring reference that does not resolve) into a failure.
DOCS_TOOLS := $(VENV)/.docs-tools
$(DOCS_TOOLS): $(VENV)/.installed
	$(UV) $(UV_INSTALL) $(VPY) "mkdocs>=1.6,<2" "mkdocs-material>=9.5,<10" "mkdocstrings[python]>=0.26"
	touch $@

docs: $(DOCS_TOOLS)  ## build the user documentation into site/ (mkdocs --strict)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict -q -d site

# In make test: the docs build first (a broken build fails CI; pytest's summary stays the last
# line), and the wheel test (tests/packaging/test_wheel.py) needs zig, auditwheel and twine.
test-docs: docs
test-python: $(DIST_TOOLS) $(if $(TEST_PREREQS_DONE),,test-docs)

lint: release  ## rustfmt, clippy, ruff, mypy, the import layers (pyproject's importlinter), no circles between Rust files, stubtest of the native module
	cargo fmt --check
	cargo clippy --all-targets -q -- -D warnings
	PYO3_PYTHON=$(CURDIR)/$(VPY) cargo clippy --all-targets --features python -q -- -D warnings
	$(VENV)/bin/ruff check python tests benches examples .ci
	$(VENV)/bin/ruff format --check python tests benches examples .ci
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	$(VPY) .ci/check_layers.py
	$(VPY) .ci/check_rust_cycles.py
	$(VPY) -m mypy.stubtest icefloe._native --ignore-missing-stub --mypy-config-file pyproject.toml

fmt:  ## format Rust and Python
	cargo fmt
	$(VENV)/bin/ruff format python tests benches examples

# Fuzzing (nightly, not in make test): every target until FUZZ_RUNS executions or
# FUZZ_SECONDS, whichever comes first, with libFuzzer's resource limits. Findings land in
# fuzz/artifacts/<target>/; copy each into fuzz/regressions/<target>/ once fixed (cargo test
# replays both folders on stable). FUZZ_TARGETS picks a subset.
FUZZ_TARGETS ?= table_metadata manifest manifest_list single_value filter scan_task puffin parquet_read delete_file
FUZZ_RUNS ?= 10000000
FUZZ_SECONDS ?= 1800
# Targets that once reached an abort in a dependency (fuzz/upstream/README.md) run in
# libFuzzer's fork mode, which saves every crash to fuzz/artifacts/<target>/ and goes on:
# compare each with fuzz/upstream and fuzz/regressions before calling it known.
FUZZ_FORK_TARGETS ?= parquet_read
fuzz:  ## cargo fuzz every decoder target (FUZZ_RUNS / FUZZ_SECONDS per target; not in make test)
	@cargo +nightly fuzz --version >/dev/null 2>&1 || cargo +nightly install cargo-fuzz
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/work/$$t && \
		echo "== $$t" && \
		fork="" && case " $(FUZZ_FORK_TARGETS) " in *" $$t "*) fork="-fork=1 -ignore_crashes=1";; esac && \
		(cd fuzz && cargo +nightly fuzz run -O $$t work/$$t corpus/$$t -- $$fork \
			-runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_SECONDS) -timeout=1 \
			-rss_limit_mb=512 -malloc_limit_mb=512 -print_final_stats=1) || exit 1; \
	done

bench:  ## criterion benches for the hot paths
	cargo bench

bench-bounds:  ## reader resource bounds at full scale: 100M equality-delete keys, 1M columns, a 10 GB manifest (not in make test)
	cargo bench --bench resource_bounds --no-run
	cargo bench --bench resource_bounds -- eq100m
	ICEFLOE_EQUALITY_DELETE_MEMORY_MB=8192 cargo bench --bench resource_bounds -- eq100m
	cargo bench --bench resource_bounds -- wide1m
	cargo bench --bench resource_bounds -- manifest10g

bench-metrics-eval:  ## criterion: InclusiveMetricsEvaluator over 100,000 DataFiles (not in make test)
	cargo bench --bench metrics_eval

bench-planning: release oracle  ## scan planning, 100,000 files: icefloe vs Iceberg Java planFiles vs PyIceberg (not in make test; ARGS="--files 1000000 --no-pyiceberg")
	$(VPY) $(PIP_INSTALL) "pyiceberg>=0.9"
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/planning_bench.py $(ARGS)

bench-scale: release oracle  ## issue 44 at scale: a 1,000,000-file and a 10,000-snapshot table, time and peak memory vs Iceberg Java, each run a fresh process (not in make test; ARGS="plan files")
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/scale_bench.py $(ARGS)

bench-read: release oracle  ## merge-on-read read benchmark vs Iceberg Java on Spark, PyIceberg, pyarrow (not in make test)
	$(VPY) $(PIP_INSTALL) "pyiceberg>=0.9"
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/read_bench.py

bench-read-large: release oracle  ## merge-on-read read, 20M rows + 5M eq-delete keys: peak RSS vs the 4 GB bar (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/read_bench_large.py $(ARGS)

bench-write: release oracle  ## partitioned write (day(ts), bucket(16, id)), 5M rows: icefloe.spark.append vs Iceberg Java (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/write_bench.py

bench-delete: release oracle  ## merge-on-read DELETE of 1% scattered rows: icefloe.spark.delete vs Java DELETE FROM (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/row_level_bench.py delete

bench-dv-delete: release oracle  ## format v3: five 1% DELETEs (deletion vectors) on 10M rows, icefloe.spark.delete vs Java (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/row_level_bench.py dv-delete

bench-merge: release oracle  ## MERGE 1M into 10M rows, bucket(16, id), both modes: icefloe.spark.merge vs Java MERGE INTO (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/row_level_bench.py merge

bench-upsert-read: release oracle  ## Spark read after 100 equality-delete upserts of 10,000 keys: icefloe vs Java (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/row_level_bench.py upsert-read

bench-s3: release oracle  ## bench-read's table on the S3 server (moto): icefloe vs Java S3FileIO on Spark, S3 vs local disk in process, GETs and bytes per query (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/s3_bench.py read $(ARGS)

bench-s3-write: release oracle  ## bench-write's 5M rows into a table on the S3 server: icefloe.spark.append vs Java S3FileIO, requests and bytes (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/s3_bench.py write $(ARGS)

bench-compact: release oracle  ## compaction: 2,000 small files, 10M rows, 20 partitions, 5% position-deleted: rewrite_data_files on Spark vs Java's procedure (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/compaction_bench.py
bench-zorder: release oracle  ## z-order rewrite (zorder(id, amount)) of 400 files / 10M rows on Spark vs Java's procedure (not in make test)
	BENCH_STRATEGY=zorder BENCH_FILES=400 BENCH_PARTITIONS=1 ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC \
		$(VPY) benches/compaction_bench.py
bench-tpch: release oracle venv4  ## the 22 TPC-H queries at SF1 on twin tables: icefloe.spark.read temp views vs Iceberg Java, PySpark 3.5 then 4.1 (not in make test; ARGS="--sf 0.1 --rust-only")
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/tpch_bench.py $(ARGS)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE4_JAR) TZ=UTC $(VENV4)/bin/python benches/tpch_bench.py $(ARGS)

.PHONY: bench-connect-s3
bench-connect-s3: release oracle venv4  ## PySpark 4 over Spark Connect: Spark's S3A reader vs the Rust reader by file size on the S3 server (the minimum mean file size's crossover; not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE4_JAR) TZ=UTC $(VENV4)/bin/python benches/connect_s3_bench.py

bench-datasource: release oracle venv4  ## PySpark 4: format("icefloe") vs Java vs icefloe.spark.read on bench-read's 5M-row MoR table (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE4_JAR) TZ=UTC $(VENV4)/bin/python benches/datasource_bench.py

bench-worker: release oracle venv4  ## the worker fixes of icefloe/spark/_worker.py, each switched off, on PySpark 3.5 and 4.x (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/worker_fixes_bench.py
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE4_JAR) TZ=UTC $(VENV4)/bin/python benches/worker_fixes_bench.py

bench-streaming4: release oracle venv4  ## PySpark 4: bench-streaming plus the writeStream.format("icefloe") sink (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE4_JAR) TZ=UTC $(VENV4)/bin/python benches/streaming_bench.py

bench-expire: release oracle  ## expire_snapshots removing 1,000 of 1,010 snapshots with their files: icefloe vs Java's procedure (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/maintenance_bench.py expire $(ARGS)

bench-orphans: release oracle  ## remove_orphan_files over 100,000 files: icefloe vs Java's procedure (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/maintenance_bench.py orphans $(ARGS)

bench-stats: release oracle  ## compute_table_stats of 10M rows x 4 columns on Spark: icefloe vs Java's procedure (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/maintenance_bench.py stats $(ARGS)

.PHONY: bench-streaming
bench-streaming: release oracle  ## streaming sink, 200 micro-batches of 10,000 rows: icefloe foreachBatch(batch_writer) vs Java writeStream.format("iceberg") (not in make test)
	ICEFLOE_ORACLE_JAR=$(CURDIR)/$(ORACLE_JAR) TZ=UTC $(VPY) benches/streaming_bench.py

clean:
	rm -rf target dist $(VENV) $(VENV4) .cache warehouse

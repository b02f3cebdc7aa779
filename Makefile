# Strata's developer entry points. `make test` is what CI runs; `make bench`
# reproduces the benchmark tables. Both need nothing but Go.

# Recipes pipe go test into grep; pipefail makes a pipeline fail when go
# test does, not only when grep does. (/bin/sh may be dash, which lacks it.)
SHELL       := bash
.SHELLFLAGS := -o pipefail -c

GO        ?= go
# How long each fuzz target runs under `make fuzz`.
FUZZTIME  ?= 30s
# How long `make fuzz` minimises each new input. Go's default, 60 s, leaves
# a target running nothing else meanwhile: FuzzDB, whose inputs are whole
# sessions, spent most of a 60 s run at 0 execs/s minimising.
FUZZMINIMIZE ?= 1s
# Passed to every `go test -bench` run; raise it for steadier figures.
BENCHTIME ?= 1s
# Extra flags for the benchmark binary, e.g. BENCHFLAGS='-large' for go-sstables' full sizes.
BENCHFLAGS ?=

# Benchmark groups, run one `go test` invocation each so that every group's
# baseline runs in the same invocation as what it is compared with.
BENCH_GROUPS ?= RecordIOWrite RecordIORead Skiplist Memstore SSTableScanDefault SSTableScanBackward SSTableRandomReadDefault SSTableMemstoreFlush SimpleDB
# Scale table configurations for `make bench` (see benchmark/scale).
SCALE_CONFIG ?= default
# Where `make bench` puts its files: emptied first, removed afterwards, and
# its peak size printed at the end (benchmark/internal/diskpeak).
BENCH_DIR ?= $(or $(TMPDIR),/tmp)/strata-bench
# The modules, each with its own go.mod: the library and the three that keep
# their dependencies out of it.
MODULES := . benchmark/peers benchmark/ycsb raftstore prometheus

# YCSB workloads for `make ycsb` (files in benchmark/ycsb/workloads).
YCSB_WORKLOADS ?= workloada workloadb workloadc workloadd workloade workloadf simpledb
YCSB_DIR ?= /tmp/strata-ycsb

# `make bench-peers`: where the runs go (put it on the disk to measure, not
# a tmpfs), extra flags, and the outputs, relative to benchmark/peers.
PEERS_DIR   ?= /tmp/strata-peers
PEERS_FLAGS ?=
PEERS_OUT   ?= results

.PHONY: test vet race ycsb-test peers-test raftstore-test prometheus-test examples bench bench-groups bench-smoke bench-smoke-run bench-full bench-scale bench-blobgc bench-peers bench-peers-large bench-peers-100m bench-memory bench-peers-smoke bench-raft stress crash fs-matrix fuzz ycsb

# make test vets and tests every module but the peers' (benchmark/peers):
# its five engines take a minute to compile, and make bench-smoke, which
# CI runs after make test, vets and tests it with its benchmarks.
test: VET_MODULES = . benchmark/ycsb raftstore prometheus
test: vet race examples

# The race detector's runtime waits a second at every exit, for reports
# still on their way; the CLI's scripts and the kill tests start hundreds
# of processes.
export GORACE ?= atexit_sleep_ms=0

# Every module's packages (go.work makes the four one workspace). vet
# compiles what it checks: with -race, the compilations the race tests
# then reuse (the peers' tests run without it), and the tests skip go
# test's own vet.
VET_MODULES ?= $(MODULES)
vet:
	@unformatted=$$($$($(GO) env GOROOT)/bin/gofmt -l .); if [ -n "$$unformatted" ]; then echo "not gofmt'd:"; echo "$$unformatted"; exit 1; fi
	@for mod in $(VET_MODULES); do \
		race=-race; [ $$mod = benchmark/peers ] && race=; \
		echo "go vet $$race $$mod"; (cd $$mod && $(GO) vet $$race ./...) || exit 1; \
	done

# One go test for the library and the nested modules but the peers' (the
# workspace names their packages), so that their packages build and run
# side by side on the cores rather than module after module.
NESTED_TESTS := ./benchmark/ycsb/... ./raftstore/... ./prometheus/...
race:
	$(GO) test -race -vet=off -count=1 -timeout 30m ./... $(NESTED_TESTS)

# The YCSB binding is its own module (see ycsb below); test it too.
ycsb-test:
	cd benchmark/ycsb && $(GO) test -race -vet=off -count=1 ./...

# The peer comparison is its own module too. Its smoke test runs every
# engine once at tiny sizes, in about 10 s; without -race, which slows the
# peers' code tenfold and finds nothing of Strata's that race does not.
peers-test:
	cd benchmark/peers && $(GO) vet ./... && $(GO) test -vet=off -count=1 ./...

# raftstore (hashicorp/raft's log store on Strata, the replicated map, the
# raftkv program) is its own module too, so the library carries no raft
# dependency. Its tests run in about a minute on 2 cores: the store's
# contract, in-process clusters, linearizability, and real raftkv
# processes killed (3 cycles; `make stress` runs more).
raftstore-test:
	cd raftstore && $(GO) test -race -vet=off -count=1 -timeout 10m ./...

prometheus-test:
	cd prometheus && $(GO) test -race -vet=off -count=1 -timeout 5m ./...

# Every example, with the race detector (and the race tests' compilations),
# all at once (each in a directory of its own), their outputs then printed
# in turn: run one after another they took 17 s of make test's three
# minutes.
examples:
	@out=$$(mktemp -d); \
	for d in examples/*/; do \
		n=$$(basename $$d); \
		( $(GO) run -race ./$$d > $$out/$$n.out 2>&1; echo $$? > $$out/$$n.rc ) & \
	done; wait; \
	status=0; \
	for d in examples/*/; do \
		n=$$(basename $$d); echo "=== example $$d"; cat $$out/$$n.out; \
		[ "$$(cat $$out/$$n.rc)" = 0 ] || { echo "example $$d failed"; status=1; }; \
	done; \
	rm -rf $$out; exit $$status

# The benchmark tables, then the scale table, with every file under
# BENCH_DIR; prints the time taken and the peak disk use at the end.
bench:
	@$(GO) run ./benchmark/internal/diskpeak -dir $(BENCH_DIR) -- \
		$(MAKE) --no-print-directory bench-groups bench-scale

bench-groups:
	@for g in $(BENCH_GROUPS); do \
		echo "=== benchmark $$g"; \
		$(GO) test -run '^$$' -bench "^Benchmark$$g" -benchmem -benchtime $(BENCHTIME) \
			-timeout 60m ./benchmark/ $(BENCHFLAGS) || exit 1; \
	done

# The peers' module vetted and tested, then every benchmark of every
# module once (-benchtime 1x), and the scale tool at its smallest size: a
# benchmark that fails, or cannot finish, fails here. CI runs it after
# make test (.ci/run): it takes about three minutes, more than make test's
# budget allows.
bench-smoke:
	@$(GO) run ./benchmark/internal/diskpeak -dir $(BENCH_DIR)-smoke -- \
		$(MAKE) --no-print-directory bench-smoke-run

bench-smoke-run: peers-test
	@for mod in $(MODULES); do \
		echo "=== benchmarks of module $$mod, once each"; \
		(cd $$mod && $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./... | grep -v 'no test files') || exit 1; \
	done
	@echo "=== scale tiny"
	@$(GO) run ./benchmark/scale -config tiny

# Everything at go-sstables' full sizes, and the 10 GB scale configuration.
bench-full:
	@$(MAKE) --no-print-directory bench BENCHFLAGS=-large SCALE_CONFIG=all

bench-scale:
	@echo "=== benchmark scale ($(SCALE_CONFIG))"
	@$(GO) run ./benchmark/scale -config $(SCALE_CONFIG)

# The space large values take once overwritten: 1 GB of 4 KiB values,
# written four times in random order, then the background work left to
# settle (issue 40; a few minutes).
bench-blobgc:
	@$(GO) run ./benchmark/blobgc $(BLOBGC_FLAGS)

# What stress and crash keep of go test -v: the RUN, result and summary
# lines; every line a test logged, failures included (indented file:line:
# lines, among them testseed's "replay with -seed=N"); testify's Error and
# Messages details; and panics and timeouts.
TEST_LINES := ^(=== RUN|--- |ok|FAIL|PASS|panic:)|^ +[^ ]+\.go:[0-9]+: |Error|Messages|expected|actual|timed out

# The randomised and crash tests at stress length: model, power loss,
# linearizability, corruption, the damage matrix; then, under the race
# detector, the fault torture test and the races of releases with reads,
# whole (a race report is many lines). Each prints what it checked.
stress:
	$(GO) test -run 'TestModel|TestDataFlows|TestConcurrent|TestPowerLoss|TestLinearizability|TestCorruption|TestDamageMatrix|TestFollowerWhileWriting|TestMergeModelWithSnapshots|TestTxnWideReadSet' \
		-count=1 -timeout 90m -v ./simpledb/ -long | grep -E '$(TEST_LINES)'
	$(GO) test -race -run 'TestFaultTorture|TestFollowerSnapshotReleaseDuringReads|TestReadsDuringReleases|TestMergeFoldsBesideSnapshots' -count=1 -timeout 60m -v ./simpledb/ -long
	$(GO) test -run 'TestModel|TestEveryByteFlipIsDetected|TestMergingIteratorMatchesModel|TestConcurrentReadersDuringFolds' -count=1 -timeout 30m -v ./memstore/ ./sstables/ -long | grep -E '$(TEST_LINES)'
	cd raftstore && $(GO) test -race -run 'TestLinearizability' -count=1 -timeout 30m -v ./kv/ -long | grep -E '$(TEST_LINES)'
	cd raftstore && $(GO) test -run 'TestCluster' -count=5 -timeout 30m -v ./kv/ | grep -E '$(TEST_LINES)'
	cd raftstore && $(GO) test -run '^TestProcessKill$$' -count=1 -timeout 30m -v ./cmd/raftkv/ -kill-cycles 40 | grep -E '$(TEST_LINES)'

# The filesystem matrix: a database on ext4, XFS, btrfs and tmpfs, each a
# small loop-mounted image, through disk-full faults, filesystem shutdowns
# and SIGKILLs (simpledb's TestFilesystemMatrix). Needs root; installs
# xfsprogs and btrfs-progs from Debian's packages if they are missing;
# skips, saying why, where it cannot run.
fs-matrix:
	@if [ "$$(id -u)" != 0 ]; then echo "make fs-matrix: skipped: it needs root, to make and mount filesystems"; exit 0; fi; \
	if [ ! -e /dev/loop-control ]; then echo "make fs-matrix: skipped: no loop devices"; exit 0; fi; \
	for tool in mkfs.xfs:xfsprogs mkfs.btrfs:btrfs-progs; do \
		command -v $${tool%%:*} >/dev/null || (apt-get update -qq && apt-get install -y -qq $${tool##*:}) >/dev/null || \
			echo "make fs-matrix: could not install $${tool##*:}: its filesystem is skipped"; \
	done; \
	$(GO) test -run '^TestFilesystemMatrix$$' -count=1 -timeout 60m -v ./simpledb/ -fs-matrix | grep -E '$(TEST_LINES)'

# Kills a child process writing synced batches 200 times, at random
# moments, and checks each recovery.
crash:
	$(GO) test -run '^(TestProcessKill|TestBankKill)$$' -count=1 -timeout 30m -v ./simpledb/ -kill-cycles 200 | grep -E '$(TEST_LINES)'

# Strata beside Pebble, goleveldb, Badger, bbolt and go-sstables: 1M keys, every
# workload in a fresh process per engine, interleaved, 3 repeats. Prints
# markdown tables (also kept in benchmark/peers/$(PEERS_OUT).md) and writes
# the raw results and a chart beside them. See benchmark/peers/README.md.
bench-peers:
	@cd benchmark/peers && $(GO) run . -dir $(PEERS_DIR) \
		-json $(PEERS_OUT).json -svg $(PEERS_OUT).svg $(PEERS_FLAGS) | tee $(PEERS_OUT).md

# Ten times the data: 10M keys (1.1 GB of keys and values), Strata and
# Pebble, the fills, reads (1M Gets), scan and mixed, 3 repeats, with each
# run's disk writes, database size and write stalls (about 30 minutes).
bench-peers-large:
	@$(MAKE) --no-print-directory bench-peers PEERS_OUT=results-large \
		PEERS_FLAGS='-keys 10000000 -reads 1000000 -engines strata,pebble -configs defaults -workloads fillseq,fillrandom,readrandom,scan,mixed -costs $(PEERS_FLAGS)'

# A hundred times the data: 100M keys (11 GB of keys and values), Strata
# and Pebble, the workloads of bench-peers-large, one repeat, with the same
# costs (some two and a half hours: every read workload fills again; up to
# about 25 GB of disk at a time).
bench-peers-100m:
	@$(MAKE) --no-print-directory bench-peers PEERS_OUT=results-100m \
		PEERS_FLAGS='-keys 100000000 -reads 1000000 -repeats 1 -engines strata,pebble -configs defaults -workloads fillseq,fillrandom,readrandom,scan,mixed -costs $(PEERS_FLAGS)'

# Strata alone with MemoryBudget set to each of MEMORY_BUDGETS (MiB), at 1M
# and 10M keys, one repeat: the peak RSS of each row against its budget
# (about 10 minutes). Tables in benchmark/peers/results-memory-*.md.
MEMORY_BUDGETS ?= 64 256
bench-memory:
	@cd benchmark/peers && for keys in 1000000 10000000; do for mib in $(MEMORY_BUDGETS); do \
		$(GO) run . -dir $(PEERS_DIR) -json results-memory-$$keys-$$mib.json \
			-keys $$keys -reads 1000000 -engines strata -configs budget -cache-mib $$mib -repeats 1 -probes=false \
			-workloads fillrandom,readrandom,scan,mixed,sync32 $(PEERS_FLAGS) > results-memory-$$keys-$$mib.md && \
			cat results-memory-$$keys-$$mib.md || exit 1; \
	done; done

# The same at smoke size, in two to three minutes, its outputs in /tmp.
bench-peers-smoke:
	@$(MAKE) --no-print-directory bench-peers PEERS_OUT=$(PEERS_DIR)-smoke \
		PEERS_FLAGS='-keys 20000 -repeats 1 -duration 1s $(PEERS_FLAGS)'

# Load then run each YCSB workload through go-ycsb's client, synced and
# unsynced, with 1 and 16 threads, printing go-ycsb's result lines. The
# runner is its own module, so the library carries no benchmark
# dependencies.
ycsb:
	@cd benchmark/ycsb && $(GO) build -o $(YCSB_DIR).bin . && \
	for w in $(YCSB_WORKLOADS); do for sync in true false; do for t in 1 16; do \
		for phase in load run; do \
			echo "=== ycsb $$phase $$w sync=$$sync threads=$$t"; \
			$(YCSB_DIR).bin $$phase strata -P workloads/$$w -p threadcount=$$t \
				-p strata.sync=$$sync -p strata.path=$(YCSB_DIR) | grep -E '^[A-Z_]+ +- |finished' || exit 1; \
		done; \
	done; done; done; rm -rf $(YCSB_DIR) $(YCSB_DIR).bin

# raftstore beside raft-wal and raft-boltdb: synced StoreLogs, GetLog,
# DeleteRange and a 3-node cluster's applies, every store in the same
# invocation, RAFT_BENCH_COUNT repeats of the whole set (so that the stores
# take turns, never one store's repeats in a row), summarised into
# raftstore/bench/results.md (medians and ranges) and results.svg. Stores
# go in RAFT_BENCH_DIR (default the system's temporary directory): put it
# on the disk to measure, not a tmpfs.
RAFT_BENCH_COUNT ?= 5
RAFT_BENCH_DIR   ?=
bench-raft:
	cd raftstore/bench && $(GO) test -c -o /tmp/strata-raftbench.test . && rm -f results.txt && \
	for i in $$(seq $(RAFT_BENCH_COUNT)); do \
		echo "=== repeat $$i of $(RAFT_BENCH_COUNT)"; \
		RAFT_BENCH_DIR=$(RAFT_BENCH_DIR) /tmp/strata-raftbench.test -test.run '^$$' -test.bench . -test.benchmem \
			-test.benchtime $(BENCHTIME) -test.timeout 60m | tee -a results.txt || exit 1; \
	done; rm -f /tmp/strata-raftbench.test
	cd raftstore/bench && $(GO) run ./report -svg results.svg < results.txt | tee results.md

fuzz:
	@for mod in . raftstore; do \
		for pkg in $$(cd $$mod && $(GO) list ./...); do \
			for f in $$(cd $$mod && $(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
				echo "=== fuzz $$pkg $$f ($(FUZZTIME))"; \
				(cd $$mod && $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg) || exit 1; \
			done; \
		done; \
	done

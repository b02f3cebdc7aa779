# Strata's developer entry points. `make test` is what CI runs; `make bench`
# reproduces the benchmark tables. Both need nothing but Go.

GO        ?= go
# How long each fuzz target runs under `make fuzz`.
FUZZTIME  ?= 30s
# Passed to every `go test -bench` run; raise it for steadier figures.
BENCHTIME ?= 1s
# Extra flags for the benchmark binary, e.g. BENCHFLAGS='-large' for go-sstables' full sizes.
BENCHFLAGS ?=

# Benchmark groups, run one `go test` invocation each so that every group's
# baseline runs in the same invocation as what it is compared with.
BENCH_GROUPS ?= RecordIOWrite RecordIORead Skiplist Memstore SSTableScanDefault SSTableRandomReadDefault SSTableMemstoreFlush

.PHONY: test vet race examples bench fuzz

test: vet race examples

vet:
	$(GO) vet ./...

race:
	$(GO) test -race -count=1 -timeout 30m ./...

examples:
	@for d in examples/*/; do \
		echo "=== example $$d"; \
		$(GO) run ./$$d || exit 1; \
	done

bench:
	@for g in $(BENCH_GROUPS); do \
		echo "=== benchmark $$g"; \
		$(GO) test -run '^$$' -bench "^Benchmark$$g" -benchmem -benchtime $(BENCHTIME) \
			-timeout 60m ./benchmark/ $(BENCHFLAGS) || exit 1; \
	done

fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "=== fuzz $$pkg $$f ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

module github.com/stratadb/strata/benchmark/ycsb

go 1.26.0

require (
	github.com/magiconair/properties v1.8.0
	github.com/pingcap/go-ycsb v1.0.1
	github.com/stratadb/strata v0.2.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/HdrHistogram/hdrhistogram-go v1.1.2 // indirect
	github.com/golang/snappy v1.0.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/mattn/go-runewidth v0.0.9 // indirect
	github.com/olekukonko/tablewriter v0.0.5 // indirect
	github.com/pingcap/errors v0.11.5-0.20211224045212-9687c2b0f87c // indirect
	go.uber.org/atomic v1.9.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

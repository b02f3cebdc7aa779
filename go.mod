module github.com/stratadb/strata

go 1.26

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/golang/snappy v1.0.0
	github.com/google/btree v1.1.3
	github.com/klauspost/compress v1.20.3
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

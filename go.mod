module github.com/gcjitter/gcjitter

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da
	gopkg.in/yaml.v3 v3.0.1
)

require github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect

require (
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)

tool golang.org/x/perf/cmd/benchstat

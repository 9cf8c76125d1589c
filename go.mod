module github.com/gcjitter/gcjitter

go 1.26

require github.com/google/go-cmp v0.7.0

require (
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)

package results

import (
	"flag"
	"io"
	"testing"
)

func TestMemLimitFlag(t *testing.T) {
	for in, want := range map[string]int64{"16GiB": 16 << 30, "16G": 16 << 30, "512MiB": 512 << 20, "1.5gb": 3 << 29, "4096": 4096, " 2 TiB ": 2 << 40, "64k": 64 << 10} {
		var f MemLimitFlag
		if err := f.Set(in); err != nil || f.Bytes != want {
			t.Errorf("-mem-limit %q = %d, %v; want %d", in, f.Bytes, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "16 parsecs", "-1G", "0", "1e3G", "0.1"} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f MemLimitFlag
		fs.Var(&f, "mem-limit", MemLimitUsage)
		if err := fs.Parse([]string{"-mem-limit", in}); err == nil {
			t.Errorf("-mem-limit %q accepted as %d bytes", in, f.Bytes)
		}
	}
	h := Host{MemLimit: 8 << 30, MemLimitFrom: "MemTotal"}
	var f MemLimitFlag
	if b, from := f.Limit(h); b != 8<<30 || from != "MemTotal" {
		t.Errorf("unset flag: %d from %q, want the host's", b, from)
	}
	f.Set("16GiB")
	if b, from := f.Limit(h); b != 16<<30 || from != "-mem-limit" {
		t.Errorf("set flag: %d from %q, want the flag's", b, from)
	}
}

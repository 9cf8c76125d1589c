package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A /proc and /sys laid out as a host's, in a temporary directory: the
// cgroup files of hosts this machine is not (v2, v1, hybrid, containers).
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestMemLimit(t *testing.T) {
	const total = 24 << 30
	for _, tc := range []struct {
		name     string
		files    map[string]string
		want     int64
		wantFrom string
	}{
		{"v2 limited", map[string]string{"proc/self/cgroup": "0::/job.slice/x", "sys/fs/cgroup/job.slice/x/memory.max": "17179869184"}, 16 << 30, "cgroup v2 memory.max (/sys/fs/cgroup/job.slice/x/memory.max)"},
		{"v2 max", map[string]string{"proc/self/cgroup": "0::/", "sys/fs/cgroup/memory.max": "max"}, total, "MemTotal"},
		{"v2 in a container: the mount's root", map[string]string{"proc/self/cgroup": "0::/../pod", "sys/fs/cgroup/memory.max": "8589934592"}, 8 << 30, "cgroup v2"},
		{"v1 limited", map[string]string{"proc/self/cgroup": "4:memory:/docker/abc\n3:cpu:/", "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "4294967296"}, 4 << 30, "cgroup v1 memory.limit_in_bytes"},
		{"v1 unlimited", map[string]string{"proc/self/cgroup": "4:memory:/x", "sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712"}, total, "MemTotal"},
		{"hybrid: v1 memory, empty v2", map[string]string{"proc/self/cgroup": "4:memory:/p/q\n0::/", "sys/fs/cgroup/memory/memory.limit_in_bytes": "2147483648"}, 2 << 30, "cgroup v1"},
		{"no cgroup", nil, total, "MemTotal"},
	} {
		got, from := MemLimit(fakeRoot(t, tc.files), total)
		if got != tc.want || !strings.HasPrefix(from, tc.wantFrom) {
			t.Errorf("%s: MemLimit = %d from %q, want %d from %q...", tc.name, got, from, tc.want, tc.wantFrom)
		}
	}
	if got, from := MemLimit(t.TempDir(), 0); got != 0 || from != "" {
		t.Errorf("nothing known: %d from %q, want 0 and nothing", got, from)
	}
}

func TestProbeHostRecordsAMemLimit(t *testing.T) {
	h := ProbeHost(t.Context())
	if h.MemLimit <= 0 || h.MemLimit > h.MemTotalKB<<10 || h.MemLimitFrom == "" {
		t.Errorf("host memory limit %d from %q (MemTotal %d KiB): want one, at most MemTotal, with its source", h.MemLimit, h.MemLimitFrom, h.MemTotalKB)
	}
}

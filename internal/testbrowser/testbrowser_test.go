package testbrowser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Chromium's own temporary directories (its singleton socket's, which a
// browser killed at a test's end leaves behind) go to the profile's tmp,
// which the test's end removes, not to /tmp (where 84 had piled up on one
// CI host).
func TestTemporaryFilesStayInTheProfile(t *testing.T) {
	b := New(t)
	page := filepath.Join(t.TempDir(), "p.html")
	if err := os.WriteFile(page, []byte("<p>hello</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	tab := b.Open(t, page, true, 800, 600)
	text, err := Eval[string](tab, `document.body.innerText`)
	if err != nil || !strings.Contains(text, "hello") {
		t.Fatalf("page text %q: %v", text, err)
	}
	left, _ := filepath.Glob(filepath.Join(b.profile, "tmp", "org.chromium.Chromium.*"))
	if len(left) == 0 {
		t.Errorf("no org.chromium.Chromium.* under the profile's tmp: Chromium wrote its temporary files elsewhere (TMPDIR not passed?)")
	}
}

package history

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/internal/testbrowser"
	"github.com/gcjitter/gcjitter/stats"
)

// knownNights is a store of 40 nights of 2 cases x 2 variants on one host
// class, in which case-00/variant-0 got 15% slower from night 25, the
// night torch went 1.13.1 -> 2.4.0 for every case.
func knownNights(t *testing.T) (*Store, []*Series, []Finding) {
	t.Helper()
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "history.db"))
	rng := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 40; i++ {
		n := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, i), cases: 2, variants: 2, runs: 5, level: 1}
		if i >= 25 {
			n.torch = "2.4.0"
		}
		m := n.manifest(rng)
		for _, r := range m.Runs {
			if i >= 25 && r.Case == "case-00" && r.Variant == "variant-0" {
				sum := r.Summary
				sum.P50, sum.P99, sum.MaxPauseNS[2] = sum.P50*1.15, sum.P99*1.15, sum.MaxPauseNS[2]*1.15
			}
		}
		if _, err := s.AddManifest(ctx, m, "synth", AddOptions{Label: "build-" + string(rune('a'+i%26))}); err != nil {
			t.Fatal(err)
		}
	}
	series, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	series = PrimaryOnly(series, stats.DefaultPrimary)
	return s, series, Detect(series, DetectOptions{})
}

func TestDetectNamesTheNightAndTheEnvironment(t *testing.T) {
	_, _, findings := knownNights(t)
	var regs []Finding
	for _, f := range findings {
		if f.Regression {
			regs = append(regs, f)
		}
	}
	if len(regs) == 0 {
		t.Fatal("no regression found")
	}
	for _, f := range regs {
		if f.Key.Case != "case-00" || f.Key.Variant != "variant-0" {
			t.Errorf("regression in %v, which did not change", f.Key)
			continue
		}
		if f.Index < 23 || f.Index > 27 || f.Lo > 0.15 || f.Hi < 0.15 {
			t.Errorf("%v: shift at night %d, %+.1f%% [%+.1f%%, %+.1f%%]; want night 25, +15%% inside", f.Key, f.Index, 100*f.Size, 100*f.Lo, 100*f.Hi)
		}
		if f.Index == 25 && (len(f.EnvChanges) != 1 || f.EnvChanges[0] != "torch 1.13.1 -> 2.4.0") {
			t.Errorf("%v: environment changes %q, want torch 1.13.1 -> 2.4.0", f.Key, f.EnvChanges)
		}
	}
}

// TestDashboardInChromium renders the trend page in headless Chromium and
// looks at the pixels: the nights' points (blue) and the regression's
// change-point line (red) must be drawn. GCJITTER_SCREENSHOT=path keeps
// the screenshot.
func TestDashboardInChromium(t *testing.T) {
	browser := testbrowser.New(t)
	s, series, findings := knownNights(t)
	dir := t.TempDir()
	paths, err := WriteDashboards(dir, s.String(), series, findings, nil)
	if err != nil || len(paths) != 1 {
		t.Fatalf("pages %v: %v", paths, err)
	}
	page, _ := os.ReadFile(paths[0])
	if bytes.Contains(page, []byte(`src="http`)) || bytes.Contains(page, []byte(`href="http`)) || bytes.Contains(page, []byte("<script")) {
		t.Error("the page loads something or runs a script")
	}
	// gc-cost needs a heap census, which these nights did not run: no
	// chart of it.
	if got, want := bytes.Count(page, []byte(`role="img"`)), 2*2*(len(stats.DefaultPrimary)-1); got != want {
		t.Errorf("%d trend charts, want %d (4 case/variants x the primary metrics but gc-cost)", got, want)
	}
	for _, want := range []string{"Change points, newest first", "torch 1.13.1 -&gt; 2.4.0", `class="regression"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	dom, err := browser.DOM(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(dom, []byte("<svg")); n < 2*2*len(stats.DefaultPrimary) {
		t.Errorf("%d SVGs in the rendered DOM", n)
	}
	shot := os.Getenv("GCJITTER_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(dir, "dashboard.png")
	}
	if err := browser.Screenshot(paths[0], shot, 1200, 1000); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	blue, red := countColors(img)
	t.Logf("screenshot %s: %d point-blue pixels, %d regression-red pixels", shot, blue, red)
	if blue < 500 || red < 50 {
		t.Errorf("the charts did not render: %d blue and %d red pixels", blue, red)
	}
}

// countColors counts pixels near the points' blue (#3465a4) and the
// regression's red (#b00020).
func countColors(img image.Image) (blue, red int) {
	near := func(r, g, b uint32, R, G, B uint32) bool {
		d := func(a, b uint32) uint32 {
			if a > b {
				return a - b
			}
			return b - a
		}
		return d(r>>8, R)+d(g>>8, G)+d(b>>8, B) < 40
	}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			switch {
			case near(r, g, b, 0x34, 0x65, 0xa4):
				blue++
			case near(r, g, b, 0xb0, 0x00, 0x20):
				red++
			}
		}
	}
	return blue, red
}

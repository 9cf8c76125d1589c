package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gcjitter/gcjitter/internal/testbrowser"
	"github.com/gcjitter/gcjitter/results"
)

// policiesDoc is fixture()'s comparison read as one results directory's
// policies side by side (each variant against default), with an answer
// and step series, as gcjitter report DIR makes it.
func policiesDoc() *Doc {
	d := fixture()
	d.Kind, d.Schedules, d.Reference, d.Comparison.Reference = "run", nil, "default", "default"
	d.Answers = []Answer{{Case: "demo", Pick: "manual:50", Policy: "manual:50", Reason: "the calmest tail that qualifies: p99 12 ms against default's 50 ms",
		Under: "a job of 24 h, memory limit 16GiB (-mem-limit)"}}
	d.Steps = map[string][2]*results.Steps{
		"GCJitter/case=demo/variant=manual:50": {syntheticSteps(2, 400, 1), syntheticSteps(2, 400, 1.1)},
	}
	return d
}

func writePage(t *testing.T, d *Doc, name string) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, d); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return page
}

// TestFirstScreenAnswers: in Chromium at 1400x1000, a results directory's
// page opens on what to set, has no regression banner (a policy worse
// than default is a finding), draws its first chart within two screens,
// folds the descriptive rows and filters the verdicts by variant; an old
// -> new page names what regressed in its banner's first line.
func TestFirstScreenAnswers(t *testing.T) {
	browser := testbrowser.New(t)
	shots := os.Getenv("GCJITTER_SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	}
	tab := browser.Open(t, writePage(t, policiesDoc(), "policies.html"), true, 1400, 1000)
	if err := tab.Do(chromedp.WaitVisible(chromedp.CSS(`body[data-charts="ready"]`))); err != nil {
		t.Fatalf("charts never drew: %v", err)
	}
	got, err := testbrowser.Eval[map[string]any](tab, `(() => {
		const top = s => { const e = document.querySelector(s); return e ? e.getBoundingClientRect().top + scrollY : -1; };
		const visible = s => [...document.querySelectorAll(s)].filter(e => e.checkVisibility()).length;
		return {answerTop: top("#answer"), answer: (document.querySelector("#answer") || {}).innerText || "",
			chartTop: top(".interactive figure"), banners: [...document.querySelectorAll(".banner")].map(b => b.innerText).join(" | "),
			tested: visible("#tested tr.row"), descriptiveShown: visible("#descriptive tr.row"),
			descriptive: document.querySelectorAll("#descriptive tr.row").length};
	})()`)
	if err != nil {
		t.Fatal(err)
	}
	if top := got["answerTop"].(float64); top < 0 || top > 1000 || !strings.Contains(got["answer"].(string), "demo: set manual:50") || !strings.Contains(got["answer"].(string), "calmest tail") {
		t.Errorf("the first screen does not answer: #answer at %v px, text %q", top, got["answer"])
	}
	if top := got["chartTop"].(float64); top < 0 || top > 2000 {
		t.Errorf("the first chart is at %v px, want within the first two screens (2000 px)", top)
	}
	if b := got["banners"].(string); strings.Contains(strings.ToLower(b), "regress") || !strings.Contains(b, "every policy against default") {
		t.Errorf("a single-directory page's banner reads %q: want every policy against default, no regression", b)
	}
	if got["tested"].(float64) == 0 || got["descriptive"].(float64) == 0 || got["descriptiveShown"].(float64) != 0 {
		t.Errorf("verdict rows: %v tested shown, %v descriptive of which %v shown (want tested shown, descriptive folded)", got["tested"], got["descriptive"], got["descriptiveShown"])
	}
	if err := tab.Screenshot(filepath.Join(shots, "policies.png")); err != nil {
		t.Fatal(err)
	}
	// The filter: one variant's rows only.
	counts, err := testbrowser.Eval[[]float64](tab, `(() => {
		const rows = () => [...document.querySelectorAll("#tested tr.row")].filter(e => e.checkVisibility());
		const all = rows().length, sel = document.getElementById("filter-variant");
		sel.value = "manual:50"; sel.dispatchEvent(new Event("change"));
		const shown = rows(), other = shown.filter(r => r.dataset.variant !== "manual:50").length;
		return [all, shown.length, other];
	})()`)
	if err != nil {
		t.Fatal(err)
	}
	if counts[1] == 0 || counts[1] >= counts[0] || counts[2] != 0 {
		t.Errorf("filter by variant manual:50: %v of %v tested rows shown, %v of another variant", counts[1], counts[0], counts[2])
	}

	// Old -> new: the banner's first line names what regressed.
	d := fixture()
	d.Schedules = nil
	old := browser.Open(t, writePage(t, d, "compare.html"), true, 1400, 1000)
	first, err := testbrowser.Eval[string](old, `document.querySelector("#banner b").innerText`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first, "regression: GCJitter/case=demo/variant=default p99 +") {
		t.Errorf("an old -> new page's banner opens %q: want the regressed p99 named", first)
	}
	if err := old.Screenshot(filepath.Join(shots, "compare.png")); err != nil {
		t.Fatal(err)
	}
	for _, tb := range []*testbrowser.Tab{tab, old} {
		if errs := tb.Errors(); len(errs) > 0 {
			t.Errorf("console errors: %v", errs)
		}
	}
}

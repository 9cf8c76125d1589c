package report

import "html/template"

var htmlTemplate = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1200px; color: #222; padding: 0 16px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 24px; border-bottom: 1px solid #ddd; }
.banner { padding: 10px 14px; border-radius: 6px; margin: 12px 0; font-weight: 600; }
.pass { background: #e8f5e9; } .fail { background: #fdecea; } .undecided { background: #fff8e1; } .neutral { background: #eef2f8; font-weight: 400; }
.answer { padding: 4px 10px; border-radius: 6px; margin: 4px 0; } table.policies td { padding: 2px 6px; } table.policies td.bench { white-space: nowrap; } tr.case td { font-weight: 600; text-align: left; padding-top: 6px; border-bottom: 1px solid #ccc; } .answer .why { color: #444; font-size: 13px; line-height: 1.35; } .warn { color: #a04000; font-weight: 400; }
.regs { margin: 4px 0 4px 18px; padding: 0; font-weight: 400; } details summary { cursor: pointer; margin: 8px 0; color: #333; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 8px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #eee; padding: 4px 6px; text-align: right; white-space: nowrap; }
td.bench { white-space: normal; overflow-wrap: anywhere; min-width: 12em; } .wide { overflow-x: auto; }
th:first-child, td:first-child, td.l { text-align: left; }
td.regressed { background: #fdecea; font-weight: 600; } td.improved { background: #e8f5e9; }
td.unknown { color: #8a6d00; } .reason { color: #555; white-space: normal; text-align: left; font-size: 12px; } .spikes { color: #333; font-family: ui-monospace, monospace; font-size: 12px; margin: 0 0 8px; }
figure { margin: 8px 0 18px; } svg { max-width: 100%; height: auto; }
.facts td { text-align: left; white-space: normal; } code { background: #f4f4f4; padding: 1px 4px; overflow-wrap: anywhere; }
p, pre { overflow-wrap: anywhere; } pre { white-space: pre-wrap; }
.interactive { display: none; } .js .interactive { display: block; } .js figure.static { display: none; }
.interactive figure { position: relative; } .u-title { font-size: 14px; font-weight: 600; }
.u-legend { font-size: 12px; } .u-legend .u-marker { width: 10px; height: 10px; }
.tip { position: absolute; display: none; z-index: 10; pointer-events: none; background: rgba(255,255,255,.95); border: 1px solid #999; border-radius: 4px; padding: 3px 6px; font-size: 12px; white-space: nowrap; }
.range, .hint { font-size: 12px; color: #555; } .hint { color: #888; }
{{.ChartStyle}}
</style></head>
<body data-ready="0">
<h1>{{.Title}}</h1>
<p>generated {{.Generated.Format "2006-01-02 15:04:05 MST"}} by gcjitter ({{.Kind}})</p>
{{with .Partial}}<div class="banner undecided partial"><b>{{.}}</b></div>{{end}}
{{with .Answers}}<section id="answer"><h2>What to set</h2>{{with $.AnswersUnder}}<p class="hint">judged for {{.}}; gcjitter advise says more, and its -duration and -mem-limit set the job</p>{{end}}
{{range .}}<div class="answer {{if .Err}}undecided{{else if .Undecided}}undecided{{else}}pass{{end}}"><b>{{.Case}}: {{.Headline}}</b>{{with .Warning}} <span class="warn">(warning: {{.}})</span>{{end}}
<div class="why">{{if .Err}}{{.Err}}{{else}}{{.Reason}}{{end}}</div>{{range .Settle}}<div class="why">settle {{.}}</div>{{end}}{{if not $.AnswersUnder}}{{with .Under}}<div class="hint">judged for {{.}}</div>{{end}}{{end}}</div>
{{end}}</section>{{end}}
{{if .Comparison}}{{if not .Comparison.Reference}}<div class="banner {{if eq .Status "regression"}}fail{{else if eq .Status "undecided"}}undecided{{else}}pass{{end}}" id="banner"><b>{{.Status}}{{with .Regressions}}: {{index . 0}}{{if gt (len .) 1}} (and {{len (slice . 1)}} more){{end}}{{end}}</b>
{{with .Regressions}}{{if gt (len .) 1}}<ul class="regs">{{range slice . 1}}<li>{{.}}</li>{{end}}</ul>{{end}}{{end}}
<div>{{index .Counts "regressed"}} regressed · {{index .Counts "improved"}} improved · {{index .Counts "same"}} same · {{index .Counts "unknown"}} unknown (undecided) · {{index .Counts "descriptive"}} descriptive</div>{{with .Comparison.SensitivityText}}<div class="why" id="sensitivity">{{.}}</div>{{end}}</div>
<p>old: <code>{{.Comparison.Old.Path}}</code> · new: <code>{{.Comparison.New.Path}}</code> · runs are the statistical unit; each change with its interval and the test that decided it; Holm-adjusted over the tested (primary) metrics (family-wise alpha {{.Comparison.Alpha}}); descriptive metrics are reported, not tested</p>{{end}}{{end}}
{{range .Schedules}}<h2>GC schedule: {{.Golden.Case}}</h2><pre>{{.Text}}</pre>{{end}}
{{with .FailedRuns}}<h2>Runs that did not complete</h2><table><tr><th>run</th><th>status</th><th>reason</th></tr>
{{range .}}<tr><td>{{.ID}}</td><td>{{.Status}}</td><td class="reason">{{.Reason}}</td></tr>{{end}}</table>{{end}}
{{with .Policies}}<h2 id="policies">Policies side by side</h2><p class="reason">per variant, medians over runs; spikes and gen2 are counts per run; in GC: share of spikes that are GC spikes{{with $.Reference}}; each variant's verdicts against <code>{{.}}</code> are below the charts{{end}}</p>
<div class="wide"><table class="policies"><tr>{{range $.PolicyHeader}}<th>{{.}}</th>{{end}}</tr>
{{$case := ""}}{{range .}}{{if ne .Case $case}}{{$case = .Case}}<tr class="case"><td colspan="{{len $.PolicyHeader}}">{{.Case}}</td></tr>{{end}}<tr><td class="bench"><code>{{.Variant}}</code></td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>{{end}}</table></div>
{{range $.MemoryTrade}}<p class="reason">{{.}}</p>{{end}}{{end}}
{{range .Sections}}<h2>{{.Title}}</h2>
<div class="interactive" id="{{.ID}}"></div>
{{range .Charts}}<figure{{with .Class}} class="{{.}}"{{end}}{{with .ID}} id="{{.}}"{{end}}>{{with .Caption}}<figcaption>{{.}}</figcaption>{{end}}{{.SVG}}</figure>{{end}}{{range .Spikes}}<p class="spikes">{{.}}</p>{{end}}{{end}}
{{if .Sections}}<p class="reason">Timelines: each bucket of steps is drawn by its fastest and slowest step, so every spike shows; steps containing a collection are marked by generation (young collections only when the run is drawn whole). Tails: the i-th fastest of n steps sits at quantile (i+0.5)/n, so each curve ends at its slowest step; a dashed line is a baseline drawn from its sketch.{{if .MultiRank}} Multi-rank runs show the global step time (the slowest rank at each step) and a per-rank view of each rank's collection pauses.{{end}}</p>{{end}}
{{if or .Rows .Descriptive}}<h2 id="verdicts">Verdicts{{with .Reference}}: every variant against {{.}}{{end}}</h2>
{{if .Comparison.Reference}}<div class="banner neutral" id="banner"><b>every policy against {{.Comparison.Reference}}</b>: {{.PolicyCounts}}</div>
<p class="reason">one results directory: each variant is compared with <code>{{.Comparison.Reference}}</code>, so "worse" is a finding about the policy, not a breakage of the software</p>{{end}}
<p class="filter">show <select id="filter-case" aria-label="case"><option value="">every case</option>{{range .FilterCases}}<option>{{.}}</option>{{end}}</select>
<select id="filter-variant" aria-label="variant"><option value="">every variant</option>{{range .FilterVariants}}<option>{{.}}</option>{{end}}</select> <span class="hint" id="filter-count"></span></p>
{{with .Rows}}<div class="wide" id="tested">{{template "rows" .}}</div>{{end}}
{{with .Explain}}<h3 id="explain">{{$.ExplainHeader}}</h3>{{range .}}<p class="bench"><code>{{.Bench}}</code>{{with .Note}} <span class="reason">({{.}})</span>{{end}}</p><table class="explain"><tr>{{range $.ExplainColumns}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}{{end}}
{{with .Descriptive}}<details id="descriptive"><summary>{{len .}} descriptive rows (reported, not tested)</summary><div class="wide">{{template "rows" .}}</div></details>{{end}}
{{with .Comparison.Notes}}<h3>Notes</h3><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
<script>(function () {
  var c = document.getElementById("filter-case"), v = document.getElementById("filter-variant"), n = document.getElementById("filter-count");
  function apply() {
    var shown = 0;
    document.querySelectorAll("table.verdicts tr[data-case]").forEach(function (tr) {
      var on = (!c.value || tr.dataset.case === c.value) && (!v.value || tr.dataset.variant === v.value);
      tr.style.display = on ? "" : "none";
      if (on && tr.classList.contains("row")) shown++;
    });
    n.textContent = shown + " rows";
  }
  c.addEventListener("change", apply); v.addEventListener("change", apply); apply();
})();</script>{{end}}
{{with .Scale}}<h2>At scale</h2>{{.}}{{end}}
{{with .Facts}}<h2>Environment and host</h2><table class="facts">{{range .}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>{{end}}
{{.Scripts}}<script>document.body.dataset.ready = "1";</script>
</body></html>
{{define "rows"}}<table class="verdicts"><tr><th>benchmark</th><th>metric</th><th>old</th><th>new</th><th>change [interval]</th><th>p</th><th>n</th><th>verdict</th></tr>
{{range .}}<tr class="row" data-case="{{.Case}}" data-variant="{{.Variant}}" title="{{.Reason}}"><td class="bench">{{.Bench}}</td><td class="l">{{.Metric}}</td><td>{{.Old}}</td><td>{{.New}}</td><td>{{.Change}}</td><td>{{.P}}</td><td>{{.N}}</td><td class="{{.Verdict}}">{{.VerdictText}}</td></tr>
{{if or (eq .Verdict "regressed") (eq .Verdict "improved")}}<tr class="why" data-case="{{.Case}}" data-variant="{{.Variant}}"><td></td><td colspan="7" class="reason">{{.Reason}}</td></tr>{{end}}{{end}}</table>{{end}}`))

package results

import "strings"

// Join makes one side of several: every benchmark of each of ds that
// name(i, bench) names ("" leaves it out), under that name. Benchmarks
// given one name pool their runs: several gcjitter trace runs of one job
// under one policy are one policy's runs. The first side's gate settings
// hold where sides differ; Path is the sides' paths.
func Join(ds []*Data, name func(i int, bench string) string) *Data {
	var paths []string
	for _, d := range ds {
		paths = append(paths, d.Path)
	}
	out := newData(strings.Join(paths, ", "))
	for i, d := range ds {
		out.Warnings = append(out.Warnings, d.Warnings...)
		if out.Alpha == 0 {
			out.Alpha = d.Alpha
		}
		for _, b := range d.Benches {
			nb := name(i, b)
			if nb == "" {
				continue
			}
			out.pool(nb, d, b)
			if _, ok := out.Floors[nb]; !ok {
				out.Floors[nb] = d.Floors[b]
			}
			if _, ok := out.Env[nb]; !ok {
				if e, ok := d.Env[b]; ok {
					out.Env[nb] = e
				}
			}
		}
	}
	if len(ds) == 1 {
		// One results directory keeps its path: its manifest's gates apply.
		out.Path = ds[0].Path
	}
	return out
}

// pool adds the runs of o's benchmark b to d's benchmark nb: values, units'
// directions, the fewest steps, run summaries.
func (d *Data) pool(nb string, o *Data, b string) {
	for _, u := range o.Units[b] {
		for _, v := range o.Values[b][u] {
			d.add(nb, u, v)
		}
		d.Better[u] = o.Better[u]
	}
	if n, ok := o.MinIters[b]; ok {
		d.iters(nb, n)
	}
	d.Runs[nb] = append(d.Runs[nb], o.Runs[b]...)
	d.Sketches[nb] = append(d.Sketches[nb], o.Sketches[b]...)
}

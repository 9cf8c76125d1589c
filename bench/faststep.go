package bench

// A step record as the worker writes it has a fixed shape: the same keys in
// the same order, integers and booleans only. parseStepFast reads exactly
// that shape, about ten times faster than encoding/json (comparing two
// million-step results spends most of its time here), and gives up on
// anything else, which then goes through encoding/json as before.

type stepScanner struct {
	b []byte
	i int
	// mem, when set, holds the values of the step's nullable integers
	// (rss, dev_mem) instead of an allocation each: ScanBytes reuses one
	// step for every line.
	mem *[2]int64
}

func (p *stepScanner) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

func (p *stepScanner) peek(c byte) bool { return p.i < len(p.b) && p.b[p.i] == c }

// int reads a JSON integer of at most 18 digits (no overflow possible).
func (p *stepScanner) int() (int64, bool) {
	b, i := p.b, p.i // locals: the digit loop stays in registers
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	var v int64
	for ; i < len(b); i++ {
		d := b[i] - '0'
		if d > 9 {
			break
		}
		v = v*10 + int64(d)
	}
	p.i = i
	n := i - start
	if n == 0 || n > 18 || (n > 1 && b[start] == '0') {
		return 0, false
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

func (p *stepScanner) bool() (bool, bool) {
	switch {
	case p.lit("true"):
		return true, true
	case p.lit("false"):
		return false, true
	}
	return false, false
}

// intOrNull reads an integer or null; k is the value's slot in p.mem.
func (p *stepScanner) intOrNull(k int) (*int64, bool) {
	if p.lit("null") {
		return nil, true
	}
	v, ok := p.int()
	if p.mem == nil {
		return &v, ok
	}
	p.mem[k] = v
	return &p.mem[k], ok
}

func parseStepFast(line []byte, s *Step) bool { return parseStepInto(line, s, nil) }

// parseStepInto is parseStepFast with the step's nullable integers kept
// in mem (nil: allocated).
func parseStepInto(line []byte, s *Step, mem *[2]int64) bool {
	p := &stepScanner{b: line, mem: mem}
	var ok bool
	var v int64
	if !p.lit(`{"type":"step","i":`) {
		return false
	}
	if v, ok = p.int(); !ok || v > 1<<40 {
		return false
	}
	s.Index = int(v)
	if !p.lit(`,"warmup":`) {
		return false
	}
	if s.Warmup, ok = p.bool(); !ok || !p.lit(`,"ns":`) {
		return false
	}
	if s.DurationNS, ok = p.int(); !ok || !p.lit(`,"gc":[`) {
		return false
	}
	for !p.peek(']') {
		if len(s.GC) > 0 && !p.lit(",") {
			return false
		}
		var e GCEvent
		if !p.lit(`{"gen":`) {
			return false
		}
		if v, ok = p.int(); !ok || v < -1 || v > 3 {
			return false
		}
		e.Gen = int(v)
		if !p.lit(`,"ns":`) {
			return false
		}
		if e.PauseNS, ok = p.int(); !ok || !p.lit(`,"collected":`) {
			return false
		}
		if e.Collected, ok = p.int(); !ok || !p.lit(`,"uncollectable":`) {
			return false
		}
		if e.Uncollectable, ok = p.int(); !ok || !p.lit(`,"in_step":`) {
			return false
		}
		if e.InStep, ok = p.bool(); !ok || !p.lit(`,"manual":`) {
			return false
		}
		if e.Manual, ok = p.bool(); !ok || !p.lit("}") {
			return false
		}
		s.GC = append(s.GC, e)
	}
	if !p.lit(`],"lost":`) {
		return false
	}
	if v, ok = p.int(); !ok || v > 1<<40 || !p.lit(`,"sched":`) {
		return false
	}
	s.Lost = int(v)
	if s.Scheduled, ok = p.bool(); !ok || !p.lit(`,"count":[`) {
		return false
	}
	for k := range 3 {
		if k > 0 && !p.lit(",") {
			return false
		}
		if s.Count[k], ok = p.int(); !ok {
			return false
		}
	}
	if !p.lit(`],"rss":`) {
		return false
	}
	if s.RSS, ok = p.intOrNull(0); !ok || !p.lit(`,"dev_mem":`) {
		return false
	}
	if s.DeviceMem, ok = p.intOrNull(1); !ok {
		return false
	}
	if p.lit(`,"dev_busy":`) {
		d := new(DeviceTiming)
		for _, f := range [...]struct {
			v    *int64
			next string
		}{{&d.BusyNS, `,"dev_idle":`}, {&d.IdleNS, `,"dev_idle_gc":`}, {&d.IdleGCNS, `,"dev_slack":`}, {&d.SlackNS, `,"dev_lead_gc":`}, {&d.LeadGCNS, ""}} {
			if *f.v, ok = p.int(); !ok || (f.next != "" && !p.lit(f.next)) {
				return false
			}
		}
		s.DeviceTiming = d
	}
	if p.lit(`,"own":`) {
		v, ok := p.int()
		if !ok {
			return false
		}
		s.OwnNS = &v
	}
	if !p.lit("}") {
		return false
	}
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\r' || p.b[p.i] == '\t') {
		p.i++
	}
	return p.i == len(p.b)
}

package bench

import "bytes"

// ScanBytes reads a whole record stream held in memory (data, as read from
// fileName) and calls fn with each record in order: the records, syntax
// errors included, that a Reader would return for the same bytes.
//
// It is the Reader for summarising: no line is copied, and a step of the
// worker's fixed shape (parseStepFast) is decoded into one *Step reused for
// every step (its rss and dev_mem too), so a million steps allocate
// almost nothing. The records fn
// is given are valid only during the call; a consumer that keeps a step
// must copy it.
func ScanBytes(data []byte, fileName string, fn func(Record)) {
	r := &Reader{fileName: fileName}
	var st Step
	var mem [2]int64 // st's rss and dev_mem
	emit := func(rec Record) {
		fn(rec)
		if r.pending != nil {
			rec, r.pending = r.pending, nil
			fn(rec)
		}
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		r.line++
		if len(line) > MaxLineBytes {
			emit(r.syntaxf("record longer than %d bytes", MaxLineBytes))
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if r.sawMeta && !r.done && bytes.HasPrefix(line, []byte(`{"type":"step",`)) {
			gc := st.GC[:0]
			st = Step{GC: gc} // optional fields absent from this line stay zero
			if parseStepInto(line, &st, &mem) {
				emit(r.checkStep(&st))
				continue
			}
		}
		emit(r.parse(line))
	}
}

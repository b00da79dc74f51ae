package terminal

import (
	"strings"
	"unicode/utf8"
)

// ring keeps the last max bytes of a terminal's output and counts what it
// dropped. Offsets count from the first byte the terminal ever wrote.
type ring struct {
	max   int
	buf   []byte // the kept bytes are the last kept() of buf
	total int64
}

func newRing(max int) *ring { return &ring{max: max} }

func (r *ring) write(p []byte) {
	r.total += int64(len(p))
	if len(p) >= r.max {
		r.buf = append(r.buf[:0], p[len(p)-r.max:]...)
		return
	}
	if len(r.buf)+len(p) > 2*r.max {
		// Compact: keep the last max-len(p) bytes, so that appending p
		// leaves exactly max (amortized: one copy per max bytes written).
		keep := r.max - len(p)
		r.buf = append(r.buf[:0], r.buf[len(r.buf)-keep:]...)
	}
	r.buf = append(r.buf, p...)
}

func (r *ring) kept() int { return min(len(r.buf), r.max) }

// start is the offset of the first byte still kept.
func (r *ring) start() int64 { return r.total - int64(r.kept()) }

// dropped counts the bytes no longer kept.
func (r *ring) dropped() int64 { return r.start() }

// window returns the kept bytes (shared; copy before unlocking).
func (r *ring) window() []byte { return r.buf[len(r.buf)-r.kept():] }

// read returns up to limit bytes from offset after (moved up to start()
// when those were dropped), cut at UTF-8 boundaries: a rune split by the
// drop is skipped, one split by limit or not yet complete is left for the
// next read unless final (the terminal ended). It returns the text, its offset and the offset after it.
func (r *ring) read(after int64, limit int, final bool) (text string, from, next int64) {
	from = max(after, r.start())
	w := r.window()
	data := w[from-r.start():]
	if from > after {
		// The drop may have split a rune: skip its continuation bytes.
		for i := 0; i < len(data) && i < utf8.UTFMax && !utf8.RuneStart(data[0]); i++ {
			data = data[1:]
			from++
		}
	}
	if len(data) > limit {
		data = data[:limit]
		data = data[:completeRunes(data)]
	} else if !final {
		data = data[:completeRunes(data)]
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), from, from + int64(len(data))
}

// completeRunes is the length of data without a trailing incomplete rune
// (its bytes may still come); at most utf8.UTFMax-1 bytes are held back.
func completeRunes(data []byte) int {
	n := len(data)
	for i := 1; i < utf8.UTFMax && i <= n; i++ {
		b := data[n-i]
		if !utf8.RuneStart(b) {
			continue
		}
		if !utf8.FullRune(data[n-i:]) {
			return n - i
		}
		return n
	}
	return n
}

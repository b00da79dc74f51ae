package terminal

import (
	"strings"
	"testing"
)

func TestRingKeepsTheLastBytesAndCountsTheRest(t *testing.T) {
	r := newRing(8)
	r.write([]byte("abcdef"))
	if text, from, next := r.read(0, 100, false); text != "abcdef" || from != 0 || next != 6 {
		t.Fatalf("read 0: %q %d %d", text, from, next)
	}
	for range 100 {
		r.write([]byte("xyz"))
	}
	if r.total != 306 || r.dropped() != 298 || r.start() != 298 {
		t.Fatalf("total %d dropped %d start %d", r.total, r.dropped(), r.start())
	}
	text, from, next := r.read(0, 100, false)
	if from != 298 || next != 306 || text != strings.Repeat("xyz", 3)[1:] {
		t.Fatalf("read after a drop: %q %d %d", text, from, next)
	}
	if text, from, next := r.read(303, 2, false); text != "xy" || from != 303 || next != 305 {
		t.Fatalf("read with a limit: %q %d %d", text, from, next)
	}
	// One write larger than the buffer keeps its end.
	r.write([]byte(strings.Repeat("q", 20) + "12345678"))
	if text, _, _ := r.read(0, 100, false); text != "12345678" || len(r.buf) > 16 {
		t.Fatalf("after a big write: %q (buf %d)", text, len(r.buf))
	}
}

func TestRingCutsAtCharacterBoundaries(t *testing.T) {
	r := newRing(16)
	r.write([]byte("héllo\xe2\x82")) // "€" not complete yet
	text, _, next := r.read(0, 100, false)
	if text != "héllo" || next != 6 {
		t.Fatalf("incomplete rune held back: %q next %d", text, next)
	}
	r.write([]byte("\xac"))
	if text, _, next := r.read(next, 100, false); text != "€" || next != 9 {
		t.Fatalf("rest of the rune: %q next %d", text, next)
	}
	// A drop that split a rune skips its continuation bytes.
	r = newRing(4)
	r.write([]byte("a€b")) // offsets 0–4: 61 e2 82 ac 62
	r.write([]byte("é"))   // 5–6; the last 4 bytes kept are ac 62 c3 a9
	if text, from, _ := r.read(0, 100, true); text != "bé" || from != 4 {
		t.Fatalf("after a split drop: %q from %d", text, from)
	}
}

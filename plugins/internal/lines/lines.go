// Package lines turns a child process's output stream into lines.
package lines

import (
	"bytes"
	"sync"
)

// MaxLine is the longest line kept whole: a runaway line without a newline
// is handed on in pieces of about this size.
const MaxLine = 64 << 10

// Writer is an io.Writer that calls emit with each complete line (without
// its newline). It is safe for concurrent use; emit is called with the
// writer's lock held and must not keep the slice.
type Writer struct {
	emit func(line []byte)
	mu   sync.Mutex
	buf  []byte
}

// NewWriter returns a Writer that hands each line to emit.
func NewWriter(emit func(line []byte)) *Writer { return &Writer{emit: emit} }

// Write buffers p and emits every complete line; it never fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > MaxLine { // a runaway line without newline
		w.emit(w.buf)
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

package graph

import "strconv"

// Bounds the GraphQL layer enforces itself, whatever the transport; the
// HTTP edge's own bounds are in package edge. Each is listed with the error
// a client gets in docs/limits.md.
const (
	// MaxResponseBytes caps one response (one result of a query or
	// mutation, one event of a subscription), counted while it is built.
	MaxResponseBytes = 16 << 20
	// MaxExportBytes caps one exportSession document, so that the response
	// (the document as a JSON string) stays under MaxResponseBytes.
	MaxExportBytes = 12 << 20
	// MaxEchoBytes is the most of a client's input any error message
	// repeats.
	MaxEchoBytes = 200
)

// ByteSize renders a byte count the way docs/limits.md writes it.
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

package core

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of catalog text (PRV-13) and of the names people see in lists.
const (
	// MaxConnectionNameChars bounds a connection name (characters).
	MaxConnectionNameChars = 200
	// MaxModelIDChars bounds a model id (characters).
	MaxModelIDChars = 256
	// MaxAPIKeyBytes bounds a stored API key (or env: reference).
	MaxAPIKeyBytes = 4 << 10
	// MaxModelsPerConnection bounds the models of one connection.
	MaxModelsPerConnection = 2000
	// MaxProjectNameChars bounds a project name (characters).
	MaxProjectNameChars = 200
)

// unsafeRune reports whether r must not appear in a title, a name or a
// model id: C0 and C1 control characters (newlines and tabs included), DEL,
// and the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069) that make text display differently from what it is.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// DisplayTextProblem says why s cannot be a title, name or model id, or "".
func DisplayTextProblem(s string) string {
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	for i, r := range s {
		if unsafeRune(r) {
			return fmt.Sprintf("contains the control or bidirectional character U+%04X at byte %d (one line of plain text only)", r, i)
		}
	}
	return ""
}

// StripUnsafe removes the characters unsafeRune refuses (newlines and tabs
// become spaces), for text the kernel derives itself, such as generated
// titles.
func StripUnsafe(s string) string {
	s = strings.ToValidUTF8(s, "")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case unsafeRune(r):
			return -1
		}
		return r
	}, s)
}

// ValidModelID reports whether a listed model id can be stored.
func ValidModelID(id string) bool {
	return id != "" && utf8.RuneCountInString(id) <= MaxModelIDChars && DisplayTextProblem(id) == ""
}

// Truncate is s cut to at most n bytes on a UTF-8 boundary, with mark
// appended when it was cut. It is the kernel's one byte-bounded truncation
// (previews, hook output, error quotes); TruncateRunes bounds characters.
func Truncate(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}

// TruncateRunes is s cut to at most n characters (runes), with mark
// appended when it was cut (titles, summaries).
func TruncateRunes(s string, n int, mark string) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + mark
	}
	return s
}

// Clip is s cut to at most n bytes, marked with "…" when cut: a quote of
// untrusted input in an error message.
func Clip(s string, n int) string { return Truncate(s, n, "…") }

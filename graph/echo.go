package graph

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxQuotedEcho is the most of one quoted input value an error message
// keeps ("…" marks the cut).
const maxQuotedEcho = 64

// maxKernelMessage caps a kernel (core) error message; they quote input
// values only through %q, which clipQuoted shortens.
const maxKernelMessage = 2048

// ClipText cuts s to at most n bytes on a UTF-8 boundary, marking the cut.
func ClipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ClipMessage shortens a message that may repeat the client's input
// (gqlgen's parse, validation and transport messages): quoted values keep
// maxQuotedEcho bytes and the whole message MaxEchoBytes.
func ClipMessage(msg string) string {
	if strings.HasPrefix(msg, "json request body could not be decoded: ") {
		// gqlgen appends the whole body; the decoder's reason is enough.
		msg = strings.TrimPrefix(msg, "json request body could not be decoded: ")
		if i := strings.LastIndex(msg, " body:"); i >= 0 {
			msg = msg[:i]
		}
		msg = "the request body is not a valid GraphQL JSON request: " + msg
	}
	return ClipText(clipQuoted(msg), MaxEchoBytes)
}

// ClipKernelMessage bounds a kernel error message, whose input values are
// quoted: each keeps maxQuotedEcho bytes.
func ClipKernelMessage(msg string) string {
	return ClipText(clipQuoted(msg), maxKernelMessage)
}

// clipQuoted shortens every double-quoted run of msg longer than
// maxQuotedEcho bytes (escaped quotes inside a run are part of it).
func clipQuoted(msg string) string {
	if len(msg) <= maxQuotedEcho || !strings.Contains(msg, `"`) {
		return msg
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(msg, '"')
		if open < 0 {
			b.WriteString(msg)
			return b.String()
		}
		end := open + 1
		for end < len(msg) && msg[end] != '"' {
			if msg[end] == '\\' {
				end++
			}
			end++
		}
		inner := msg[open+1 : min(end, len(msg))]
		b.WriteString(msg[:open+1])
		if len(inner) > maxQuotedEcho {
			inner = ClipText(inner, maxQuotedEcho) + " (" + strconv.Itoa(len(inner)) + " bytes)"
		}
		b.WriteString(inner)
		if end >= len(msg) {
			return b.String()
		}
		b.WriteByte('"')
		msg = msg[end+1:]
	}
}

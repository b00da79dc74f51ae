package httpwire

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/foya-dev/foya/plugins/sdk"
)

// Marshal encodes v as JSON without HTML escaping and without the trailing
// newline, so that provider-native state goes back byte for byte.
func Marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// NonEmpty is s, or "[no output]" when s is blank (services reject an empty
// tool result).
func NonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "[no output]"
	}
	return s
}

// AssistantText is the text of an assistant message as it goes back to a
// service. Only an interrupted reply carries reasoning back (MSG-9); no
// wire format has a portable field for it, so it travels as labelled text
// before the cut-off reply.
func AssistantText(m sdk.Message) string {
	t := m.Text()
	if m.Reasoning != "" {
		t = "[my reasoning before the interruption]\n" + m.Reasoning + "\n[end of reasoning]\n\n" + t
	}
	return t
}

// DecodeState decodes provider-native state saved as JSON. Empty state, or
// state that is not ours (e.g. another provider's), is the zero S.
func DecodeState[S any](b []byte) S {
	var s S
	if len(b) == 0 {
		return s
	}
	if json.Unmarshal(b, &s) != nil {
		var zero S
		return zero
	}
	return s
}

// DecodeEvent decodes the JSON data of a stream event into v; see
// DecodeError for how a failure is classified.
func DecodeEvent(event string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return DecodeError("stream event "+event, data, err)
	}
	return nil
}

// DecodeError classifies a failure to decode what a service streamed:
// data that is not JSON (cut or corrupted on the way) is a server error,
// which may be retried; well-formed JSON of an unexpected shape is a
// bad_response, never retried, since the service would send the same
// again. The message names what failed and quotes the start of the data.
func DecodeError(what string, data []byte, err error) *sdk.Error {
	quote := string(data)
	if len(quote) > 200 {
		quote = quote[:200] + "…"
	}
	quote = strings.ToValidUTF8(quote, "\ufffd")
	if !json.Valid(data) {
		return &sdk.Error{Category: sdk.CategoryServer, Message: "malformed " + what + " (not JSON): " + err.Error()}
	}
	return &sdk.Error{Category: sdk.CategoryBadResponse, Message: "unexpected " + what + ": " + err.Error() + ": " + quote}
}

// ToolCallID maps a tool call id onto what a service takes back: an id of
// at most max bytes whose runes all pass valid (nil: any rune) is kept;
// another (made by another provider on a route the session used before,
// e.g. after a fallback) gets its other runes replaced by '_', is cut to
// fit, and ends with a hash of the original, so that the same id always
// maps to the same one and two ids never to one.
func ToolCallID(id string, max int, valid func(rune) bool) string {
	ok := id != "" && len(id) <= max
	for _, r := range id {
		if valid != nil && !valid(r) {
			ok = false
			break
		}
	}
	if ok {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	hash := hex.EncodeToString(sum[:6])
	var b strings.Builder
	for _, r := range id {
		if valid != nil && !valid(r) {
			r = '_'
		}
		if b.Len()+utf8.RuneLen(r) > max-len(hash)-1 {
			break
		}
		b.WriteRune(r)
	}
	return b.String() + "_" + hash
}

// IDRune reports whether r may appear in the tool ids of services that
// take only [A-Za-z0-9_-] (Anthropic).
func IDRune(r rune) bool {
	return r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

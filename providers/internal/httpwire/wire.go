package httpwire

import (
	"bytes"
	"encoding/json"
	"strings"

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

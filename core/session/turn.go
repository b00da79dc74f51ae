package session

import (
	"github.com/foya-dev/foya/core"
)

// activeMessages is msgs without the inactive (rewound) ones: what
// SessionStore.Messages returns without includeInactive.
func ActiveMessages(msgs []core.Message) []core.Message {
	out := make([]core.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Active {
			out = append(out, m)
		}
	}
	return out
}

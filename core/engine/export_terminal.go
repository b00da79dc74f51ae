package engine

import (
	"encoding/json"
	"fmt"

	"github.com/foya-dev/foya/core"
)

// terminalBlobs calls add for the artifact a terminal_exited event names
// (the last part of the terminal's output; not required: a document
// without it still imports, the event then names no output).
func terminalBlobs(ev *core.Event, add func(hash string, required bool, what string) error) error {
	if ev.Type != core.EventTerminalExited {
		return nil
	}
	var p core.TerminalExitedPayload
	if err := ev.Decode(&p); err != nil {
		return err
	}
	return add(p.OutputSHA256, false, "")
}

// terminalExited rewrites an imported terminal_exited event: an
// outputSha256 whose bytes the document does not carry is dropped, so an
// imported event names only an artifact that exists (and that the import
// itself brought: a document cannot claim bytes this kernel holds for
// another session by naming their hash).
func (w *importRewrite) terminalExited(ev core.Event) (core.Event, error) {
	var p core.TerminalExitedPayload
	if err := ev.Decode(&p); err != nil {
		return ev, err
	}
	if p.OutputSHA256 == "" {
		return ev, nil
	}
	if _, ok := w.blobs[p.OutputSHA256]; ok {
		return ev, nil
	}
	p.OutputSHA256 = ""
	raw, err := json.Marshal(p)
	if err != nil {
		return ev, fmt.Errorf("encode imported terminal_exited: %w", err)
	}
	ev.Payload = raw
	return ev, nil
}

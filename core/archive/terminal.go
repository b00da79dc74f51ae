package archive

import (
	"encoding/json"

	"github.com/foya-dev/foya/core"
)

// terminalOutput checks the outputSha256 of a terminal_exited event and
// notes it as a hash a blob line may carry (the last part of the
// terminal's output).
func (p *archiveParser) terminalOutput(n int, payload json.RawMessage) error {
	var te core.TerminalExitedPayload
	if err := json.Unmarshal(payload, &te); err != nil {
		return ArchiveError(n, "terminal_exited payload: %s", clipError(err))
	}
	if te.OutputSHA256 == "" {
		return nil
	}
	if !validSHA256(te.OutputSHA256) {
		return ArchiveError(n, "terminal_exited outputSha256: expected 64 lowercase hex digits")
	}
	if p.termHashes == nil {
		p.termHashes = map[string]bool{}
	}
	p.termHashes[te.OutputSHA256] = true
	return nil
}

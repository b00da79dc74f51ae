package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

// terminalExitedCond selects terminal_exited events; a literal, so that
// the planner may use the partial index events_terminal_exited.
const terminalExitedCond = "type = '" + string(core.EventTerminalExited) + "'"

// terminalOutputHashes lists the artifacts (outputSha256) that the
// terminal_exited events of sessions name: the last part of a terminal's
// output, stored when it ended.
func terminalOutputHashes(ctx context.Context, tx bun.Tx, sessions []string) ([]string, error) {
	var payloads []string
	err := tx.NewSelect().Table("events").Column("payload").
		Where("session_id IN (?)", bun.List(sessions)).Where(terminalExitedCond).
		Scan(ctx, &payloads)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read terminal_exited events of deleted sessions: %w", err)
	}
	var hashes []string
	for _, raw := range payloads {
		if h := terminalOutputHash(raw); h != "" {
			hashes = append(hashes, h)
		}
	}
	return hashes, nil
}

// terminalOutputHash is the outputSha256 of a terminal_exited payload (""
// when it has none or does not decode).
func terminalOutputHash(payload string) string {
	var p core.TerminalExitedPayload
	if json.Unmarshal([]byte(payload), &p) != nil {
		return ""
	}
	return p.OutputSHA256
}

// mergeHashes appends to hashes those of more it does not hold yet.
func mergeHashes(hashes, more []string) []string {
	seen := make(map[string]bool, len(hashes))
	for _, h := range hashes {
		seen[h] = true
	}
	for _, h := range more {
		if h != "" && !seen[h] {
			seen[h] = true
			hashes = append(hashes, h)
		}
	}
	return hashes
}

// terminalOutputChunk bounds the hashes one query looks for.
const terminalOutputChunk = 100

// keepTerminalOutputs returns the hashes of orphans that no remaining
// terminal_exited event names (artifacts are content-addressed: another
// session's terminal may have left the same bytes). Candidates are found
// by a substring match of the payload and confirmed by decoding it.
func keepTerminalOutputs(ctx context.Context, tx bun.Tx, orphans []string) ([]string, error) {
	named := map[string]bool{}
	for start := 0; start < len(orphans); start += terminalOutputChunk {
		chunk := orphans[start:min(start+terminalOutputChunk, len(orphans))]
		conds := make([]string, len(chunk))
		args := make([]any, 0, len(chunk))
		for i, h := range chunk {
			conds[i] = containsExpr(tx, "payload")
			args = append(args, h)
		}
		var payloads []string
		err := tx.NewSelect().Table("events").Column("payload").
			Where(terminalExitedCond+" AND ("+strings.Join(conds, " OR ")+")", args...).
			Scan(ctx, &payloads)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("check terminal outputs: %w", err)
		}
		for _, raw := range payloads {
			named[terminalOutputHash(raw)] = true
		}
	}
	var out []string
	for _, h := range orphans {
		if !named[h] {
			out = append(out, h)
		}
	}
	return out, nil
}

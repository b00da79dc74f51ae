package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// mcpSessionToggle turns a kernel-wide server (by id or name), or a
// server attached to the session (by id), off or on for one session.
func mcpSessionToggle(r *runner, enabled bool) error {
	session := r.fs.String("session", "", "the session's id (required)")
	rest, err := r.parse()
	if err != nil {
		return err
	}
	if *session == "" {
		return cmdutil.UsageError{Err: errors.New("--session is required: the session to turn the server off or on for (see foya sessions list)")}
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		id := rest[0]
		if s, err := resolveMCP(ctx, c, rest[0]); err == nil {
			id = s.Id
		}
		resp, err := client.SetSessionMcpServerEnabled(ctx, c, *session, id, enabled)
		if err != nil {
			return err
		}
		s := resp.SetSessionMcpServerEnabled
		if r.cf.json {
			return printJSON(r.stdout, map[string]any{"sessionId": *session, "serverId": s.Id, "enabled": enabled})
		}
		state := "off"
		if enabled {
			state = "on"
		}
		fmt.Fprintf(r.stdout, "MCP server %s (%s) is %s for session %s (status %s)\n", s.Name, s.Id, state, *session, s.Status)
		return nil
	})
}

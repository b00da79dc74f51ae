package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/foya-dev/foya/internal/cmdutil"
)

const projectsUsage = `usage:
  foya projects trust PATH   (trusts PATH/.foya/hooks.json as it is now; see docs/hooks.md)
common flags: --addr 127.0.0.1:4777 --data-dir DIR --token-file PATH --json`

func projectsCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, "Usage of foya projects:\n"+projectsUsage+"\n")
		return nil
	}
	if len(args) == 0 || args[0] != "trust" {
		return cmdutil.UsageError{Err: errors.New(projectsUsage)}
	}
	var cf clientFlags
	fs := newClientFlagSet("projects trust", stderr, &cf)
	rest, err := parseArgs(fs, args[1:])
	if err != nil || len(rest) != 1 {
		return usageOr(err, "usage: foya projects trust PATH")
	}
	path, err := filepath.Abs(rest[0])
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
		var ps struct{ Projects []struct{ ID, Path string } }
		if err := c.do(ctx, `{ projects { id path } }`, nil, &ps); err != nil {
			return err
		}
		id := ""
		for _, p := range ps.Projects {
			if p.Path == path {
				id = p.ID
			}
		}
		if id == "" {
			var r struct{ CreateProject struct{ ID string } }
			if err := c.do(ctx, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": path}, &r); err != nil {
				return err
			}
			id = r.CreateProject.ID
		}
		var r struct {
			TrustProject struct {
				Path    string `json:"path"`
				Trusted bool   `json:"trusted"`
			}
		}
		if err := c.do(ctx, `mutation($id: ID!) { trustProject(id: $id) { path trusted } }`, map[string]any{"id": id}, &r); err != nil {
			return err
		}
		if cf.json {
			return printJSON(stdout, r.TrustProject)
		}
		fmt.Fprintf(stdout, "trusted %s\n", r.TrustProject.Path)
		return nil
	})
}

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/foya-dev/foya/plugins/mcphost"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// ---- mcp ----

const mcpUsage = `usage:
  foya mcp list [--json]
  foya mcp add NAME [--env K=V ...] [--timeout SECONDS] [--disabled] -- COMMAND [ARGS...]
  foya mcp add NAME --url URL [--header K=V ...] [--timeout SECONDS] [--disabled]
  foya mcp remove ID|NAME
  foya mcp restart ID|NAME
common flags: --addr 127.0.0.1:4777 --data-dir DIR --json
env and header values are stored in the kernel's mcp.json (0600) and never printed.`

const mcpFieldsCLI = `id name transport command args url envKeys headerKeys enabled status error protocolVersion timeoutSeconds tools { name description readOnly }`

type cliMCPServer struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	Transport       string   `json:"transport"`
	Command         *string  `json:"command"`
	Args            []string `json:"args"`
	URL             *string  `json:"url"`
	EnvKeys         []string `json:"envKeys"`
	HeaderKeys      []string `json:"headerKeys"`
	Enabled         bool     `json:"enabled"`
	Status          string   `json:"status"`
	Error           *string  `json:"error"`
	ProtocolVersion *string  `json:"protocolVersion"`
	TimeoutSeconds  int      `json:"timeoutSeconds"`
	Tools           []struct {
		Name        string  `json:"name"`
		Description *string `json:"description"`
		ReadOnly    bool    `json:"readOnly"`
	} `json:"tools"`
}

func mcpCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cmdutil.UsageError{Err: errors.New(mcpUsage)}
	}
	var cf clientFlags
	fs := newClientFlagSet("mcp "+args[0], stderr, &cf)
	switch args[0] {
	case "list", "ls":
		rest, err := parseArgs(fs, args[1:])
		if err != nil || len(rest) > 0 {
			return usageOr(err, "usage: foya mcp list [--json]")
		}
		return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
			servers, err := mcpServers(ctx, c)
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(stdout, servers)
			}
			return mcpTable(stdout, servers)
		})
	case "add":
		return mcpAdd(fs, &cf, args[1:], stdout, stderr)
	case "remove", "rm":
		rest, err := parseArgs(fs, args[1:])
		if err != nil || len(rest) != 1 {
			return usageOr(err, "usage: foya mcp remove ID|NAME")
		}
		return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
			s, err := resolveMCP(ctx, c, rest[0])
			if err != nil {
				return err
			}
			if err := c.do(ctx, `mutation($id: ID!) { deleteMcpServer(id: $id) }`, map[string]any{"id": s.ID}, nil); err != nil {
				return err
			}
			if cf.json {
				return printJSON(stdout, map[string]any{"deleted": s.ID})
			}
			fmt.Fprintf(stdout, "removed MCP server %s (%s)\n", s.Name, s.ID)
			return nil
		})
	case "restart":
		wait := fs.Duration("wait", 30*time.Second, "how long to wait for the server to leave STARTING (0: do not wait)")
		rest, err := parseArgs(fs, args[1:])
		if err != nil || len(rest) != 1 {
			return usageOr(err, "usage: foya mcp restart ID|NAME [--wait 30s]")
		}
		return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
			s, err := resolveMCP(ctx, c, rest[0])
			if err != nil {
				return err
			}
			var r struct{ RestartMcpServer cliMCPServer }
			if err := c.do(ctx, `mutation($id: ID!) { restartMcpServer(id: $id) { `+mcpFieldsCLI+` } }`, map[string]any{"id": s.ID}, &r); err != nil {
				return err
			}
			return mcpShow(ctx, c, cf, r.RestartMcpServer, *wait, stdout)
		})
	default:
		return cmdutil.UsageError{Err: fmt.Errorf("unknown subcommand %q\n%s", args[0], mcpUsage)}
	}
}

// kvFlag collects K=V pairs. Set never fails and never keeps a malformed
// value in an error message: the value may be a secret.
type kvFlag struct {
	name string
	kvs  []map[string]any
	bad  []string // keys (or "#n") of malformed entries
}

func (f *kvFlag) String() string { return "" }
func (f *kvFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		f.bad = append(f.bad, fmt.Sprintf("entry %d", len(f.kvs)+len(f.bad)+1))
		return nil
	}
	f.kvs = append(f.kvs, map[string]any{"key": strings.TrimSpace(k), "value": val})
	return nil
}

func mcpAdd(fs *flag.FlagSet, cf *clientFlags, args []string, stdout, stderr io.Writer) error {
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
	}
	env := &kvFlag{name: "env"}
	headers := &kvFlag{name: "header"}
	fs.Var(env, "env", "K=V environment variable of a STDIO server (repeatable; the value is stored, never printed)")
	fs.Var(headers, "header", "K=V header of an HTTP server (repeatable; the value is stored, never printed)")
	url := fs.String("url", "", "Streamable HTTP endpoint of an HTTP server")
	timeout := fs.Int("timeout", 0, "timeout of one tool call in seconds (default 60)")
	disabled := fs.Bool("disabled", false, "store the server without starting it")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the server to leave STARTING (0: do not wait)")
	rest, err := parseArgs(fs, args)
	if err != nil || len(rest) != 1 {
		return usageOr(err, "usage: foya mcp add NAME [--env K=V ...] -- COMMAND [ARGS...]\n       foya mcp add NAME --url URL [--header K=V ...]")
	}
	for _, f := range []*kvFlag{env, headers} {
		if len(f.bad) > 0 {
			return cmdutil.UsageError{Err: fmt.Errorf("--%s: %s is not KEY=VALUE", f.name, strings.Join(f.bad, ", "))}
		}
	}
	input := map[string]any{"name": rest[0]}
	switch {
	case *url != "" && len(command) > 0:
		return cmdutil.UsageError{Err: errors.New("mcp add: give either --url URL (HTTP) or -- COMMAND ARGS... (STDIO), not both")}
	case *url != "":
		if len(env.kvs) > 0 {
			return cmdutil.UsageError{Err: errors.New("mcp add: --env is for STDIO servers; an HTTP server takes --header")}
		}
		input["transport"], input["url"] = "HTTP", *url
		if len(headers.kvs) > 0 {
			input["headers"] = headers.kvs
		}
	case len(command) > 0:
		if len(headers.kvs) > 0 {
			return cmdutil.UsageError{Err: errors.New("mcp add: --header is for HTTP servers; a STDIO server takes --env")}
		}
		input["transport"], input["command"], input["args"] = "STDIO", command[0], command[1:]
		if len(env.kvs) > 0 {
			input["env"] = env.kvs
		}
	default:
		return cmdutil.UsageError{Err: errors.New("mcp add: give the server: -- COMMAND ARGS... (STDIO) or --url URL (HTTP)")}
	}
	if *timeout != 0 {
		input["timeoutSeconds"] = *timeout
	}
	if *disabled {
		input["enabled"] = false
	}
	return withKernel(*cf, stderr, func(ctx context.Context, c *gqlClient) error {
		var r struct{ CreateMcpServer cliMCPServer }
		if err := c.do(ctx, `mutation($in: McpServerInput!) { createMcpServer(input: $in) { `+mcpFieldsCLI+` } }`, map[string]any{"in": input}, &r); err != nil {
			return err
		}
		return mcpShow(ctx, c, *cf, r.CreateMcpServer, *wait, stdout)
	})
}

// mcpShow waits (up to wait) for the server to leave STARTING and prints it
// with its tools.
func mcpShow(ctx context.Context, c *gqlClient, cf clientFlags, s cliMCPServer, wait time.Duration, stdout io.Writer) error {
	deadline := time.Now().Add(wait)
	for s.Status == "STARTING" && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		servers, err := mcpServers(ctx, c)
		if err != nil {
			return err
		}
		for _, x := range servers {
			if x.ID == s.ID {
				s = x
			}
		}
	}
	if cf.json {
		return printJSON(stdout, s)
	}
	if err := mcpTable(stdout, []cliMCPServer{s}); err != nil {
		return err
	}
	if len(s.Tools) > 0 {
		fmt.Fprintln(stdout)
		rows := make([][]string, len(s.Tools))
		for i, t := range s.Tools {
			kind := "command (asks in ASK)"
			if t.ReadOnly {
				kind = "read"
			}
			desc := ""
			if t.Description != nil {
				desc = short(*t.Description, 70)
			}
			// The kernel's tool naming; long or colliding names are
			// shortened or suffixed by the kernel, which this listing does
			// not repeat.
			rows[i] = []string{"mcp__" + mcphost.SanitizeName(s.Name) + "__" + mcphost.SanitizeName(t.Name), kind, desc}
		}
		return table(stdout, "TOOL\tKIND\tDESCRIPTION", rows)
	}
	return nil
}

func mcpServers(ctx context.Context, c *gqlClient) ([]cliMCPServer, error) {
	var r struct{ McpServers []cliMCPServer }
	if err := c.do(ctx, `{ mcpServers { `+mcpFieldsCLI+` } }`, nil, &r); err != nil {
		return nil, err
	}
	return r.McpServers, nil
}

func resolveMCP(ctx context.Context, c *gqlClient, ref string) (cliMCPServer, error) {
	servers, err := mcpServers(ctx, c)
	if err != nil {
		return cliMCPServer{}, err
	}
	for _, s := range servers {
		if s.ID == ref || s.Name == ref {
			return s, nil
		}
	}
	return cliMCPServer{}, fmt.Errorf("no MCP server with id or name %q (see foya mcp list)", ref)
}

func mcpTable(w io.Writer, servers []cliMCPServer) error {
	rows := make([][]string, len(servers))
	for i, s := range servers {
		target := ""
		switch {
		case s.URL != nil:
			target = *s.URL
		case s.Command != nil:
			target = strings.Join(append([]string{*s.Command}, s.Args...), " ")
		}
		secrets := append(prefixAll("env:", s.EnvKeys), prefixAll("header:", s.HeaderKeys)...)
		status := s.Status
		if s.Error != nil {
			status += ": " + *s.Error
		}
		rows[i] = []string{s.Name, strings.ToLower(s.Transport), fmt.Sprint(len(s.Tools)), short(target, 50), strings.Join(secrets, ","), short(status, 80)}
	}
	return table(w, "NAME\tTRANSPORT\tTOOLS\tTARGET\tSECRETS (names)\tSTATUS", rows)
}

func prefixAll(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}

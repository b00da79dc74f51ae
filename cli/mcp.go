package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
	"github.com/foya-dev/foya/internal/mcpname"
)

var mcpGroup = group{
	name: "mcp",
	doc: `MCP servers as tool sources (docs/mcp.md). env and header values are stored
in the kernel's mcp.json (0600) and never printed.`,
	subs: []subcommand{
		{Command: cmdutil.Command{Name: "mcp list", Synopsis: "[--json]", Doc: "Lists the MCP servers with their status."},
			aliases: []string{"ls"}, max: 0, run: mcpList},
		{Command: cmdutil.Command{Name: "mcp add", Synopsis: "NAME [--env K=V ...] -- COMMAND [ARGS...]  |  NAME --url URL [--header K=V ...]",
			Doc: "Adds a STDIO server (the command after --) or a Streamable HTTP server (--url), and waits until it is ready."},
			min: 1, max: 1, run: mcpAdd},
		{Command: cmdutil.Command{Name: "mcp set", Synopsis: "ID|NAME [--url URL] [--header K=V ... | --no-headers]",
			Doc: `Changes an HTTP server's URL or headers (given headers replace all). Headers
are bound to the URL's origin: a --url of another scheme, host or port needs
--header (or --no-headers) again in the same command.`},
			min: 1, max: 1, run: mcpSet},
		{Command: cmdutil.Command{Name: "mcp remove", Synopsis: "ID|NAME", Doc: "Removes an MCP server."},
			aliases: []string{"rm"}, min: 1, max: 1, run: mcpRemove},
		{Command: cmdutil.Command{Name: "mcp restart", Synopsis: "ID|NAME [--wait 30s]", Doc: "Restarts an MCP server and waits until it is ready."},
			min: 1, max: 1, run: mcpRestart},
		{Command: cmdutil.Command{Name: "mcp login", Synopsis: "ID|NAME [--open] [--wait 10m]",
			Doc: `Signs in to an HTTP server that needs OAuth (status NEEDS_AUTH): prints the
authorization server's URL to open in a browser (--open gives it to xdg-open,
or open on macOS, as its only argument), then waits until the server is READY.
The browser comes back to the kernel's /mcp/oauth/callback; tokens stay in the
kernel, sealed.`},
			min: 1, max: 1, run: mcpLogin},
		{Command: cmdutil.Command{Name: "mcp logout", Synopsis: "ID|NAME",
			Doc: "Signs out of an HTTP server: revokes its tokens where the authorization server offers it (RFC 7009) and forgets them."},
			min: 1, max: 1, run: mcpLogout},
		{Command: cmdutil.Command{Name: "mcp disable", Synopsis: "ID|NAME --session ID", Doc: "Turns a server off for one session (and its sub-agents); other sessions keep it."},
			min: 1, max: 1, run: func(r *runner) error { return mcpSessionToggle(r, false) }},
		{Command: cmdutil.Command{Name: "mcp enable", Synopsis: "ID|NAME --session ID", Doc: "Turns a server turned off with mcp disable on again for that session."},
			min: 1, max: 1, run: func(r *runner) error { return mcpSessionToggle(r, true) }},
	},
}

func mcpCmd(args []string, stdout, stderr io.Writer) error {
	return mcpGroup.run(args, nil, stdout, stderr)
}

func mcpList(r *runner) error {
	if _, err := r.parse(); err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		servers, err := mcpServers(ctx, c)
		if err != nil {
			return err
		}
		if r.cf.json {
			return printJSON(r.stdout, servers)
		}
		return mcpTable(r.stdout, servers)
	})
}

func mcpRemove(r *runner) error {
	rest, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		s, err := resolveMCP(ctx, c, rest[0])
		if err != nil {
			return err
		}
		if _, err := client.DeleteMcpServer(ctx, c, s.Id); err != nil {
			return err
		}
		if r.cf.json {
			return printJSON(r.stdout, map[string]any{"deleted": s.Id})
		}
		fmt.Fprintf(r.stdout, "removed MCP server %s (%s)\n", s.Name, s.Id)
		return nil
	})
}

func mcpRestart(r *runner) error {
	wait := r.fs.Duration("wait", 30*time.Second, "how long to wait for the server to leave STARTING (0: do not wait)")
	rest, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		s, err := resolveMCP(ctx, c, rest[0])
		if err != nil {
			return err
		}
		resp, err := client.RestartMcpServer(ctx, c, s.Id)
		if err != nil {
			return err
		}
		return mcpShow(ctx, c, r.cf, resp.RestartMcpServer.McpServerFields, *wait, r.stdout)
	})
}

// kvFlag collects K=V pairs. Set never fails and never keeps a malformed
// value in an error message: the value may be a secret.
type kvFlag struct {
	name string
	kvs  []client.KeyValueInput
	bad  []string // keys (or "#n") of malformed entries
}

func (f *kvFlag) String() string { return "" }
func (f *kvFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		f.bad = append(f.bad, fmt.Sprintf("entry %d", len(f.kvs)+len(f.bad)+1))
		return nil
	}
	f.kvs = append(f.kvs, client.KeyValueInput{Key: strings.TrimSpace(k), Value: val})
	return nil
}

func mcpAdd(r *runner) error {
	var command []string
	if i := slices.Index(r.args, "--"); i >= 0 {
		r.args, command = r.args[:i], r.args[i+1:]
	}
	env := &kvFlag{name: "env"}
	headers := &kvFlag{name: "header"}
	fs := r.fs
	fs.Var(env, "env", "K=V environment variable of a STDIO server (repeatable; the value is stored, never printed)")
	fs.Var(headers, "header", "K=V header of an HTTP server (repeatable; the value is stored, never printed)")
	url := fs.String("url", "", "Streamable HTTP endpoint of an HTTP server")
	clientID := fs.String("oauth-client-id", "", "OAuth client id registered by hand with an HTTP server's authorization server (default: the kernel registers itself)")
	secretEnv := fs.String("oauth-client-secret-env", "", "name of an environment variable holding the secret of --oauth-client-id (never on the command line)")
	timeout := fs.Int("timeout", 0, "timeout of one tool call in seconds (default 60)")
	disabled := fs.Bool("disabled", false, "store the server without starting it")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the server to leave STARTING (0: do not wait)")
	rest, err := r.parse()
	if err != nil {
		return err
	}
	for _, f := range []*kvFlag{env, headers} {
		if len(f.bad) > 0 {
			return cmdutil.UsageError{Err: fmt.Errorf("--%s: %s is not KEY=VALUE", f.name, strings.Join(f.bad, ", "))}
		}
	}
	in := client.McpServerInput{Name: rest[0]}
	switch {
	case *url != "" && len(command) > 0:
		return cmdutil.UsageError{Err: errors.New("mcp add: give either --url URL (HTTP) or -- COMMAND ARGS... (STDIO), not both")}
	case *url != "":
		if len(env.kvs) > 0 {
			return cmdutil.UsageError{Err: errors.New("mcp add: --env is for STDIO servers; an HTTP server takes --header")}
		}
		in.Transport, in.Url, in.Headers = client.McpTransportHttp, url, headers.kvs
	case len(command) > 0:
		if len(headers.kvs) > 0 {
			return cmdutil.UsageError{Err: errors.New("mcp add: --header is for HTTP servers; a STDIO server takes --env")}
		}
		in.Transport, in.Command, in.Args, in.Env = client.McpTransportStdio, &command[0], append([]string{}, command[1:]...), env.kvs
	default:
		return cmdutil.UsageError{Err: errors.New("mcp add: give the server: -- COMMAND ARGS... (STDIO) or --url URL (HTTP)")}
	}
	if *timeout != 0 {
		in.TimeoutSeconds = timeout
	}
	if *clientID != "" {
		in.OauthClientId = clientID
	}
	if *secretEnv != "" {
		v, ok := os.LookupEnv(*secretEnv)
		if !ok || v == "" {
			return cmdutil.UsageError{Err: fmt.Errorf("--oauth-client-secret-env: $%s is not set", *secretEnv)}
		}
		in.OauthClientSecret = &v
	}
	if *disabled {
		in.Enabled = ptr(false)
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		resp, err := client.CreateMcpServer(ctx, c, in)
		if err != nil {
			return err
		}
		return mcpShow(ctx, c, r.cf, resp.CreateMcpServer.McpServerFields, *wait, r.stdout)
	})
}

// mcpShow waits (up to wait) for the server to leave STARTING and prints it
// with its tools.
func mcpShow(ctx context.Context, c *client.Client, cf clientFlags, s client.McpServerFields, wait time.Duration, stdout io.Writer) error {
	deadline := time.Now().Add(wait)
	for s.Status == client.McpStatusStarting && time.Now().Before(deadline) {
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
			if x.Id == s.Id {
				s = x
			}
		}
	}
	if cf.json {
		return printJSON(stdout, s)
	}
	if err := mcpTable(stdout, []client.McpServerFields{s}); err != nil {
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
			// The kernel's tool naming; long or colliding names are
			// shortened or suffixed by the kernel, which this listing does
			// not repeat.
			rows[i] = []string{"mcp__" + mcpname.Sanitize(s.Name) + "__" + mcpname.Sanitize(t.Name), kind, short(deref(t.Description), 70)}
		}
		return table(stdout, "TOOL\tKIND\tDESCRIPTION", rows)
	}
	return nil
}

func mcpServers(ctx context.Context, c *client.Client) ([]client.McpServerFields, error) {
	resp, err := client.McpServers(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]client.McpServerFields, len(resp.McpServers))
	for i, s := range resp.McpServers {
		out[i] = s.McpServerFields
	}
	return out, nil
}

func resolveMCP(ctx context.Context, c *client.Client, ref string) (client.McpServerFields, error) {
	servers, err := mcpServers(ctx, c)
	if err != nil {
		return client.McpServerFields{}, err
	}
	for _, s := range servers {
		if s.Id == ref || s.Name == ref {
			return s, nil
		}
	}
	return client.McpServerFields{}, &client.Error{Message: fmt.Sprintf("no MCP server with id or name %q (see foya mcp list)", ref), Code: "NOT_FOUND"}
}

func mcpTable(w io.Writer, servers []client.McpServerFields) error {
	rows := make([][]string, len(servers))
	for i, s := range servers {
		target := ""
		switch {
		case s.Url != nil:
			target = *s.Url
		case s.Command != nil:
			target = strings.Join(append([]string{*s.Command}, s.Args...), " ")
		}
		secrets := append(prefixAll("env:", s.EnvKeys), prefixAll("header:", s.HeaderKeys)...)
		status := string(s.Status)
		if s.Status == client.McpStatusNeedsAuth {
			status += " (foya mcp login " + s.Name + ")"
		}
		if s.Error != nil {
			status += ": " + *s.Error
		}
		rows[i] = []string{s.Name, strings.ToLower(string(s.Transport)), fmt.Sprint(len(s.Tools)), short(target, 50), strings.Join(secrets, ","), short(status, 80)}
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

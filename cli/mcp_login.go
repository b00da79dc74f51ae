package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/foya-dev/foya/client"
)

// mcpLogin is `foya mcp login`: the sign-in URL, optionally opened, then a
// wait for READY.
func mcpLogin(r *runner) error {
	open := r.fs.Bool("open", false, "also open the URL in a browser (xdg-open, or open on macOS)")
	wait := r.fs.Duration("wait", 10*time.Minute, "how long to wait for the sign-in to finish (0: print the URL and return)")
	rest, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		s, err := resolveMCP(ctx, c, rest[0])
		if err != nil {
			return err
		}
		resp, err := client.LoginMcpServer(ctx, c, s.Id)
		if err != nil {
			return err
		}
		authURL := resp.LoginMcpServer
		if r.cf.json && *wait == 0 {
			return printJSON(r.stdout, map[string]any{"serverId": s.Id, "authUrl": authURL})
		}
		if !r.cf.json {
			fmt.Fprintf(r.stdout, "Open this URL to sign in to MCP server %s:\n%s\n", s.Name, authURL)
		}
		if *open {
			openBrowser(authURL, r.stderr)
		}
		if *wait == 0 {
			return nil
		}
		if !r.cf.json {
			fmt.Fprintln(r.stdout, "Waiting for the sign-in…")
		}
		deadline := time.Now().Add(*wait)
		for {
			servers, err := mcpServers(ctx, c)
			if err != nil {
				return err
			}
			for _, x := range servers {
				if x.Id == s.Id {
					s = x
				}
			}
			if s.Status == client.McpStatusReady {
				if r.cf.json {
					return printJSON(r.stdout, s)
				}
				fmt.Fprintf(r.stdout, "signed in: MCP server %s is READY with %d tools\n", s.Name, len(s.Tools))
				return nil
			}
			if time.Now().After(deadline) {
				return &client.Error{Message: fmt.Sprintf("MCP server %s is still %s after %s; run foya mcp login %s again", s.Name, s.Status, *wait, s.Name), Code: "UNAVAILABLE"}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
	})
}

// openBrowser gives url to xdg-open (open on macOS) as its only argument,
// with an environment that holds none of the kernel's credentials; what
// goes wrong is said on stderr.
func openBrowser(url string, stderr io.Writer) {
	if err := startBrowser(url, stderr); err != nil {
		fmt.Fprintf(stderr, "%v: open the URL above in a browser\n", err)
	}
}

// startBrowser starts the opener on url (see openBrowser); the opener's own
// errors go to stderr.
func startBrowser(url string, stderr io.Writer) error {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		return fmt.Errorf("%s is not installed", opener)
	}
	cmd := exec.Command(path, url)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FOYA_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("could not open the browser with %s: %w", opener, err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// mcpLogout is `foya mcp logout`.
func mcpLogout(r *runner) error {
	rest, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		s, err := resolveMCP(ctx, c, rest[0])
		if err != nil {
			return err
		}
		resp, err := client.LogoutMcpServer(ctx, c, s.Id)
		if err != nil {
			return err
		}
		if r.cf.json {
			return printJSON(r.stdout, resp.LogoutMcpServer.McpServerFields)
		}
		fmt.Fprintf(r.stdout, "signed out of MCP server %s: its tokens are revoked where offered and forgotten\n", s.Name)
		return nil
	})
}

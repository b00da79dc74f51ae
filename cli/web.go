package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/foya-dev/foya/edge/access"
	"github.com/foya-dev/foya/internal/cmdutil"
)

var webCommand = cmdutil.Command{
	Name:     "web",
	Synopsis: "[--open] [--addr A] [--data-dir DIR] [--token-file PATH]",
	Doc: `Prints the link that opens Foya web on a kernel with its token:
http://127.0.0.1:4777/#token=…. The token is in the fragment (after #),
which a browser never sends to a server; the page keeps it in the tab's
sessionStorage and removes it from the address bar. The token comes from
$FOYA_TOKEN, else --token-file, else <data-dir>/auth-token. With --open the
link is also given to xdg-open (open on macOS) when it is installed; note
that another user of this machine can see a command line while it runs.
Nothing is sent to the kernel.`,
}

// webCmd is `foya web`.
func webCmd(args []string, stdout, stderr io.Writer) error {
	fset := cmdutil.NewFlagSet(webCommand, stdout)
	open := fset.Bool("open", false, "also open the link in a browser (xdg-open, or open on macOS)")
	addr := fset.String("addr", kernelAddr(), "address of the kernel: host:port, or http(s)://host:port (default $FOYA_ADDR, else "+defaultKernelAddr+")")
	dataDir := fset.String("data-dir", cmdutil.DefaultDataDir(), "data directory of the kernel (its auth-token file)")
	tokenFile := fset.String("token-file", "", "file holding the kernel's bearer token (default: $FOYA_TOKEN, else <data-dir>/auth-token)")
	rest, err := cmdutil.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cmdutil.Usagef("usage: foya web %s", webCommand.Synopsis)
	}
	scheme, hostport, err := webAddr(*addr)
	if err != nil {
		return err
	}
	tok, err := webToken(*tokenFile, *dataDir)
	if err != nil {
		return err
	}
	link := access.WebLink(scheme, hostport, tok)
	fmt.Fprintln(stdout, link)
	if *open {
		opener := "xdg-open"
		if runtime.GOOS == "darwin" {
			opener = "open"
		}
		path, err := exec.LookPath(opener)
		if err != nil {
			fmt.Fprintf(stderr, "%s is not installed: open the link above in a browser\n", opener)
			return nil
		}
		cmd := exec.Command(path, link)
		cmd.Stdout, cmd.Stderr = io.Discard, stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("open the browser with %s: %w", opener, err)
		}
		go cmd.Wait()
	}
	return nil
}

// webAddr splits --addr into scheme and host:port. A kernel listening on
// every address (0.0.0.0, ::) is reached through loopback.
func webAddr(addr string) (scheme, hostport string, err error) {
	scheme = "http"
	if rest, ok := strings.CutPrefix(addr, "https://"); ok {
		scheme, addr = "https", rest
	} else if rest, ok := strings.CutPrefix(addr, "http://"); ok {
		addr = rest
	}
	addr = strings.TrimSuffix(addr, "/")
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", "", cmdutil.Usagef("--addr %q: want host:port, e.g. 127.0.0.1:4777", addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return scheme, net.JoinHostPort(host, port), nil
}

// webToken is $FOYA_TOKEN, else the token in tokenFile, else the data
// directory's auth-token file. Unlike the client commands it reads the data
// directory's token whatever the address: it only prints it.
func webToken(tokenFile, dataDir string) (string, error) {
	if t := strings.TrimSpace(os.Getenv("FOYA_TOKEN")); t != "" {
		return t, nil
	}
	path := tokenFile
	if path == "" {
		path = filepath.Join(dataDir, access.TokenFileName)
	}
	tok, err := access.ReadToken(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no token at %s: start the kernel once (foya serve creates it), or give --token-file", path)
	}
	return tok, err
}

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

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
$FOYA_TOKEN, else --token-file, else <data-dir>/auth-token. With --open a
browser opens it: the link is written to a private HTML file (0600, under
$XDG_RUNTIME_DIR or the user's cache directory) that forwards the browser
to it, $BROWSER or xdg-open (open on macOS) gets the file's path, never the
token, and the file is removed a few seconds later. Nothing is sent to the
kernel.`,
}

// webCmd is `foya web`.
func webCmd(args []string, stdout, stderr io.Writer) error {
	fset := cmdutil.NewFlagSet(webCommand, stdout)
	open := fset.Bool("open", false, "also open the link in a browser ($BROWSER, else xdg-open, or open on macOS), through a private file: the token is on no command line")
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
		return openWebLink(link, stderr)
	}
	return nil
}

// webLinkGrace is how long the link file stays after the opener has
// handed it to the browser (a variable for tests).
var webLinkGrace = 3 * time.Second

// webLinkMaxWait bounds the wait for the opener (a browser started
// directly, as $BROWSER may name one, runs until it is closed).
var webLinkMaxWait = 15 * time.Second

// openWebLink opens link in a browser without putting the token on any
// command line or in any environment: the link goes into an HTML file
// (0600, in a fresh 0700 directory under $XDG_RUNTIME_DIR or the user's
// cache directory) that sends the browser on to it, the opener gets the
// file's path, and the file is removed a few seconds later. The opener is
// $BROWSER (its first entry) when set, else xdg-open (open on macOS).
func openWebLink(link string, stderr io.Writer) error {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	if b := strings.TrimSpace(strings.Split(os.Getenv("BROWSER"), ":")[0]); b != "" {
		opener = b
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		fmt.Fprintf(stderr, "%s is not installed: open the link above in a browser\n", opener)
		return nil
	}
	dir, file, err := writeWebLinkFile(link)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(path, file)
	// The opener's own output goes to the terminal when there is one; it
	// never shares a writer with this command (a buffer in tests).
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if f, ok := stderr.(*os.File); ok {
		cmd.Stderr = f
	}
	cmd.Env = withoutEnv(os.Environ(), "FOYA_TOKEN")
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("open the browser with %s: %w", opener, err)
	}
	fmt.Fprintf(stderr, "opening it with %s (the link file is removed in a few seconds)\n", filepath.Base(path))
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case <-exited:
		time.Sleep(webLinkGrace)
	case <-time.After(webLinkMaxWait):
	}
	return nil
}

// writeWebLinkFile writes the HTML file that forwards a browser to link
// and returns its private directory and path.
func writeWebLinkFile(link string) (dir, file string, err error) {
	base := os.Getenv("XDG_RUNTIME_DIR")
	if fi, err := os.Stat(base); base == "" || err != nil || !fi.IsDir() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		base = filepath.Join(cache, "foya")
		if err := os.MkdirAll(base, 0o700); err != nil {
			return "", "", fmt.Errorf("create %s for the link file: %w", base, err)
		}
	}
	dir, err = os.MkdirTemp(base, "web-")
	if err != nil {
		return "", "", fmt.Errorf("create the link file's directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	js, _ := json.Marshal(link)
	page := `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
		`<meta http-equiv="refresh" content="0;url=` + html.EscapeString(link) + `"><title>Foya</title></head>` +
		`<body><p><a href="` + html.EscapeString(link) + `">Open Foya</a></p>` +
		`<script>location.replace(` + string(js) + `)</script></body></html>` + "\n"
	file = filepath.Join(dir, "foya-web.html")
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("create the link file: %w", err)
	}
	_, err = f.WriteString(page)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("write the link file: %w", err)
	}
	return dir, file, nil
}

// withoutEnv is env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
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

package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/foya-dev/foya/acp"
	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/edge/access"

	"github.com/foya-dev/foya/internal/cmdutil"
)

var acpCommand = cmdutil.Command{
	Name:     "acp",
	Synopsis: "[--addr A] [--data-dir DIR] [--token-file PATH] [--log-level L]",
	Doc: `Speaks the Agent Client Protocol (version 1) on stdin/stdout so that an ACP
editor (Zed, JetBrains, Neovim plugins, …) can chat with Foya sessions. It
connects to the kernel at --addr or, when none answers, starts one for as
long as it runs. Logs go to stderr. See docs/acp.md.`,
}

// acpCmd is `foya acp`.
func acpCmd(cfg Config, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := cmdutil.NewFlagSet(acpCommand, stdout)
	addr := fs.String("addr", kernelAddr(), addrUsage)
	dataDir := fs.String("data-dir", cmdutil.DefaultDataDir(), "data directory of a kernel started for this command")
	tokenFile := fs.String("token-file", "", "file holding the kernel's bearer token (default: $FOYA_TOKEN, else <data-dir>/auth-token for a loopback --addr)")
	level := fs.String("log-level", "info", "stderr log level: debug, info, warn or error")
	rest, err := cmdutil.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cmdutil.UsageError{Err: fmt.Errorf("acp takes no arguments, got %q", rest)}
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return cmdutil.UsageError{Err: fmt.Errorf("--log-level %q: use debug, info, warn or error", *level)}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	link, err := connectOrSpawn(ctx, *addr, *dataDir, *tokenFile, stderr)
	if err != nil {
		return err
	}
	defer link.Close()
	return acp.Serve(ctx, link.Client, stdin, stdout, acp.Options{Version: cfg.Version, Log: log,
		OpenURL:         func(url string) error { return startBrowser(url, stderr) },
		TerminalCommand: followCommand(link, *dataDir, *tokenFile, log)})
}

// followCommand is acp.Options.TerminalCommand: `foya terminals follow`
// with this executable, the kernel's address and where its token is (the
// data directory, --token-file), never the token itself. nil when the
// executable cannot be found.
func followCommand(link *kernelLink, dataDir, tokenFile string, log *slog.Logger) func(sid, tid string) (string, []string) {
	exe, err := os.Executable()
	if err != nil {
		log.Warn("acp: find the foya executable; client terminals will not mirror kernel terminals", "err", err)
		return nil
	}
	addr := strings.TrimSuffix(link.Endpoint(), "/graphql")
	base := []string{"--addr", addr}
	if link.spawned != nil {
		dataDir = link.spawned.dataDir
	}
	if !tokenFindable(addr, dataDir, tokenFile) {
		log.Info("acp: the kernel's token is only in $FOYA_TOKEN, which a client terminal may not have; kernel terminals are shown as text")
		return nil
	}
	if abs, err := filepath.Abs(dataDir); err == nil && dataDir != "" {
		base = append(base, "--data-dir", abs)
	}
	if tokenFile != "" {
		if abs, err := filepath.Abs(tokenFile); err == nil {
			base = append(base, "--token-file", abs)
		}
	}
	return func(sid, tid string) (string, []string) {
		return exe, append([]string{"terminals", "follow", sid, tid}, base...)
	}
}

// tokenFindable reports whether foya terminals follow, run by the client
// without this process's environment, finds the token this process uses:
// none is needed, or it is in a file (--token-file, or the data
// directory's for a loopback address). A token given only as $FOYA_TOKEN
// is not passed on.
func tokenFindable(addr, dataDir, tokenFile string) bool {
	if strings.TrimSpace(os.Getenv("FOYA_TOKEN")) == "" || tokenFile != "" {
		return true
	}
	if !access.IsLoopbackName(client.New(addr, "").Host()) {
		return false
	}
	_, err := access.ReadToken(filepath.Join(dataDir, access.TokenFileName))
	return err == nil
}

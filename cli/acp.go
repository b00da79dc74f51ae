package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"os/signal"
	"syscall"

	"github.com/foya-dev/foya/acp"

	"github.com/foya-dev/foya/internal/cmdutil"
)

const acpUsage = `Usage: foya acp [--addr A] [--data-dir DIR] [--token-file PATH] [--log-level L]

Speaks the Agent Client Protocol (version 1) on stdin/stdout so that an ACP
editor (Zed, JetBrains, Neovim plugins, …) can chat with Foya sessions. It
connects to the kernel at --addr or, when none answers, starts one for as
long as it runs. Logs go to stderr. See docs/acp.md.

Flags:
`

// acpCmd is `foya acp`.
func acpCmd(cfg Config, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, acpUsage); fs.PrintDefaults() }
	addr := fs.String("addr", defaultKernelAddr, "address of a running kernel; when none answers, one is started for this command")
	dataDir := fs.String("data-dir", cmdutil.DefaultDataDir(), "data directory of a kernel started for this command")
	tokenFile := fs.String("token-file", "", "file holding the kernel's bearer token (default: $FOYA_TOKEN, else <data-dir>/auth-token for a loopback --addr)")
	level := fs.String("log-level", "info", "stderr log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return cmdutil.UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return cmdutil.UsageError{Err: fmt.Errorf("acp takes no arguments, got %q", fs.Args())}
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
	return acp.Serve(ctx, acpKernel{link.gqlClient}, stdin, stdout, acp.Options{Version: cfg.Version, Log: log})
}

// GraphQLCode is the error's extensions.code (for the acp package).
func (e *gqlError) GraphQLCode() string { return e.Code }

// acpKernel adapts the CLI's GraphQL client to acp.Kernel.
type acpKernel struct{ c *gqlClient }

func (k acpKernel) Do(ctx context.Context, query string, vars map[string]any, out any) error {
	return k.c.do(ctx, query, vars, out)
}

func (k acpKernel) Subscribe(ctx context.Context, query string, vars map[string]any) (acp.Stream, error) {
	s, err := k.c.subscribe(ctx, query, vars)
	if err != nil {
		return nil, err
	}
	return acpStream{s}, nil
}

type acpStream struct{ s *subscription }

func (s acpStream) Events() <-chan json.RawMessage { return s.s.Events }
func (s acpStream) Err() error                     { return s.s.Err() }
func (s acpStream) Close()                         { s.s.Close() }

// Upload sends a GraphQL multipart request (uploadAttachment).
func (k acpKernel) Upload(ctx context.Context, name, mediaType string, data []byte) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{
		"query":     `mutation($f: Upload!) { uploadAttachment(file: $f) { id } }`,
		"variables": map[string]any{"f": nil},
	})
	_ = mw.WriteField("operations", string(ops))
	_ = mw.WriteField("map", `{"0":["variables.f"]}`)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", multipart.FileContentDisposition("0", name))
	if mediaType != "" {
		h.Set("Content-Type", mediaType)
	}
	part, err := mw.CreatePart(h)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", name, err)
	}
	if _, err := part.Write(data); err != nil {
		return "", fmt.Errorf("upload %s: %w", name, err)
	}
	if err := mw.Close(); err != nil {
		return "", fmt.Errorf("upload %s: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, k.c.endpoint(), &body)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", name, err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if k.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+k.c.token)
	}
	resp, err := k.c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("upload %s to kernel at %s: %w", name, k.c.addr, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", name, err)
	}
	var r struct {
		Data *struct {
			UploadAttachment struct{ ID string }
		}
		Errors []wireError
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("upload %s: kernel answered %s, not GraphQL: %.120q", name, resp.Status, raw)
	}
	if err := toGQLError(r.Errors); err != nil {
		return "", err
	}
	if r.Data == nil {
		return "", fmt.Errorf("upload %s: no data in the kernel's answer", name)
	}
	return r.Data.UploadAttachment.ID, nil
}

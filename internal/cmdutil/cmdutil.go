// Package cmdutil holds what the foya command's two halves share: the
// composition root (package main: serve, token, rebuild-projections) and
// the client commands (package cli). Both import it; it imports neither.
package cmdutil

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// UsageError is bad usage: the command exits 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// ErrHelpShown reports that --help printed the usage: the command exits 0.
var ErrHelpShown = errors.New("help shown")

// Exit prints err (when it is one) on stderr and returns the exit code:
// 0 for nil and ErrHelpShown, 2 for a UsageError, 1 otherwise. Messages
// from the kernel may carry text from elsewhere, so they are neutralized.
func Exit(err error, stderr io.Writer) int {
	var ue UsageError
	switch {
	case err == nil, errors.Is(err, ErrHelpShown):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "foya: %s\n", Neutralize(err.Error()))
		return 2
	default:
		fmt.Fprintf(stderr, "foya: %s\n", Neutralize(err.Error()))
		return 1
	}
}

// Command describes one command or subcommand for its --help text, which
// has one format everywhere:
//
//	Usage: foya NAME SYNOPSIS
//
//	DESCRIPTION
//
//	Flags:
//	  -flag ...
type Command struct {
	Name     string // "connections add"
	Synopsis string // "--name N --base-url URL [flags]"
	Doc      string // optional paragraphs
}

// NewFlagSet is a flag set for c whose parse errors are returned, not
// printed, and whose --help goes to stdout (see Parse).
func NewFlagSet(c Command, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { PrintUsage(stdout, c, fs) }
	return fs
}

// PrintUsage writes c's usage and fs's flags (fs may be nil).
func PrintUsage(w io.Writer, c Command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: foya %s", c.Name)
	if c.Synopsis != "" {
		fmt.Fprintf(w, " %s", c.Synopsis)
	}
	fmt.Fprintln(w)
	if c.Doc != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.Doc, "\n"))
	}
	if fs != nil {
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nFlags:\n")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
}

// Parse parses args (flags may follow positional arguments) and returns the
// positional ones. --help/-h prints the usage on stdout and returns
// ErrHelpShown; a bad flag is a UsageError that points at --help.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	if err := fs.Parse(Interleaved(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelpShown
		}
		return nil, UsageError{fmt.Errorf("%w (see foya %s --help)", err, fs.Name())}
	}
	return fs.Args(), nil
}

// IsHelp reports whether arg asks for help.
func IsHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// Interleaved lets flags follow positional arguments (foya exec "hi" --json).
func Interleaved(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				continue
			}
			if i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		}
	}
	return append(append(flags, "--"), pos...)
}

// ListFlag is a repeatable, comma-separable flag.
type ListFlag []string

func (l *ListFlag) String() string { return strings.Join(*l, ",") }
func (l *ListFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// DefaultDataDir is $XDG_DATA_HOME/foya, else ~/.local/share/foya.
func DefaultDataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "foya")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "foya")
	}
	return filepath.Join(home, ".local", "share", "foya")
}

// PrepareDataDir creates the private data directory (0700).
func PrepareDataDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data dir %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("create data dir %s: %w", abs, err)
	}
	if err := os.Chmod(abs, 0o700); err != nil {
		return "", fmt.Errorf("protect data dir %s: %w", abs, err)
	}
	return abs, nil
}

// Version is the version the binary reports: override when set (from
// -ldflags "-X main.version=…"), else the module or VCS version, else "dev".
func Version(override string) string {
	if override != "" {
		return override
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	if v == "" || v == "(devel)" {
		return "dev"
	}
	return v
}

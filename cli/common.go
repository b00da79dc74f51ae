package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// clientFlags are the flags every management command shares.
type clientFlags struct {
	addr, dataDir, tokenFile string
	json                     bool
}

func addClientFlags(fs *flag.FlagSet, cf *clientFlags, json bool) {
	fs.StringVar(&cf.addr, "addr", kernelAddr(), addrUsage)
	fs.StringVar(&cf.dataDir, "data-dir", cmdutil.DefaultDataDir(), "data directory of a kernel started for this command")
	fs.StringVar(&cf.tokenFile, "token-file", "", "file holding the kernel's bearer token (default: $FOYA_TOKEN, else <data-dir>/auth-token for a loopback --addr)")
	if json {
		fs.BoolVar(&cf.json, "json", false, "print JSON instead of a table")
	}
}

// subcommand is one command of a group (connections add, sessions rm…).
type subcommand struct {
	cmdutil.Command
	aliases []string
	noJSON  bool // no --json flag
	// min and max bound the positional arguments (max -1: any number).
	min, max int
	// run defines the subcommand's flags on r.fs, calls r.parse and runs.
	run func(r *runner) error
}

// runner is what a subcommand runs with.
type runner struct {
	sub    subcommand
	args   []string
	fs     *flag.FlagSet
	cf     clientFlags
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// parse adds the shared client flags, parses the arguments and checks their
// number; it returns the positional ones.
func (r *runner) parse() ([]string, error) {
	addClientFlags(r.fs, &r.cf, !r.sub.noJSON)
	rest, err := cmdutil.Parse(r.fs, r.args)
	if err != nil {
		return nil, err
	}
	if len(rest) < r.sub.min || (r.sub.max >= 0 && len(rest) > r.sub.max) {
		return nil, cmdutil.UsageError{Err: fmt.Errorf("usage: foya %s %s (see foya %s --help)", r.sub.Name, r.sub.Synopsis, r.sub.Name)}
	}
	return rest, nil
}

// isSet reports whether flag name was given.
func (r *runner) isSet(name string) bool {
	set := false
	r.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func (r *runner) withKernel(fn func(ctx context.Context, c *client.Client) error) error {
	return withKernel(r.cf, r.stderr, fn)
}

// group is a command with subcommands (foya connections …).
type group struct {
	name string
	doc  string
	subs []subcommand
}

// usage is the group's --help text.
func (g group) usage(w io.Writer) {
	var b strings.Builder
	if g.doc != "" {
		b.WriteString(g.doc + "\n\n")
	}
	b.WriteString("Commands:\n")
	for _, s := range g.subs {
		fmt.Fprintf(&b, "  %s %s\n      %s\n", strings.TrimPrefix(s.Name, g.name+" "), s.Synopsis, firstSentence(s.Doc))
	}
	fmt.Fprintf(&b, "\nRun 'foya %s COMMAND --help' for a command's flags.", g.name)
	cmdutil.PrintUsage(w, cmdutil.Command{Name: g.name, Synopsis: "COMMAND [flags]", Doc: b.String()}, nil)
}

// firstSentence is the first sentence of a (wrapped) paragraph.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// run dispatches args to a subcommand. No subcommand is bad usage (exit 2,
// usage on stderr); --help, -h and help print the usage on stdout (exit 0);
// "help SUB" is "SUB --help".
func (g group) run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		g.usage(stderr)
		return cmdutil.UsageError{Err: fmt.Errorf("%s needs a command", g.name)}
	}
	if cmdutil.IsHelp(args[0]) {
		if len(args) > 1 {
			return g.run([]string{args[1], "--help"}, stdin, stdout, stderr)
		}
		g.usage(stdout)
		return cmdutil.ErrHelpShown
	}
	for _, s := range g.subs {
		if s.Name == g.name+" "+args[0] || containsStr(s.aliases, args[0]) {
			return s.exec(args[1:], stdin, stdout, stderr)
		}
	}
	return cmdutil.UsageError{Err: fmt.Errorf("unknown command %q (see foya %s --help)", g.name+" "+args[0], g.name)}
}

func (s subcommand) exec(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	r := &runner{sub: s, args: args, stdin: stdin, stdout: stdout, stderr: stderr}
	r.fs = cmdutil.NewFlagSet(s.Command, stdout)
	return s.run(r)
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// withKernel connects (or spawns), runs fn and stops a spawned kernel.
func withKernel(cf clientFlags, stderr io.Writer, fn func(ctx context.Context, c *client.Client) error) error {
	ctx := context.Background()
	link, err := connectOrSpawnQuiet(ctx, cf, stderr)
	if err != nil {
		return err
	}
	defer link.Close()
	return fn(ctx, link.Client)
}

// connectOrSpawnQuiet is connectOrSpawn that mentions only a started kernel:
// client commands are often piped, and stay quiet about the usual case.
func connectOrSpawnQuiet(ctx context.Context, cf clientFlags, stderr io.Writer) (*kernelLink, error) {
	var buf strings.Builder
	link, err := connectOrSpawn(ctx, cf.addr, cf.dataDir, cf.tokenFile, &buf)
	if link != nil && link.spawned != nil {
		fmt.Fprint(stderr, buf.String())
	}
	return link, err
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

func table(w io.Writer, header string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			// One line per row: a newline or tab in a title would break the table.
			cells[i] = strings.NewReplacer("\n", " ", "\t", " ").Replace(cmdutil.Neutralize(c))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// schemaCmd prints the GraphQL schema (SDL) the binary was built with.
func schemaCmd(cfg Config, args []string, stdout io.Writer) error {
	c := cmdutil.Command{Name: "schema", Synopsis: "[--json]", Doc: "Prints the GraphQL schema (SDL) this binary was built with."}
	fs := cmdutil.NewFlagSet(c, stdout)
	asJSON := fs.Bool("json", false, `print JSON: {"schema": "<SDL>"}`)
	rest, err := cmdutil.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cmdutil.UsageError{Err: errors.New("usage: foya schema [--json]")}
	}
	if *asJSON {
		return printJSON(stdout, map[string]string{"schema": cfg.Schema})
	}
	_, err = io.WriteString(stdout, cfg.Schema)
	return err
}

func optInt(v *int) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprint(*v)
}

func optBool(v *bool) string {
	switch {
	case v == nil:
		return "?"
	case *v:
		return "yes"
	default:
		return "no"
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ptr[T any](v T) *T { return &v }

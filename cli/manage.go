package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// clientFlags are the flags every management command shares.
type clientFlags struct {
	addr, dataDir, tokenFile string
	json                     bool
}

func newClientFlagSet(name string, stderr io.Writer, cf *clientFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cf.addr, "addr", defaultKernelAddr, "address of a running kernel; when none answers, one is started for this command")
	fs.StringVar(&cf.dataDir, "data-dir", cmdutil.DefaultDataDir(), "data directory of a kernel started for this command")
	fs.StringVar(&cf.tokenFile, "token-file", "", "file holding the kernel's bearer token (default: $FOYA_TOKEN, else <data-dir>/auth-token for a loopback --addr)")
	fs.BoolVar(&cf.json, "json", false, "print JSON instead of a table")
	return fs
}

// withKernel connects (or spawns), runs fn and stops a spawned kernel.
func withKernel(cf clientFlags, stderr io.Writer, fn func(ctx context.Context, c *gqlClient) error) error {
	ctx := context.Background()
	link, err := connectOrSpawnQuiet(ctx, cf, stderr)
	if err != nil {
		return err
	}
	defer link.Close()
	return fn(ctx, link.gqlClient)
}

// connectOrSpawnQuiet is connectOrSpawn that mentions only a started kernel:
// management commands are often piped, and stay quiet about the usual case.
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

// parseArgs parses flags that may come before or after positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	if err := fs.Parse(cmdutil.Interleaved(fs, args)); err != nil {
		return nil, cmdutil.UsageError{Err: err}
	}
	return fs.Args(), nil
}

// schemaCmd prints the GraphQL schema (SDL) the binary was built with.
func schemaCmd(cfg Config, args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return cmdutil.UsageError{Err: errors.New("usage: foya schema")}
	}
	_, err := io.WriteString(stdout, cfg.Schema)
	return err
}

// ---- connections ----

const connectionFields = `id name type providerKind baseUrl authKind apiKeyConfigured order
	models { id capabilities { contextWindow toolCalling imageInput } }`

type cliConnection struct {
	ID               string     `json:"id"`
	Name             string     `json:"name"`
	Type             string     `json:"type"`
	ProviderKind     string     `json:"providerKind"`
	BaseURL          string     `json:"baseUrl"`
	AuthKind         string     `json:"authKind"`
	APIKeyConfigured bool       `json:"apiKeyConfigured"`
	Order            int        `json:"order"`
	Models           []cliModel `json:"models"`
}

type cliModel struct {
	ID           string `json:"id"`
	Capabilities struct {
		ContextWindow *int  `json:"contextWindow"`
		ToolCalling   *bool `json:"toolCalling"`
		ImageInput    *bool `json:"imageInput"`
	} `json:"capabilities"`
}

const connectionsUsage = `usage:
  foya connections list [--json]
  foya connections add --name N --base-url URL [--api-key-env NAME | --api-key-stdin] [--model ID ...] [--provider-kind openai] [--type language]
  foya connections remove ID|NAME
  foya connections models ID|NAME      (asks the provider for its model list and stores it)
common flags: --addr 127.0.0.1:4777 --data-dir DIR --token-file PATH --json`

func connectionsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cmdutil.UsageError{Err: errors.New(connectionsUsage)}
	}
	var cf clientFlags
	fs := newClientFlagSet("connections "+args[0], stderr, &cf)
	switch args[0] {
	case "list", "ls":
		rest, err := parseArgs(fs, args[1:])
		if err != nil || len(rest) > 0 {
			return usageOr(err, "usage: foya connections list [--json]")
		}
		return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
			var r struct{ Connections []cliConnection }
			if err := c.do(ctx, `{ connections { `+connectionFields+` } }`, nil, &r); err != nil {
				return err
			}
			if cf.json {
				return printJSON(stdout, r.Connections)
			}
			rows := make([][]string, len(r.Connections))
			for i, cn := range r.Connections {
				rows[i] = connectionRow(cn)
			}
			return table(stdout, "ID\tNAME\tTYPE\tPROVIDER\tBASE URL\tKEY\tMODELS", rows)
		})
	case "add":
		return connectionsAdd(fs, &cf, args[1:], stdin, stdout, stderr)
	case "remove", "rm":
		rest, err := parseArgs(fs, args[1:])
		if err != nil || len(rest) != 1 {
			return usageOr(err, "usage: foya connections remove ID|NAME")
		}
		return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
			id, err := resolveConnection(ctx, c, rest[0])
			if err != nil {
				return err
			}
			if err := c.do(ctx, `mutation($id: ID!) { deleteConnection(id: $id) }`, map[string]any{"id": id}, nil); err != nil {
				return err
			}
			if cf.json {
				return printJSON(stdout, map[string]any{"deleted": id})
			}
			fmt.Fprintf(stdout, "removed connection %s\n", id)
			return nil
		})
	case "models":
		rest, err := parseArgs(fs, args[1:])
		if err != nil || len(rest) != 1 {
			return usageOr(err, "usage: foya connections models ID|NAME")
		}
		return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
			id, err := resolveConnection(ctx, c, rest[0])
			if err != nil {
				return err
			}
			var r struct{ RefreshModels cliConnection }
			if err := c.do(ctx, `mutation($id: ID!) { refreshModels(connectionId: $id) { `+connectionFields+` } }`, map[string]any{"id": id}, &r); err != nil {
				return err
			}
			if cf.json {
				return printJSON(stdout, r.RefreshModels.Models)
			}
			rows := make([][]string, len(r.RefreshModels.Models))
			for i, m := range r.RefreshModels.Models {
				rows[i] = []string{m.ID, optInt(m.Capabilities.ContextWindow), optBool(m.Capabilities.ToolCalling), optBool(m.Capabilities.ImageInput)}
			}
			return table(stdout, "MODEL\tCONTEXT\tTOOLS\tIMAGES", rows)
		})
	default:
		return cmdutil.UsageError{Err: fmt.Errorf("unknown subcommand %q\n%s", args[0], connectionsUsage)}
	}
}

func connectionsAdd(fs *flag.FlagSet, cf *clientFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "api-key" || name == "key" || name == "apikey") {
			// Never echo the value: it may be the key itself.
			return cmdutil.UsageError{Err: errors.New("the API key is never accepted on the command line (it would land in shell history and ps): use --api-key-env NAME or --api-key-stdin")}
		}
	}
	name := fs.String("name", "", "display name (required)")
	baseURL := fs.String("base-url", "", "base URL of the API, e.g. https://api.openai.com/v1 or https://api.anthropic.com (required)")
	keyEnv := fs.String("api-key-env", "", "read the key from this environment variable OF THE KERNEL at call time (stored as env:NAME)")
	keyStdin := fs.Bool("api-key-stdin", false, "read the key from the first line of stdin")
	kind := fs.String("provider-kind", "openai", "provider kind: openai (Chat Completions), openai-responses, anthropic, or a plugin's kind")
	typ := fs.String("type", "", "language, image or video (default language)")
	var models cmdutil.ListFlag
	fs.Var(&models, "model", "a model id (repeatable, or comma separated)")
	rest, err := parseArgs(fs, args)
	if err != nil || len(rest) > 0 {
		return usageOr(err, "usage: foya connections add --name N --base-url URL [--api-key-env NAME | --api-key-stdin] [--model ID ...]")
	}
	if *name == "" || *baseURL == "" {
		return cmdutil.UsageError{Err: errors.New("connections add needs --name and --base-url")}
	}
	if *keyEnv != "" && *keyStdin {
		return cmdutil.UsageError{Err: errors.New("use either --api-key-env or --api-key-stdin")}
	}
	input := map[string]any{"name": *name, "baseUrl": *baseURL, "providerKind": *kind}
	if *typ != "" {
		input["type"] = strings.ToUpper(*typ)
	}
	switch {
	case *keyEnv != "":
		input["apiKey"] = "env:" + *keyEnv
	case *keyStdin:
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read api key from stdin: %w", err)
		}
		key := strings.TrimSpace(line)
		if key == "" {
			return cmdutil.UsageError{Err: errors.New("--api-key-stdin: stdin had no key on its first line")}
		}
		input["apiKey"] = key
	}
	if len(models) > 0 {
		ms := make([]map[string]any, len(models))
		for i, m := range models {
			ms[i] = map[string]any{"id": m}
		}
		input["models"] = ms
	}
	return withKernel(*cf, stderr, func(ctx context.Context, c *gqlClient) error {
		var r struct{ CreateConnection cliConnection }
		if err := c.do(ctx, `mutation($in: ConnectionInput!) { createConnection(input: $in) { `+connectionFields+` } }`, map[string]any{"in": input}, &r); err != nil {
			return err
		}
		if cf.json {
			return printJSON(stdout, r.CreateConnection)
		}
		if *keyEnv != "" {
			fmt.Fprintf(stderr, "note: the kernel reads $%s from ITS OWN environment at call time\n", *keyEnv)
		}
		return table(stdout, "ID\tNAME\tTYPE\tPROVIDER\tBASE URL\tKEY\tMODELS", [][]string{connectionRow(r.CreateConnection)})
	})
}

func connectionRow(cn cliConnection) []string {
	key := "none"
	if cn.APIKeyConfigured {
		key = "set"
	}
	ids := make([]string, len(cn.Models))
	for i, m := range cn.Models {
		ids[i] = m.ID
	}
	return []string{cn.ID, cn.Name, strings.ToLower(cn.Type), cn.ProviderKind, cn.BaseURL, key, short(strings.Join(ids, ","), 60)}
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

func usageOr(err error, usage string) error {
	if err != nil {
		return err
	}
	return cmdutil.UsageError{Err: errors.New(usage)}
}

// ---- sessions ----

const sessionsUsage = `usage:
  foya sessions list [--all] [--json]
  foya sessions show ID [--json]
  foya sessions rm ID
common flags: --addr 127.0.0.1:4777 --data-dir DIR --token-file PATH --json`

type cliSession struct {
	ID           string  `json:"id"`
	Title        string  `json:"title"`
	Phase        string  `json:"phase"`
	ApprovalMode string  `json:"approvalMode"`
	ConnectionID *string `json:"connectionId"`
	Model        *string `json:"model"`
	ParentID     *string `json:"parentId"`
	Project      *struct {
		ID   string `json:"id"`
		Path string `json:"path"`
	} `json:"project"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
	HeadSeq   int    `json:"headSeq"`
	Usage     struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
	} `json:"usage"`
	Messages []cliMessage `json:"messages,omitempty"`
}

type cliMessage struct {
	Seq       int    `json:"seq"`
	Role      string `json:"role"`
	Text      string `json:"text"`
	ToolCalls []struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"toolCalls"`
	ToolName   *string `json:"toolName"`
	IsError    bool    `json:"isError"`
	TurnStatus *string `json:"turnStatus"`
	TurnReason *string `json:"turnReason"`
}

const sessionFields = `id title phase approvalMode connectionId model parentId project { id path } createdAt updatedAt headSeq usage { inputTokens outputTokens }`

func sessionsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cmdutil.UsageError{Err: errors.New(sessionsUsage)}
	}
	var cf clientFlags
	fs := newClientFlagSet("sessions "+args[0], stderr, &cf)
	switch args[0] {
	case "list", "ls":
		all := fs.Bool("all", false, "include child (sub-agent) sessions")
		rest, err := parseArgs(fs, args[1:])
		if err != nil || len(rest) > 0 {
			return usageOr(err, "usage: foya sessions list [--all] [--json]")
		}
		return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
			var r struct{ Sessions []cliSession }
			if err := c.do(ctx, `query($all: Boolean) { sessions(includeChildren: $all) { `+sessionFields+` } }`, map[string]any{"all": *all}, &r); err != nil {
				return err
			}
			if cf.json {
				return printJSON(stdout, r.Sessions)
			}
			rows := make([][]string, len(r.Sessions))
			for i, s := range r.Sessions {
				project := "-"
				if s.Project != nil {
					project = s.Project.Path
				}
				rows[i] = []string{s.ID, short(orDefault(s.Title, "(untitled)"), 40), strings.ToLower(s.Phase), modelOf(s), project, shortTime(s.UpdatedAt)}
			}
			return table(stdout, "ID\tTITLE\tPHASE\tMODEL\tPROJECT\tUPDATED", rows)
		})
	case "show":
		rest, err := parseArgs(fs, args[1:])
		if err != nil || len(rest) != 1 {
			return usageOr(err, "usage: foya sessions show ID [--json]")
		}
		return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
			var r struct{ Session *cliSession }
			q := `query($id: ID!) { session(id: $id) { ` + sessionFields + ` messages { seq role text toolCalls { id name input } toolName isError turnStatus turnReason } } }`
			if err := c.do(ctx, q, map[string]any{"id": rest[0]}, &r); err != nil {
				return err
			}
			if r.Session == nil {
				return &gqlError{Message: fmt.Sprintf("session %s not found", rest[0]), Code: "NOT_FOUND"}
			}
			if cf.json {
				return printJSON(stdout, r.Session)
			}
			return showSession(stdout, *r.Session)
		})
	case "rm", "remove", "delete":
		rest, err := parseArgs(fs, args[1:])
		if err != nil || len(rest) != 1 {
			return usageOr(err, "usage: foya sessions rm ID")
		}
		return withKernel(cf, stderr, func(ctx context.Context, c *gqlClient) error {
			if err := c.do(ctx, `mutation($id: ID!) { deleteSession(id: $id) }`, map[string]any{"id": rest[0]}, nil); err != nil {
				return err
			}
			if cf.json {
				return printJSON(stdout, map[string]any{"deleted": rest[0]})
			}
			fmt.Fprintf(stdout, "deleted session %s\n", rest[0])
			return nil
		})
	default:
		return cmdutil.UsageError{Err: fmt.Errorf("unknown subcommand %q\n%s", args[0], sessionsUsage)}
	}
}

// shortTime shows an RFC 3339 time in local time to the minute.
func shortTime(v string) string {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return v
	}
	return t.Local().Format("2006-01-02 15:04")
}

func modelOf(s cliSession) string {
	if s.ConnectionID == nil || s.Model == nil {
		return "-"
	}
	return *s.ConnectionID + "/" + *s.Model
}

func showSession(w io.Writer, s cliSession) error {
	project := "-"
	if s.Project != nil {
		project = s.Project.Path
	}
	err := table(w, "FIELD\tVALUE", [][]string{
		{"id", s.ID}, {"title", orDefault(s.Title, "(untitled)")}, {"phase", strings.ToLower(s.Phase)},
		{"approval", strings.ToLower(s.ApprovalMode)}, {"model", modelOf(s)}, {"project", project},
		{"created", s.CreatedAt}, {"updated", s.UpdatedAt},
		{"tokens", fmt.Sprintf("%d in, %d out", s.Usage.InputTokens, s.Usage.OutputTokens)},
	})
	if err != nil {
		return err
	}
	for _, m := range s.Messages {
		fmt.Fprintf(w, "\n[%d] %s", m.Seq, strings.ToLower(m.Role))
		if m.ToolName != nil {
			fmt.Fprintf(w, " %s", cmdutil.Neutralize(*m.ToolName))
			if m.IsError {
				fmt.Fprint(w, " (error)")
			}
		}
		if m.TurnStatus != nil && *m.TurnStatus != "COMPLETED" {
			fmt.Fprintf(w, " (turn %s", strings.ToLower(*m.TurnStatus))
			if m.TurnReason != nil && *m.TurnReason != "" {
				fmt.Fprintf(w, ": %s", cmdutil.Neutralize(*m.TurnReason))
			}
			fmt.Fprint(w, ")")
		}
		fmt.Fprintln(w)
		if m.Text != "" {
			fmt.Fprintln(w, cmdutil.Neutralize(strings.TrimRight(m.Text, "\n")))
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(w, "→ %s %s\n", cmdutil.Neutralize(tc.Name), cmdutil.Neutralize(short(string(tc.Input), 200)))
		}
	}
	return nil
}

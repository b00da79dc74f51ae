package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// addConnectionHint is what a user without a usable connection runs.
const addConnectionHint = `foya connections add --name openai --base-url https://api.openai.com/v1 --api-key-env OPENAI_API_KEY --model gpt-4.1
  (or a local server: foya connections add --name local --base-url http://127.0.0.1:11434/v1 --model llama3.2)`

var connectionsGroup = group{
	name: "connections",
	doc:  "Model connections: accounts or endpoints of model providers, and the default models.",
	subs: []subcommand{
		{Command: cmdutil.Command{Name: "connections list", Synopsis: "[--json]", Doc: "Lists the connections with their models; * marks the default model."},
			aliases: []string{"ls"}, max: 0, run: connectionsList},
		{Command: cmdutil.Command{Name: "connections add", Synopsis: "--name N --base-url URL [--api-key-env NAME | --api-key-stdin] [--model ID ...] [flags]",
			Doc: `Adds a connection. The API key is never accepted on the command line: the
kernel reads it from its own environment at call time (--api-key-env) or
stores it from stdin (--api-key-stdin). Capability flags (--context,
--max-output, --tools, --images, --reasoning) apply to every --model.`},
			max: 0, run: connectionsAdd},
		{Command: cmdutil.Command{Name: "connections set", Synopsis: "ID|NAME [--name N] [--base-url URL] [--api-key-env NAME | --api-key-stdin | --no-api-key]",
			Doc: `Changes a connection. A key is bound to its endpoint: a --base-url of
another origin (scheme, host or port) needs the key again in the same
command (--api-key-env or --api-key-stdin); the kernel refuses it otherwise.`},
			min: 1, max: 1, run: connectionsSet},
		{Command: cmdutil.Command{Name: "connections remove", Synopsis: "ID|NAME", Doc: "Removes a connection; sessions that used it stay, unbound."},
			aliases: []string{"rm"}, min: 1, max: 1, run: connectionsRemove},
		{Command: cmdutil.Command{Name: "connections models", Synopsis: "ID|NAME", Doc: "Asks the provider for its model list and stores it."},
			min: 1, max: 1, run: connectionsModels},
		{Command: cmdutil.Command{Name: "connections default", Synopsis: "[CONN/MODEL] [--purpose language|fast|image|video] [--clear]",
			Doc: `Sets the default model of new sessions (--purpose language, the default) or
of titles and other short tasks (--purpose fast). CONN is a connection's
name or id. Without CONN/MODEL it prints the defaults.`},
			max: 1, run: connectionsDefault},
	},
}

func connectionsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return connectionsGroup.run(args, stdin, stdout, stderr)
}

func connectionsList(r *runner) error {
	if _, err := r.parse(); err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		resp, err := client.Connections(ctx, c)
		if err != nil {
			return err
		}
		conns := make([]client.ConnectionFields, len(resp.Connections))
		for i, cn := range resp.Connections {
			conns[i] = cn.ConnectionFields
		}
		if r.cf.json {
			return printJSON(r.stdout, conns)
		}
		var def *client.ModelRefFields
		if l := resp.DefaultModels.Language; l != nil {
			def = &l.ModelRefFields
		}
		return connectionsTable(r.stdout, conns, def)
	})
}

func connectionsTable(w io.Writer, conns []client.ConnectionFields, def *client.ModelRefFields) error {
	rows := make([][]string, len(conns))
	for i, cn := range conns {
		key := "none"
		if cn.ApiKeyConfigured {
			key = "set"
		}
		ids := make([]string, len(cn.Models))
		for j, m := range cn.Models {
			ids[j] = m.Id
			if def != nil && def.ConnectionId == cn.Id && def.Model == m.Id {
				ids[j] += "*"
			}
		}
		rows[i] = []string{cn.Name, strings.ToLower(string(cn.Type)), cn.ProviderKind, cn.BaseUrl, key, short(strings.Join(ids, ","), 60), cn.Id}
	}
	return table(w, "NAME\tTYPE\tPROVIDER\tBASE URL\tKEY\tMODELS\tID", rows)
}

func connectionsAdd(r *runner) error {
	if err := refuseKeyOnCommandLine(r.args); err != nil {
		return err
	}
	f := newConnectionFlags(r.fs)
	if _, err := r.parse(); err != nil {
		return err
	}
	in, err := f.input(r)
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		resp, err := client.CreateConnection(ctx, c, in)
		if err != nil {
			return err
		}
		cn := resp.CreateConnection.ConnectionFields
		if r.cf.json {
			return printJSON(r.stdout, cn)
		}
		if *f.keyEnv != "" {
			fmt.Fprintf(r.stderr, "note: the kernel reads $%s from ITS OWN environment at call time\n", *f.keyEnv)
		}
		return connectionsTable(r.stdout, []client.ConnectionFields{cn}, nil)
	})
}

// connectionFlags are the flags of connections add.
type connectionFlags struct {
	name, baseURL, keyEnv, kind, typ *string
	videoProtocol                    *string
	keyStdin, tools, images          *bool
	models, reasoning                cmdutil.ListFlag
	contextWindow, maxOutput         *int
	inPrice, cachedPrice, outPrice   *float64
}

func newConnectionFlags(fs *flag.FlagSet) *connectionFlags {
	f := &connectionFlags{}
	f.name = fs.String("name", "", "display name, unique (required)")
	f.baseURL = fs.String("base-url", "", "base URL of the API, e.g. https://api.openai.com/v1 or https://api.anthropic.com (required)")
	f.keyEnv = fs.String("api-key-env", "", "read the key from this environment variable OF THE KERNEL at call time (stored as env:NAME)")
	f.keyStdin = fs.Bool("api-key-stdin", false, "read the key from the first line of stdin")
	f.kind = fs.String("provider-kind", "openai", "provider kind: openai (Chat Completions), openai-responses, anthropic, or a plugin's kind")
	f.typ = fs.String("type", "", "language, image or video (default language)")
	f.videoProtocol = fs.String("video-protocol", "", "the generation protocol of a --type video connection (default openai_video: OpenAI's Videos API)")
	fs.Var(&f.models, "model", "a model id (repeatable, or comma separated)")
	f.contextWindow = fs.Int("context", 0, "context window of the models, in tokens")
	f.maxOutput = fs.Int("max-output", 0, "output limit of the models, in tokens")
	f.tools = fs.Bool("tools", false, "the models can call tools (--tools=false: they cannot)")
	f.images = fs.Bool("images", false, "the models take image input (--images=false: they do not)")
	fs.Var(&f.reasoning, "reasoning", "reasoning efforts the models accept, e.g. low,medium,high")
	f.inPrice = fs.Float64("input-price", 0, "price of the models' input in US dollars per million tokens (with --output-price: exec then prints costs)")
	f.cachedPrice = fs.Float64("cached-input-price", 0, "price of cached input in US dollars per million tokens")
	f.outPrice = fs.Float64("output-price", 0, "price of the models' output in US dollars per million tokens")
	return f
}

// input is the new connection the parsed flags describe; --api-key-stdin
// reads the key here.
func (f *connectionFlags) input(r *runner) (client.ConnectionInput, error) {
	if *f.name == "" || *f.baseURL == "" {
		return client.ConnectionInput{}, cmdutil.UsageError{Err: errors.New("connections add needs --name and --base-url (see foya connections add --help)")}
	}
	if *f.keyEnv != "" && *f.keyStdin {
		return client.ConnectionInput{}, cmdutil.UsageError{Err: errors.New("use either --api-key-env or --api-key-stdin")}
	}
	in := client.ConnectionInput{Name: f.name, BaseUrl: f.baseURL, ProviderKind: f.kind}
	if *f.typ != "" {
		t := client.ConnectionType(strings.ToUpper(*f.typ))
		in.Type = &t
	}
	switch video := in.Type != nil && *in.Type == client.ConnectionTypeVideo; {
	case video && *f.videoProtocol == "":
		in.VideoProtocol = ptr("openai_video") // the one protocol the kernel knows
	case video:
		in.VideoProtocol = f.videoProtocol
	case *f.videoProtocol != "":
		return client.ConnectionInput{}, cmdutil.UsageError{Err: errors.New("--video-protocol is for --type video connections")}
	}
	switch {
	case *f.keyEnv != "":
		in.ApiKey = ptr("env:" + *f.keyEnv)
	case *f.keyStdin:
		key, err := keyFromStdin(r.stdin)
		if err != nil {
			return client.ConnectionInput{}, err
		}
		in.ApiKey = &key
	}
	caps, err := f.capabilities(r)
	if err != nil {
		return client.ConnectionInput{}, err
	}
	if caps != nil && len(f.models) == 0 {
		return client.ConnectionInput{}, cmdutil.UsageError{Err: errors.New("capability flags describe models: give them with --model ID")}
	}
	for _, m := range f.models {
		in.Models = append(in.Models, client.ModelInput{Id: m, Capabilities: caps})
	}
	return in, nil
}

// capabilities are the models' capabilities the command line sets; nil
// when it sets none.
func (f *connectionFlags) capabilities(r *runner) (*client.CapabilitiesInput, error) {
	var caps *client.CapabilitiesInput
	capFlag := func(name string) bool {
		if !r.isSet(name) {
			return false
		}
		if caps == nil {
			caps = &client.CapabilitiesInput{}
		}
		return true
	}
	if capFlag("context") {
		caps.ContextWindow = f.contextWindow
	}
	if capFlag("max-output") {
		caps.MaxOutputTokens = f.maxOutput
	}
	if capFlag("tools") {
		caps.ToolCalling = f.tools
	}
	if capFlag("images") {
		caps.ImageInput = f.images
	}
	if capFlag("reasoning") {
		caps.ReasoningEfforts = f.reasoning
	}
	if r.isSet("input-price") != r.isSet("output-price") || (r.isSet("cached-input-price") && !r.isSet("input-price")) {
		return nil, cmdutil.UsageError{Err: errors.New("prices go together: --input-price and --output-price (and optionally --cached-input-price)")}
	}
	if capFlag("input-price") {
		caps.Prices = &client.ModelPricesInput{InputPerMillion: *f.inPrice, OutputPerMillion: *f.outPrice}
		if r.isSet("cached-input-price") {
			caps.Prices.CachedInputPerMillion = f.cachedPrice
		}
	}
	return caps, nil
}

func connectionsRemove(r *runner) error {
	rest, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		cn, err := resolveConnection(ctx, c, rest[0])
		if err != nil {
			return err
		}
		if _, err := client.DeleteConnection(ctx, c, cn.Id); err != nil {
			return err
		}
		if r.cf.json {
			return printJSON(r.stdout, map[string]any{"deleted": cn.Id})
		}
		fmt.Fprintf(r.stdout, "removed connection %s (%s)\n", cn.Name, cn.Id)
		return nil
	})
}

func connectionsModels(r *runner) error {
	rest, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		cn, err := resolveConnection(ctx, c, rest[0])
		if err != nil {
			return err
		}
		resp, err := client.RefreshModels(ctx, c, cn.Id)
		if err != nil {
			return modelsHint(err, cn.BaseUrl)
		}
		models := resp.RefreshModels.Models
		if r.cf.json {
			return printJSON(r.stdout, models)
		}
		rows := make([][]string, len(models))
		for i, m := range models {
			caps := m.Capabilities
			price := "?"
			if p := caps.Prices; p != nil {
				price = fmt.Sprintf("%g/%g", p.InputPerMillion, p.OutputPerMillion)
			}
			rows[i] = []string{m.Id, optInt(caps.ContextWindow), optInt(caps.MaxOutputTokens), optBool(caps.ToolCalling), optBool(caps.ImageInput), strings.Join(caps.ReasoningEfforts, ","), price}
		}
		return table(r.stdout, "MODEL\tCONTEXT\tMAX OUTPUT\tTOOLS\tIMAGES\tREASONING\tUSD/M IN/OUT", rows)
	})
}

func connectionsDefault(r *runner) error {
	purpose := r.fs.String("purpose", "language", "language (new sessions), fast (titles and short tasks), image or video")
	clear := r.fs.Bool("clear", false, "clear the default of --purpose")
	rest, err := r.parse()
	if err != nil {
		return err
	}
	p := client.ModelPurpose(strings.ToUpper(*purpose))
	switch p {
	case client.ModelPurposeLanguage, client.ModelPurposeFast, client.ModelPurposeImage, client.ModelPurposeVideo:
	default:
		return cmdutil.UsageError{Err: fmt.Errorf("--purpose %q: use language, fast, image or video", *purpose)}
	}
	var connRef, model string
	if len(rest) == 1 {
		var ok bool
		if connRef, model, ok = strings.Cut(rest[0], "/"); !ok || connRef == "" || model == "" {
			return cmdutil.UsageError{Err: fmt.Errorf("%q: use CONN/MODEL, e.g. openai/gpt-4.1", rest[0])}
		}
	}
	if *clear && len(rest) == 1 {
		return cmdutil.UsageError{Err: errors.New("give either CONN/MODEL or --clear")}
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		var defs client.DefaultModelsFields
		switch {
		case len(rest) == 1:
			cn, err := resolveConnection(ctx, c, connRef)
			if err != nil {
				return err
			}
			resp, err := client.SetDefaultModel(ctx, c, p, &cn.Id, &model)
			if err != nil {
				return err
			}
			defs = resp.SetDefaultModel.DefaultModelsFields
		case *clear:
			resp, err := client.SetDefaultModel(ctx, c, p, nil, nil)
			if err != nil {
				return err
			}
			defs = resp.SetDefaultModel.DefaultModelsFields
		}
		resp, err := client.Connections(ctx, c)
		if err != nil {
			return err
		}
		if len(rest) == 0 && !*clear {
			defs = resp.DefaultModels.DefaultModelsFields
		}
		if r.cf.json {
			return printJSON(r.stdout, defs)
		}
		return defaultsTable(r.stdout, connectionNames(resp), defs)
	})
}

// defaultsTable prints the default model of each purpose ("-" for none).
func defaultsTable(w io.Writer, names nameMap, defs client.DefaultModelsFields) error {
	ref := func(m interface {
		GetConnectionId() string
		GetModel() string
	}) string {
		return names.model(m.GetConnectionId(), m.GetModel())
	}
	rows := [][]string{{"language", "-"}, {"fast", "-"}, {"image", "-"}, {"video", "-"}}
	if defs.Language != nil {
		rows[0][1] = ref(defs.Language)
	}
	if defs.Fast != nil {
		rows[1][1] = ref(defs.Fast)
	}
	if defs.Image != nil {
		rows[2][1] = ref(defs.Image)
	}
	if defs.Video != nil {
		rows[3][1] = ref(defs.Video)
	}
	return table(w, "PURPOSE\tMODEL", rows)
}

// nameMap maps connection ids to names, for tables.
type nameMap map[string]string

func connectionNames(resp *client.ConnectionsResponse) nameMap {
	m := nameMap{}
	for _, cn := range resp.Connections {
		m[cn.Id] = cn.Name
	}
	return m
}

// model is "NAME/MODEL" (the id when the connection is unknown), or "-".
func (n nameMap) model(connID, model string) string {
	if connID == "" || model == "" {
		return "-"
	}
	if name, ok := n[connID]; ok {
		return name + "/" + model
	}
	return connID + "/" + model
}

// resolveConnection finds a connection by id or by name.
func resolveConnection(ctx context.Context, c *client.Client, idOrName string) (client.ConnectionFields, error) {
	resp, err := client.Connections(ctx, c)
	if err != nil {
		return client.ConnectionFields{}, err
	}
	for _, cn := range resp.Connections {
		if cn.Id == idOrName {
			return cn.ConnectionFields, nil
		}
	}
	var found []client.ConnectionFields
	for _, cn := range resp.Connections {
		if strings.EqualFold(strings.TrimSpace(cn.Name), strings.TrimSpace(idOrName)) {
			found = append(found, cn.ConnectionFields)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return client.ConnectionFields{}, &client.Error{Message: fmt.Sprintf("no connection with id or name %q (see foya connections list)", idOrName), Code: "NOT_FOUND"}
	default:
		ids := make([]string, len(found))
		for i, f := range found {
			ids[i] = f.Id
		}
		return client.ConnectionFields{}, cmdutil.UsageError{Err: fmt.Errorf("%d connections are named %q: use the id (%s)", len(found), idOrName, strings.Join(ids, ", "))}
	}
}

// modelsHint adds what to try to a model list the provider did not find:
// OpenAI-compatible servers (Ollama, LM Studio, vLLM…) serve it under /v1,
// which a base URL often lacks.
func modelsHint(err error, baseURL string) error {
	msg := strings.ToLower(err.Error())
	if !strings.Contains(msg, "not found") && !strings.Contains(msg, "404") {
		return err
	}
	u := strings.TrimRight(baseURL, "/")
	if strings.HasSuffix(u, "/v1") {
		return fmt.Errorf("%w (the provider has no model list at %s/models; check the base URL)", err, u)
	}
	return fmt.Errorf("%w (the provider has no model list at %s/models: OpenAI-compatible servers serve it under /v1, "+
		"so try the base URL %s/v1, e.g. with a connection added with --base-url %s/v1)", err, u, u, u)
}

// refuseKeyOnCommandLine refuses an --api-key (or --key, --apikey) flag:
// a key on the command line lands in shell history and ps. The value is
// never echoed: it may be the key itself.
func refuseKeyOnCommandLine(args []string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "api-key" || name == "key" || name == "apikey") {
			return cmdutil.UsageError{Err: errors.New("the API key is never accepted on the command line (it would land in shell history and ps): use --api-key-env NAME or --api-key-stdin")}
		}
	}
	return nil
}

// keyFromStdin reads an API key from the first line of stdin
// (--api-key-stdin).
func keyFromStdin(stdin io.Reader) (string, error) {
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read api key from stdin: %w", err)
	}
	key := strings.TrimSpace(line)
	if key == "" {
		return "", cmdutil.UsageError{Err: errors.New("--api-key-stdin: stdin had no key on its first line")}
	}
	return key, nil
}

package daemon

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foya-dev/foya/cluster"
	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
	corehooks "github.com/foya-dev/foya/core/hooks"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/core/terminal"
	"github.com/foya-dev/foya/core/worktree"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/internal/cmdutil"
	"github.com/foya-dev/foya/internal/memtrim"
	"github.com/foya-dev/foya/plugins/gitworktree"
	"github.com/foya-dev/foya/plugins/hooks"
	"github.com/foya-dev/foya/plugins/host"
	"github.com/foya-dev/foya/plugins/mcphost"
	"github.com/foya-dev/foya/plugins/sandbox"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/artifacts"
)

// kernel is everything serve wires together.
type kernel struct {
	dataDir  string
	db       *storage.DB
	plugins  *host.Manager
	catalog  *catalog.Catalog
	sessions *session.Service
	engine   *engine.Engine
	mcp      *mcp.Service
	mcpHost  *mcphost.Manager
	// worktrees makes the sessions' git worktrees (docs/worktrees.md).
	worktrees *worktree.Service
	// terminals runs the background terminals (docs/terminals.md);
	// toolTemp is the root of the sessions' TMPDIRs they share with bash.
	terminals *terminal.Service
	toolTemp  string
	unlock    func()
	// node is the membership of the kernels on a PostgreSQL database (nil
	// on SQLite); nodes answers the nodes query.
	node  *cluster.Node
	nodes core.NodeLister
	// clusterKey signs requests between kernels (nil on SQLite).
	clusterKey []byte
	log        *slog.Logger
	// callbackURL is the MCP OAuth redirect URL, known once the kernel
	// listens.
	callbackURL stringValue
}

// stringValue is a string set once another goroutine may read.
type stringValue struct{ v atomic.Pointer[string] }

func (s *stringValue) get() string {
	if p := s.v.Load(); p != nil {
		return *p
	}
	return ""
}

func (s *stringValue) set(v string) { s.v.Store(&v) }

// openKernel opens the data directory (locked for the life of the kernel),
// the database and stores, starts the plugins and wires the core services.
func openKernel(ctx context.Context, c Config, version string, log *slog.Logger) (_ *kernel, err error) {
	dir, err := cmdutil.PrepareDataDir(c.DataDir)
	if err != nil {
		return nil, err
	}
	release, err := lockDataDir(dir)
	if err != nil {
		return nil, err
	}
	k := &kernel{dataDir: dir, unlock: release, log: log}
	defer func() {
		if err != nil {
			k.Close()
		}
	}()
	if k.db, err = openDatabase(ctx, c.Database, dir, log); err != nil {
		return nil, err
	}
	if err = k.startPlugins(ctx, c, log); err != nil {
		return nil, err
	}
	catStore, mcpStore, authStore, err := openCatalogStores(ctx, k.db, c, dir)
	if err != nil {
		return nil, err
	}
	if k.clusterKey, err = loadClusterKey(c, dir); err != nil {
		return nil, err
	}
	broker, err := k.openSessions(ctx, c, catStore, log)
	if err != nil {
		return nil, err
	}
	if err = k.openEngine(ctx, c, mcpStore, authStore, broker, version, log); err != nil {
		return nil, err
	}
	if c.Database != "" {
		go syncSharedCatalog(ctx, k.catalog, k.mcp, log)
	}
	return k, nil
}

// startPlugins starts the built-in plugins and those of the plugin
// directories.
func (k *kernel) startPlugins(ctx context.Context, c Config, log *slog.Logger) error {
	dir := k.dataDir
	toolCfg := c.Tools
	toolCfg.DataDir, toolCfg.ScratchDir = dir, filepath.Join(dir, "scratch")
	var err error
	if toolCfg.TempRoot, err = prepareToolTempRoot(dir); err != nil {
		return err
	}
	k.toolTemp = toolCfg.TempRoot
	if err := sandbox.SetChildNice(c.ChildNice); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	builtins, err := hostBuiltins(exe, toolCfg)
	if err != nil {
		return err
	}
	// Built-ins are registered from what they serve and start at their
	// first call: none has to be parked after Start (no ParkUnusedAfter,
	// whose timer would wake the idle kernel 5 s after start).
	if k.plugins, err = host.NewManager(host.Config{DataDir: dir, Builtins: builtins, Executable: exe, PluginDirs: c.PluginDirs, IdleStopAfter: c.PluginIdleStop,
		OnIdleStop: func() { _, _ = memtrim.TrimAll() }, Logger: log}); err != nil {
		return err
	}
	if err = k.plugins.Start(ctx); err != nil {
		return fmt.Errorf("start plugins: %w", err)
	}
	return nil
}

// openSessions wires the catalog, the cluster membership (on PostgreSQL)
// and the session service; it returns the broker of their events.
func (k *kernel) openSessions(ctx context.Context, c Config, catStore core.CatalogStore, log *slog.Logger) (*pubsub.Broker, error) {
	var err error
	k.catalog, err = catalog.New(ctx, catalog.Config{
		Store: catStore, Providers: k.plugins, Logger: log, AllowKeyEnv: c.AllowKeyEnv,
	})
	if err != nil {
		return nil, err
	}
	if k.node, err = openCluster(ctx, c.Database, log); err != nil {
		return nil, err
	}
	brokerCfg := pubsub.Config{Logger: log}
	if k.node != nil {
		brokerCfg.Relay = k.node
	}
	broker := pubsub.New(brokerCfg)
	svcCfg := session.Config{Store: k.db, Broker: broker, Logger: log, Models: k.catalog, Changes: k.catalog}
	if k.node != nil {
		svcCfg.Ownership = k.node
	}
	k.sessions, err = session.New(svcCfg)
	if err != nil {
		return nil, err
	}
	if _, err = k.sessions.ResetPhases(ctx); err != nil {
		return nil, err
	}
	return broker, nil
}

// openEngine wires the MCP servers, the tools (plugins' and MCP servers')
// and the turn engine.
func (k *kernel) openEngine(ctx context.Context, c Config, mcpStore core.MCPStore, authStore core.MCPAuthStore, broker *pubsub.Broker, version string, log *slog.Logger) error {
	dir := k.dataDir
	blobs, err := artifacts.New(cmp.Or(c.ArtifactDir, filepath.Join(dir, "artifacts")))
	if err != nil {
		return err
	}
	k.mcpHost = mcphost.New(mcphost.Config{
		Logger: log, Version: version,
		Sandbox: mcpSandbox(dir, c), ScopeDir: func(ctx context.Context, id string) (string, error) {
			// The engine is made below, before any server is attached to a
			// session; its WorkDir is where the session's tools act (a
			// worktree included).
			return k.engine.WorkDir(ctx, id)
		},
		OnChange: func(id string) {
			broker.PublishKernel(core.KernelEvent{Type: core.KernelCatalogUpdated, McpServerID: id, At: time.Now().UTC()})
		},
		Auth:              authStore,
		CallbackURL:       k.callbackURL.get,
		ClientMetadataURL: c.MCPClientMetadataURL,
		OnNeedsAuth: func(id string) {
			broker.PublishKernel(core.KernelEvent{Type: core.KernelMCPNeedsAuth, McpServerID: id, At: time.Now().UTC()})
		},
	})
	if k.mcp, err = mcp.New(ctx, mcp.Config{
		Store: mcpStore, Runtime: k.mcpHost, Auth: k.mcpHost, Content: k.mcpHost, Broker: broker, Logger: log,
		SessionExists: func(ctx context.Context, id string) error { _, err := k.sessions.Session(ctx, id); return err },
	}); err != nil {
		return err
	}
	runners := k.plugins.ToolRunners()
	if runners == nil {
		runners = map[string]core.ToolRunner{}
	}
	runners["mcp:servers"] = k.mcpHost // MCP tools are all named mcp__…
	tools := engine.NewToolHub(runners, log)
	k.terminals = terminal.New(terminal.Config{Launcher: terminalLauncher(dir, k.toolTemp, c, log), Sessions: k.sessions, Blobs: blobs, Logger: log})
	k.engine, err = engine.New(engine.Config{
		Terminals: k.terminals,
		Sessions:  k.sessions, Catalog: k.catalog, Providers: k.plugins, Tools: tools,
		Attachments: k.db, Blobs: blobs, Describe: artifacts.Describe, History: k.db,
		ScratchDir: filepath.Join(dir, "scratch"), DataDir: dir, HiddenPaths: c.Tools.Hidden, Logger: log, Retry: c.Retry, Output: c.Output, Guardian: c.Guardian,
		Hooks: corehooks.New(hooks.Store{Dir: dir}, hookRunner(dir, c, log)),
		// No turn for 5 s: hand memory back (docs/performance.md): SQLite's
		// page caches, then Go's free heap.
		OnIdle: func() {
			if err := k.db.ReleaseMemory(context.Background()); err != nil {
				log.Debug("idle: release memory", "err", err)
			}
			_, _ = memtrim.Trim()
		},
	})
	if err != nil {
		return err
	}
	k.worktrees, err = worktree.New(worktree.Config{Sessions: k.sessions, Git: &gitworktree.Git{}, Blobs: blobs, Logger: log})
	return err
}

// Close leaves the cluster, stops the MCP servers and plugins, closes the
// database and releases the data directory; failures are logged.
func (k *kernel) Close() {
	if k.terminals != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		k.terminals.Close(ctx) // already done after a clean shutdown
		cancel()
	}
	if k.node != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		k.node.Close(ctx)
		cancel()
	}
	if k.mcp != nil {
		k.mcp.Close()
	}
	if k.mcpHost != nil {
		k.mcpHost.Close()
	}
	if k.plugins != nil {
		if err := k.plugins.Close(); err != nil {
			k.log.Error("stop plugins", "err", err)
		}
	}
	if k.db != nil {
		if err := k.db.Close(); err != nil {
			k.log.Error("close database", "err", err)
		}
	}
	if k.unlock != nil {
		k.unlock()
	}
}

// openDatabase opens the PostgreSQL database at url, or without one the
// SQLite file in the data directory.
func openDatabase(ctx context.Context, url, dataDir string, log *slog.Logger) (*storage.DB, error) {
	if url != "" {
		return storage.OpenPostgres(ctx, url, log)
	}
	return storage.Open(ctx, filepath.Join(dataDir, "foya.db"), log)
}

// prepareToolTempRoot empties and creates the directory that holds one
// TMPDIR per session for tool commands: outside the data directory (tools
// cannot see that), under the system temporary directory, named after the
// user and the data directory so kernels on other data directories do not
// share it. It is emptied at every start, like /tmp at boot.
func prepareToolTempRoot(dataDir string) (string, error) {
	sum := sha256.Sum256([]byte(dataDir))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("foya-%d-%s", os.Getuid(), hex.EncodeToString(sum[:6])))
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clean tool temp dir %s: %w", dir, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("create tool temp dir %s: %w", dir, err)
	}
	return dir, nil
}

// clientMetadata is the kernel's OAuth client ID metadata document for the
// client_id url (nil without one): this kernel's callback first among its
// redirect URIs, then those of the other live kernels on the database, so
// that one hosted document serves the whole cluster. The route needs no
// token, so the document is made at most once per clientMetadataTTL
// (the node list is a database read).
func (k *kernel) clientMetadata(url, version string) func(context.Context) []byte {
	if url == "" {
		return nil
	}
	var (
		mu   sync.Mutex
		doc  []byte
		made time.Time
	)
	return func(ctx context.Context) []byte {
		mu.Lock()
		defer mu.Unlock()
		if doc != nil && time.Since(made) < clientMetadataTTL {
			return doc
		}
		redirects := []string{k.callbackURL.get()}
		if k.nodes != nil {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if nodes, err := k.nodes.Nodes(ctx); err == nil {
				for _, n := range nodes {
					if cb := strings.TrimRight(n.AdvertiseURL, "/") + edge.MCPOAuthCallbackPath; n.AdvertiseURL != "" && !slices.Contains(redirects, cb) {
						redirects = append(redirects, cb)
					}
				}
			}
		}
		b, _ := json.MarshalIndent(mcphost.ClientMetadataDocument(url, redirects, version), "", "  ")
		doc, made = append(b, '\n'), time.Now()
		return doc
	}
}

// clientMetadataTTL is how long a made client metadata document is served
// before it is made again (a kernel joining the cluster shows after it).
const clientMetadataTTL = 2 * time.Second

package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/hooks"
	"github.com/foya-dev/foya/core/session"
)

// Config wires the turn engine.
type Config struct {
	// OnIdle, when set, is called (on its own goroutine) each time no turn
	// has been running for IdleAfter (default DefaultIdleAfter): once after
	// start-up and after every busy period. The kernel hands memory back
	// to the operating system there.
	OnIdle    func()
	IdleAfter time.Duration
	Sessions  *session.Service
	Catalog   *catalog.Catalog
	Providers core.ProviderLookup
	// Tools runs tool calls; nil means the model gets no tools.
	Tools       core.ToolRunner
	Attachments core.AttachmentStore
	Blobs       core.BlobStore
	Describe    core.DescribeFunc
	Logger      *slog.Logger
	// MaxSteps bounds the model requests of one turn (default 50).
	MaxSteps int
	// ScratchDir holds a working directory per session without a project.
	ScratchDir string
	// DataDir is the kernel's data directory: file tool calls naming a
	// path inside it, or inside one of HiddenPaths (secrets kept elsewhere:
	// a token file, a TLS key), are refused before any approval is asked.
	DataDir     string
	HiddenPaths []string
	// History reads checkpoints and keeps accepted boundaries; nil disables
	// compaction and budget anchoring across restarts.
	History core.HistoryStore
	// StopWait bounds how long stopTurn and deleteSession wait for a turn to
	// wind down (default 30s).
	StopWait time.Duration
	// Hooks runs lifecycle hooks; nil runs none.
	Hooks *hooks.Hooks
	// Retry bounds the retries of transient model request failures; zero
	// fields take the defaults (see RetryPolicy).
	Retry RetryPolicy
	// Output bounds one model reply (text, reasoning, tool arguments,
	// tokens per turn, time); zero fields take the defaults.
	Output OutputLimits
	// Guardian bounds the guardian model of GUARDED sessions; zero fields
	// take the defaults.
	Guardian GuardianPolicy
	// Terminals runs the background terminals of the terminal_* tools
	// (core/terminal); nil offers no terminal tools.
	Terminals core.Terminals
}

// Engine runs turns: one at a time per session, with a FIFO queue of the
// input that arrives meanwhile (SES-6, SES-7). Queues, running turns,
// pending approvals and session grants live in memory only (SES-14).
type Engine struct {
	idle  *idleWatch
	cfg   Config
	svc   *session.Service
	log   *slog.Logger
	retry RetryPolicy
	out   OutputLimits

	// Each of these owns its state and its lock.
	archive  *Archiver
	gen      *Generator
	rec      usageRecorder
	queues   *Queues
	rewind   *Rewinder
	dirs     workDirs
	runtimes *runtimes
	// requests are the approvals and questions waiting for a person.
	requests *Requests
	hooks    *hookRunner
	tools    *toolRunner
	// compactor makes and finds context checkpoints.
	compactor *compactor
	// models binds sessions to models (and caches resolved capabilities).
	models *models
	// titled remembers sessions whose title was already asked of a model
	// (successfully or not), so a failing title request is not repeated
	// after every turn; a kernel restart allows one more attempt.
	titled memo[bool]
	// closed is atomic so that it can be read under a runtime lock. Lock
	// order: a runtime lock may be held while taking the runtimes' lock,
	// never the reverse.
	closed atomic.Bool
	wg     sync.WaitGroup
}

// ErrTurnStopped is the cancel cause of a turn stopped by a client.
var ErrTurnStopped = errors.New("stopped by the user")

// errSessionDeleted is the cancel cause of a turn whose session is deleted.
var errSessionDeleted = errors.New("the session was deleted")

// errKernelStopping is the cancel cause of turns at shutdown.
var errKernelStopping = errors.New("the kernel is shutting down")

// New builds the turn engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Sessions == nil || cfg.Catalog == nil || cfg.Providers == nil {
		return nil, errors.New("turn engine: sessions, catalog and providers are required")
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 50
	}
	if cfg.StopWait <= 0 {
		cfg.StopWait = 30 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	e := &Engine{
		cfg: cfg, svc: cfg.Sessions, log: log, retry: cfg.Retry.withDefaults(), out: cfg.Output.withDefaults(),
		runtimes: newRuntimes(), requests: newRequests(cfg.Sessions, log),
	}
	e.dirs = workDirs{svc: e.svc, scratch: cfg.ScratchDir}
	observeLoad(e.runtimes)
	e.archive = &Archiver{svc: e.svc, cfg: &e.cfg, log: log}
	e.queues = &Queues{svc: e.svc, runtimes: e.runtimes, validate: e.validateInput}
	e.hooks = &hookRunner{hooks: cfg.Hooks, svc: e.svc, log: log, dirs: e.dirs}
	e.rec = usageRecorder{svc: e.svc, log: log}
	e.gen = &Generator{svc: e.svc, cfg: &e.cfg, log: log, rec: e.rec}
	e.rewind = &Rewinder{svc: e.svc, cfg: &e.cfg, log: log, runtimes: e.runtimes, dirs: e.dirs}
	e.models = &models{catalog: cfg.Catalog, providers: cfg.Providers, log: log}
	e.compactor = &compactor{svc: e.svc, history: cfg.History, log: log, hooks: e.hooks, rec: e.rec}
	guard := &guardian{svc: e.svc, models: e.models, rec: e.rec, log: log, dirs: e.dirs, policy: cfg.Guardian.withDefaults(), dataDir: cfg.DataDir, hidden: cfg.HiddenPaths}
	e.tools = &toolRunner{svc: e.svc, cfg: &e.cfg, log: log, out: e.out, dirs: e.dirs, requests: e.requests, hooks: e.hooks, gen: e.gen, guardian: guard,
		sampler: func(a sessionAsker) core.Sampler {
			return sessionSampler{svc: e.svc, models: e.models, rec: e.rec, log: log, asker: a}
		},
		kernel: func(ctx context.Context, kt kernelTool, s core.Session, c core.ToolCall) (string, bool) {
			if isTerminalTool(kt.info.Name) && e.cfg.Terminals == nil {
				return "terminals are not available in this kernel", true
			}
			return kt.run(ctx, e, s, c)
		}}
	// Idle: the histories cached for turns go, then whatever the kernel
	// configured (e.g. handing memory back).
	e.idle = newIdleWatch(cfg.IdleAfter, func() {
		e.svc.DropHistories()
		if cfg.OnIdle != nil {
			cfg.OnIdle()
		}
	})
	return e, nil
}

// workDirs finds the directory a session works in.
type workDirs struct {
	svc     *session.Service
	scratch string
}

// workDir is where a session's tools act: its git worktree, the bound
// project's directory, or a private scratch directory under the data
// directory (a sub-agent's is its parent's: it works where its parent
// works, as it does in a project).
func (w workDirs) workDir(ctx context.Context, s core.Session) (string, error) {
	dir, err := w.workDirPath(ctx, s)
	if err != nil || s.ProjectID != "" {
		return dir, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create scratch dir: %w", err)
	}
	return dir, nil
}

// workDirPath is workDir without creating a scratch directory: what a model
// request needs (the system prompt names the directory; every tool call and
// hook goes through workDir, which creates it first).
func (w workDirs) workDirPath(ctx context.Context, s core.Session) (string, error) {
	if s.Worktree != nil {
		return s.Worktree.Path, nil
	}
	if s.ProjectID != "" {
		p, err := w.svc.Project(ctx, s.ProjectID)
		if err != nil {
			return "", err
		}
		return p.Path, nil
	}
	if w.scratch == "" {
		return "", core.Errorf(core.CodeUnavailable, "session %s has no project and the kernel has no scratch directory", s.ID)
	}
	owner := cmp.Or(s.ParentID, s.ID)
	if owner == "" || owner != filepath.Base(owner) || owner == "." || owner == ".." {
		return "", fmt.Errorf("session id %q cannot name a scratch directory", owner)
	}
	return filepath.Join(w.scratch, owner), nil
}

// WorkDir is the directory session id's tools act in (created when it is
// a scratch directory): its worktree, its project's directory, or its
// scratch directory. MCP servers attached to the session are confined to it.
func (e *Engine) WorkDir(ctx context.Context, id string) (string, error) {
	s, err := e.svc.Session(ctx, id)
	if err != nil {
		return "", err
	}
	return e.dirs.workDir(ctx, s)
}

// inheritedWorktree is a sub-agent's copy of its parent's worktree (nil
// without one): the child works there too, and deleting the child leaves
// it alone.
func inheritedWorktree(wt *core.Worktree) *core.Worktree {
	if wt == nil {
		return nil
	}
	c := *wt
	c.Inherited = true
	return &c
}

// Close stops every running turn (keeping their partial output) and waits
// for them to wind down.
func (e *Engine) Close(ctx context.Context) error {
	e.closed.Store(true)
	e.idle.stop()
	rts := e.runtimes.all()
	var runs []*turnRun
	for _, rt := range rts {
		rt.mu.Lock()
		rt.queue, rt.held = nil, false
		if rt.turn != nil {
			runs = append(runs, rt.turn)
		}
		rt.mu.Unlock()
	}
	for _, r := range runs {
		r.cancel(errKernelStopping)
	}
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for turns to stop: %w", ctx.Err())
	}
}

// Hooks is the lifecycle hooks service (nil when not configured).
func (e *Engine) Hooks() *hooks.Hooks { return e.cfg.Hooks }

// Requests are the approvals and questions waiting for a person, and the
// grants of APPROVED_FOR_SESSION.
func (e *Engine) Requests() *Requests { return e.requests }

// Rewind previews and confirms rewinds (SES-11).
func (e *Engine) Rewind() *Rewinder { return e.rewind }

// Queues lists and edits the sessions' queued input.
func (e *Engine) Queues() *Queues { return e.queues }

// Generation generates images and videos.
func (e *Engine) Generation() *Generator { return e.gen }

// Archive exports and imports sessions (the foya.session format).
func (e *Engine) Archive() *Archiver { return e.archive }

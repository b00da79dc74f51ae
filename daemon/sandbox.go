package daemon

import (
	"flag"
	"log/slog"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/hooks"
	"github.com/foya-dev/foya/plugins/mcphost"
	"github.com/foya-dev/foya/plugins/sandbox"
	plterminal "github.com/foya-dev/foya/plugins/terminal"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// sandboxLimitFlags registers the --tool-max-* flags of `foya serve` and
// returns a function reading them after parsing (docs/sandbox.md).
func sandboxLimitFlags(fs *flag.FlagSet) func() (sandbox.Limits, error) {
	d := sandbox.DefaultLimits()
	procs := fs.Int("tool-max-procs", d.Procs, "most processes (threads) one tool command, hook or STDIO MCP server may run at once (pids cgroup where writable, else RLIMIT_NPROC; 0: no limit)")
	memory := fs.String("tool-max-memory", "off", "address space per sandboxed process, e.g. 16G (RLIMIT_AS; off by default: Node.js and Go reserve far more than they use)")
	fileSize := fs.String("tool-max-file-size", "4G", "largest file a sandboxed process may write (RLIMIT_FSIZE; off: no limit)")
	cpu := fs.Duration("tool-max-cpu", time.Duration(d.CPUSeconds)*time.Second, "CPU time of one bash call or hook, every process it starts included (measured by a cgroup or /proc, the call killed when used up; 0: no limit)")
	return func() (sandbox.Limits, error) {
		var l sandbox.Limits
		var err error
		if *procs < 0 {
			return l, cmdutil.Usagef("--tool-max-procs %d: must not be negative", *procs)
		}
		l.Procs = *procs
		if l.AddressSpace, err = sandbox.ParseSize(*memory); err != nil {
			return l, cmdutil.Usagef("--tool-max-memory: %w", err)
		}
		if l.AddressSpace != 0 && l.AddressSpace < 64<<20 {
			return l, cmdutil.Usagef("--tool-max-memory %s: at least 64M (or off)", *memory)
		}
		if l.FileSize, err = sandbox.ParseSize(*fileSize); err != nil {
			return l, cmdutil.Usagef("--tool-max-file-size: %w", err)
		}
		if *cpu < 0 {
			return l, cmdutil.Usagef("--tool-max-cpu %s: must not be negative", *cpu)
		}
		l.CPUSeconds = uint64((*cpu + time.Second - 1) / time.Second)
		return l, nil
	}
}

// mcpSandbox is the confinement of STDIO MCP servers: the bash sandbox's
// masks, writable roots and limits.
func mcpSandbox(dir string, c Config) *mcphost.SandboxConfig {
	sc := &mcphost.SandboxConfig{DataDir: dir, Hidden: c.Tools.Hidden, Writable: c.Tools.Writable, Readable: c.Tools.Readable, Limits: sandbox.DefaultLimits()}
	if c.Tools.Limits != nil {
		sc.Limits = *c.Tools.Limits
	}
	return sc
}

// hookRunner runs hooks in the bash sandbox with the same masks and limits.
func hookRunner(dir string, c Config, log *slog.Logger) *hooks.Runner {
	r := hooks.NewRunner(dir, log)
	r.Hidden = c.Tools.Hidden
	r.Readable = c.Tools.Readable
	r.Limits = sandbox.DefaultLimits()
	if c.Tools.Limits != nil {
		r.Limits = *c.Tools.Limits
	}
	return r
}

// terminalLauncher starts background terminals in the bash sandbox with
// the same masks, roots and limits.
func terminalLauncher(dir, tempRoot string, c Config, log *slog.Logger) *plterminal.Launcher {
	cfg := plterminal.Config{DataDir: dir, Hidden: c.Tools.Hidden, TempRoot: tempRoot, Writable: c.Tools.Writable, Readable: c.Tools.Readable,
		NetworkOff: c.Tools.NetworkOff, NoSandbox: c.Tools.NoSandbox, Limits: sandbox.DefaultLimits(), Logger: log}
	if c.Tools.Limits != nil {
		cfg.Limits = *c.Tools.Limits
	}
	// A terminal runs for hours: bash's per-call CPU budget would end a
	// dev server; --terminal-max-cpu is its own (none by default).
	cfg.Limits.CPUSeconds = uint64((c.TerminalCPU + time.Second - 1) / time.Second)
	return plterminal.New(cfg)
}

// terminalsOrNil is the terminal service as core.Terminals (a nil
// interface when there is none).
func (k *kernel) terminalsOrNil() core.Terminals {
	if k.terminals == nil {
		return nil
	}
	return k.terminals
}

package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// The command line of foya exec.

type execOptions struct {
	addr, dataDir, tokenFile, session, project, model, approval string
	json, continueLast, noProject                               bool
	prompt                                                      string
	// worktree: a new session in a git worktree of its own
	// (docs/worktrees.md), on worktreeBranch from baseRef when given.
	worktree                bool
	worktreeBranch, baseRef string
}

func parseExecArgs(args []string, stdin io.Reader, stdout io.Writer) (execOptions, error) {
	var o execOptions
	fs := cmdutil.NewFlagSet(execCommand, stdout)
	o.define(fs)
	rest, err := cmdutil.Parse(fs, args)
	if err != nil {
		return o, err
	}
	if o.prompt, err = readPrompt(rest, stdin); err != nil {
		return o, err
	}
	if err := o.check(); err != nil {
		return o, err
	}
	return o, o.resolveProject()
}

func (o *execOptions) define(fs *flag.FlagSet) {
	fs.StringVar(&o.addr, "addr", kernelAddr(), addrUsage)
	fs.StringVar(&o.dataDir, "data-dir", cmdutil.DefaultDataDir(), "data directory of a kernel started for this command")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the kernel's bearer token (default: $FOYA_TOKEN, else <data-dir>/auth-token for a loopback --addr)")
	fs.StringVar(&o.session, "session", "", "continue this session (id) instead of creating one")
	fs.BoolVar(&o.continueLast, "continue", false, "continue the newest session of the project")
	fs.BoolVar(&o.continueLast, "c", false, "short for --continue")
	fs.StringVar(&o.project, "project", "", "the project directory (default: the current directory; created as a project when new)")
	fs.BoolVar(&o.noProject, "no-project", false, "no project: the session works in a scratch directory of its own")
	fs.StringVar(&o.model, "model", "", "CONNECTION/MODEL: connection name or id, a slash, and the model id (default: the default model, see foya connections default)")
	fs.StringVar(&o.approval, "approval-mode", "", "explore, ask, guarded (a guardian model reviews what ask would ask; docs/guardian.md) or bypass (default: the kernel's, ask)")
	fs.BoolVar(&o.json, "json", false, "print the session's events as JSON, one object per line")
	fs.BoolVar(&o.worktree, "worktree", false, "create the session in a git worktree of its own, <project>/.foya/worktrees/<session id> (the project must be a git repository; docs/worktrees.md)")
	fs.StringVar(&o.worktreeBranch, "worktree-branch", "", "with --worktree: the new branch's name (default foya/<session id>)")
	fs.StringVar(&o.baseRef, "base-ref", "", "with --worktree: the commit-ish the branch starts from (default HEAD)")
}

// readPrompt is the one prompt argument, or stdin when it is "-" or
// missing (not a terminal).
func readPrompt(rest []string, stdin io.Reader) (string, error) {
	var prompt string
	switch {
	case len(rest) > 1:
		return "", cmdutil.UsageError{Err: fmt.Errorf("exec takes one prompt argument, got %d (quote the prompt)", len(rest))}
	case len(rest) == 1 && rest[0] != "-":
		prompt = rest[0]
	default:
		if isTerminal(stdin) {
			return "", cmdutil.UsageError{Err: errors.New(`exec needs a prompt: foya exec "prompt" (or pipe it on stdin)`)}
		}
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", fmt.Errorf("read prompt from stdin: %w", err)
		}
		prompt = strings.TrimSpace(string(b))
	}
	if strings.TrimSpace(prompt) == "" {
		return prompt, cmdutil.UsageError{Err: errors.New("the prompt is empty")}
	}
	return prompt, nil
}

// check checks the flags' values and combinations; it normalizes
// --approval-mode to the schema's name.
func (o *execOptions) check() error {
	if o.approval != "" {
		switch strings.ToLower(o.approval) {
		case "explore", "ask", "guarded", "bypass":
			o.approval = strings.ToUpper(o.approval)
		default:
			return cmdutil.UsageError{Err: fmt.Errorf("--approval-mode %q: use explore, ask, guarded or bypass", o.approval)}
		}
	}
	if o.model != "" {
		if c, m, ok := strings.Cut(o.model, "/"); !ok || c == "" || m == "" {
			return cmdutil.UsageError{Err: fmt.Errorf("--model %q: use CONNECTION/MODEL, e.g. openai/gpt-4.1", o.model)}
		}
	}
	switch {
	case o.noProject && o.project != "":
		return cmdutil.UsageError{Err: errors.New("--project and --no-project exclude each other")}
	case o.continueLast && o.session != "":
		return cmdutil.UsageError{Err: errors.New("--continue and --session exclude each other")}
	case (o.worktreeBranch != "" || o.baseRef != "") && !o.worktree:
		return cmdutil.UsageError{Err: errors.New("--worktree-branch and --base-ref need --worktree")}
	case o.worktree && (o.noProject || o.session != "" || o.continueLast):
		return cmdutil.UsageError{Err: errors.New("--worktree creates a new session in the project's git repository: it excludes --no-project, --session and --continue")}
	}
	return nil
}

// resolveProject sets the project directory, absolute and without
// symlinks: --project, else the current directory, unless --no-project
// or --session (whose project is already set).
func (o *execOptions) resolveProject() error {
	if o.project == "" && !o.noProject && o.session == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("current directory: %w", err)
		}
		o.project = wd
	}
	if o.project == "" {
		return nil
	}
	abs, err := filepath.Abs(o.project)
	if err != nil {
		return fmt.Errorf("project path %s: %w", o.project, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return cmdutil.UsageError{Err: fmt.Errorf("project %s is not a directory", abs)}
	}
	o.project = abs
	return nil
}

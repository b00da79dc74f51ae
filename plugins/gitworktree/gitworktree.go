// Package gitworktree runs the real git for session worktrees
// (core.GitWorktrees, docs/worktrees.md): git worktree add, status,
// remove and branch -D, each under a context with a timeout and with an
// environment that carries no secret of the kernel's.
package gitworktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/foya-dev/foya/core"
)

// Dir is where worktrees go, relative to the repository's top level; it
// is added to .git/info/exclude.
const Dir = ".foya/worktrees"

// DefaultTimeout bounds one git command.
const DefaultTimeout = 2 * time.Minute

// Git runs git for session worktrees.
type Git struct {
	// Binary is the git executable (default: "git" found in PATH).
	Binary string
	// Timeout bounds each git command (default DefaultTimeout).
	Timeout time.Duration
}

var _ core.GitWorktrees = (*Git)(nil)

// Add creates the worktree of session sessionID on a new branch.
func (g *Git) Add(ctx context.Context, repo, sessionID string, in core.WorktreeInput) (core.Worktree, error) {
	if err := g.checkRepo(ctx, repo); err != nil {
		return core.Worktree{}, err
	}
	wt := core.Worktree{
		Path:    filepath.Join(repo, filepath.FromSlash(Dir), sessionID),
		Branch:  strings.TrimSpace(in.Branch),
		BaseRef: strings.TrimSpace(in.BaseRef),
	}
	if wt.Branch == "" {
		wt.Branch = "foya/" + sessionID
	}
	if wt.BaseRef == "" {
		wt.BaseRef = "HEAD"
	}
	if strings.HasPrefix(wt.Branch, "-") || strings.HasPrefix(wt.BaseRef, "-") {
		return core.Worktree{}, core.Errorf(core.CodeBadInput, "worktree: branch and baseRef must not start with '-'")
	}
	if _, err := g.run(ctx, repo, "check-ref-format", "--branch", wt.Branch); err != nil {
		return core.Worktree{}, core.Errorf(core.CodeBadInput, "worktree.branch %q is not a valid git branch name", wt.Branch)
	}
	if _, err := g.run(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+wt.Branch); err == nil {
		return core.Worktree{}, core.Errorf(core.CodeBadInput, "worktree.branch %q already exists in %s; name another branch", wt.Branch, repo)
	}
	if _, err := g.run(ctx, repo, "rev-parse", "--verify", "--quiet", wt.BaseRef+"^{commit}"); err != nil {
		if wt.BaseRef == "HEAD" {
			return core.Worktree{}, core.Errorf(core.CodeBadInput, "worktree: the git repository %s has no commit yet (HEAD names none); commit first or give worktree.baseRef", repo)
		}
		return core.Worktree{}, core.Errorf(core.CodeBadInput, "worktree.baseRef %q is not a commit of the git repository %s", wt.BaseRef, repo)
	}
	if err := g.exclude(ctx, repo); err != nil {
		return core.Worktree{}, err
	}
	if err := os.MkdirAll(filepath.Dir(wt.Path), 0o755); err != nil {
		return core.Worktree{}, fmt.Errorf("worktree: create %s: %w", filepath.Dir(wt.Path), err)
	}
	if out, err := g.run(ctx, repo, "worktree", "add", "--quiet", "-b", wt.Branch, wt.Path, wt.BaseRef); err != nil {
		return core.Worktree{}, fmt.Errorf("git worktree add %s: %w: %s", wt.Path, err, out)
	}
	return wt, nil
}

// checkRepo refuses a directory that is not the top level of a git
// repository, and a machine without git.
func (g *Git) checkRepo(ctx context.Context, repo string) error {
	if _, err := exec.LookPath(g.binary()); err != nil {
		return core.Errorf(core.CodeBadInput, "worktree: git is not installed on the kernel's machine (%s not found in PATH)", g.binary())
	}
	out, err := g.run(ctx, repo, "rev-parse", "--show-toplevel")
	if err != nil {
		return core.Errorf(core.CodeBadInput, "worktree: the project directory %s is not a git repository", repo)
	}
	top, _ := filepath.EvalSymlinks(strings.TrimSpace(out))
	dir, _ := filepath.EvalSymlinks(repo)
	if top != dir {
		return core.Errorf(core.CodeBadInput, "worktree: the project directory %s is inside the git repository %s but not its top level; register %s as the project", repo, top, top)
	}
	return nil
}

// exclude adds the worktrees' directory to the repository's
// info/exclude, once.
func (g *Git) exclude(ctx context.Context, repo string) error {
	out, err := g.run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return fmt.Errorf("worktree: find the git directory of %s: %w: %s", repo, err, out)
	}
	path := filepath.Join(strings.TrimSpace(out), "info", "exclude")
	line := "/" + Dir + "/"
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("worktree: read %s: %w", path, err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == line {
			return nil
		}
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		line = "\n" + line
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("worktree: create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("worktree: open %s: %w", path, err)
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("worktree: write %s: %w", path, err)
	}
	return nil
}

// Dirty reports whether git status --porcelain lists anything.
func (g *Git) Dirty(ctx context.Context, wt core.Worktree) (bool, error) {
	if _, err := os.Stat(wt.Path); err != nil {
		return false, fmt.Errorf("worktree %s: %w", wt.Path, err)
	}
	out, err := g.run(ctx, wt.Path, "status", "--porcelain")
	if err != nil {
		return false, fmt.Errorf("git status in %s: %w: %s", wt.Path, err, out)
	}
	return strings.TrimSpace(out) != "", nil
}

// Remove removes the worktree (a directory already gone is pruned) and,
// when asked, deletes its branch.
func (g *Git) Remove(ctx context.Context, repo string, wt core.Worktree, how core.WorktreeRemoval) error {
	if _, err := os.Stat(wt.Path); err == nil {
		args := []string{"worktree", "remove"}
		if how.Force {
			args = append(args, "--force")
		}
		if out, err := g.run(ctx, repo, append(args, wt.Path)...); err != nil {
			return fmt.Errorf("git worktree remove %s: %w: %s", wt.Path, err, out)
		}
	} else if out, err := g.run(ctx, repo, "worktree", "prune"); err != nil {
		return fmt.Errorf("git worktree prune in %s: %w: %s", repo, err, out)
	}
	if how.DeleteBranch {
		if out, err := g.run(ctx, repo, "branch", "-D", "--", wt.Branch); err != nil {
			return fmt.Errorf("git branch -D %s: %w: %s", wt.Branch, err, out)
		}
	}
	return nil
}

// HeadBranch is the branch checked out in dir ("" when HEAD is detached).
func (g *Git) HeadBranch(ctx context.Context, dir string) string {
	out, err := g.run(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// run runs git in dir and returns its combined output. git runs outside
// the sandbox on a repository the model's commands may write (.git
// included), so nothing the repository configures runs: no hook
// (core.hooksPath), no fsmonitor command, and every filter driver its
// configuration names is blanked (a smudge or clean filter would run on
// checkout and status) (TestRepositoryCommandsDoNotRun).
func (g *Git) run(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout())
	defer cancel()
	filters, err := g.blankFilters(ctx, dir)
	if err != nil {
		return "", err
	}
	safe := append([]string{"-C", dir, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, filters...)
	out, err := g.exec(ctx, append(safe, args...)...)
	return core.Clip(out, 2000), err
}

// maxFilterConfig bounds the filter names a repository's configuration may list.
const maxFilterConfig = 64 << 10

// blankFilters is a -c override for each filter driver the repository's
// configuration names, so that none of its commands runs.
func (g *Git) blankFilters(ctx context.Context, dir string) ([]string, error) {
	out, err := g.exec(ctx, "-C", dir, "config", "--null", "--name-only", "--get-regexp", `^filter\.`)
	if err != nil {
		return nil, nil // none configured (exit 1), or not a repository: the command itself says
	}
	if len(out) > maxFilterConfig {
		return nil, core.Errorf(core.CodeBadInput, "the git repository in %s configures over %d bytes of filter drivers; the kernel does not run git on it", dir, maxFilterConfig)
	}
	var args []string
	seen := map[string]bool{}
	for _, key := range strings.Split(out, "\x00") {
		name, ok := strings.CutPrefix(key, "filter.")
		if i := strings.LastIndexByte(name, '.'); ok && i > 0 && !seen[name[:i]] {
			seen[name[:i]] = true
			for _, k := range []string{"clean", "smudge", "process"} {
				args = append(args, "-c", "filter."+name[:i]+"."+k+"=")
			}
			args = append(args, "-c", "filter."+name[:i]+".required=false")
		}
	}
	return args, nil
}

// exec runs the git binary with args as they are.
func (g *Git) exec(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, g.binary(), args...)
	cmd.Env = gitEnv()
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("git %s: %w", strings.Join(args, " "), ctx.Err())
	}
	return strings.TrimSpace(out.String()), err
}

func (g *Git) binary() string {
	if g.Binary != "" {
		return g.Binary
	}
	return "git"
}

func (g *Git) timeout() time.Duration {
	if g.Timeout > 0 {
		return g.Timeout
	}
	return DefaultTimeout
}

// gitEnv is the environment git runs with: PATH, HOME (the user's git
// configuration), the locale and the temp directory of the kernel's, and
// nothing else (no API key or token the kernel was started with), with
// prompts off.
func gitEnv() []string {
	env := []string{"GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

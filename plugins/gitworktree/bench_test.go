package gitworktree

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/foya-dev/foya/core"
)

// benchRepo is a git repository with n committed files of about 1 KiB in
// 100 directories.
func benchRepo(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	gitT(b, dir, "init", "-q", "-b", "main")
	line := make([]byte, 1024)
	for i := range line {
		line[i] = 'a' + byte(i%26)
	}
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("d%02d", i%100))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.txt", i)), line, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	gitT(b, dir, "add", ".")
	gitT(b, dir, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "files")
	return dir
}

func gitT(tb testing.TB, dir string, args ...string) {
	tb.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// BenchmarkWorktreeAdd10k creates a session worktree (Git.Add: the checks,
// the exclude line and git worktree add with its checkout) on a
// repository of 10,000 files; removing it is outside the timing.
func BenchmarkWorktreeAdd10k(b *testing.B) {
	repo := benchRepo(b, 10000)
	g := &Git{}
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		wt, err := g.Add(ctx, repo, fmt.Sprintf("ses_bench%06d", i), core.WorktreeInput{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := g.Remove(ctx, repo, wt, core.WorktreeRemoval{Force: true, DeleteBranch: true}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkWorktreeRemove10k removes a clean session worktree and its
// branch (Git.Dirty, then Git.Remove, as deleteSession does) on a
// repository of 10,000 files.
func BenchmarkWorktreeRemove10k(b *testing.B) {
	repo := benchRepo(b, 10000)
	g := &Git{}
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		wt, err := g.Add(ctx, repo, fmt.Sprintf("ses_bench%06d", i), core.WorktreeInput{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if dirty, err := g.Dirty(ctx, wt); err != nil || dirty {
			b.Fatalf("dirty %v %v", dirty, err)
		}
		if err := g.Remove(ctx, repo, wt, core.WorktreeRemoval{DeleteBranch: true}); err != nil {
			b.Fatal(err)
		}
	}
}

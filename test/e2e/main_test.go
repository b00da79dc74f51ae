package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/internal/testenv"
	"github.com/foya-dev/foya/storage"
)

var (
	// foyaBin is the foya binary TestMain builds once for the package.
	foyaBin string
	// moduleRoot is the directory of the module's go.mod: the tests' paths
	// (test/*, docs/, testdata) are relative to it, not to the cwd.
	moduleRoot string
)

func TestMain(m *testing.M) {
	// The tests marked t.Parallel spend most of their time waiting on the
	// kernels, CLIs and browsers they start: four at a time.
	testenv.DefaultParallel(4)
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		fmt.Fprintf(os.Stderr, "find the module root (go env GOMOD = %q): %v\n", gomod, err)
		os.Exit(1)
	}
	moduleRoot = filepath.Dir(gomod)
	dir, err := os.MkdirTemp("", "foya-bin-")
	if err != nil {
		panic(err)
	}
	foyaBin = filepath.Join(dir, "foya")
	// As installed: the built-in plugins' own executables beside foya
	// (FOYA_PLUGIN_REEXEC=1 makes a kernel re-execute foya instead).
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if os.Getenv("FOYA_E2E_TRIM") == "1" { // as the README's install instructions build it
		args = append(args, "-trimpath", "-ldflags=-s -w")
	}
	// The third-party test plugins too (echo, videoecho): one go command
	// links them beside the rest; a test copies them into its data dir.
	build := exec.Command("go", append(args, ".", "./cmd/...", "./providers/echo", "./providers/videoecho")...)
	build.Dir = moduleRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build foya: %v\n%s", err, out)
		os.Exit(1)
	}
	// Kernels require their token on loopback too: requests of the
	// default client to a kernel started by startKernel carry it.
	http.DefaultClient.Transport = kernelTokens
	code := testenv.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// kernelProc is a running `foya serve`.
type kernelProc struct {
	cmd  *exec.Cmd
	addr string
	// token is the kernel's bearer token (empty with --insecure-no-token).
	token string
	mu    sync.Mutex
	logs  bytes.Buffer
	done  chan struct{}
}

var listenRe = regexp.MustCompile(`msg=listening addr=(\S+)`)

func startKernel(t testing.TB, dataDir string, extra ...string) *kernelProc {
	t.Helper()
	return startKernelBin(t, foyaBin, dataDir, extra...)
}

// startKernelBin is startKernel with the foya executable at bin.
func startKernelBin(t testing.TB, bin, dataDir string, extra ...string) *kernelProc {
	t.Helper()
	return startKernelEnv(t, bin, nil, dataDir, extra...)
}

// startKernelEnv is startKernelBin with env added to the kernel's
// environment.
func startKernelEnv(t testing.TB, bin string, env []string, dataDir string, extra ...string) *kernelProc {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "XDG_DATA_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir()), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	k := &kernelProc{cmd: cmd, done: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		defer close(k.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			k.mu.Lock()
			k.logs.WriteString(line + "\n")
			k.mu.Unlock()
			if m := listenRe.FindStringSubmatch(line); m != nil {
				addrc <- m[1]
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() { k.stop(t) })
	select {
	case k.addr = <-addrc:
	case <-k.done:
		t.Fatalf("kernel exited early:\n%s", k.Logs())
	case <-time.After(30 * time.Second):
		t.Fatalf("kernel did not start:\n%s", k.Logs())
	}
	k.token = kernelToken(t, dataDir, extra)
	// Tests about the token (--require-token) handle it themselves; the
	// others get it added by kernelTokens.
	if !slices.Contains(extra, "--require-token") && k.token != "" {
		kernelTokens.add(k.addr, k.token)
		t.Cleanup(func() { kernelTokens.remove(k.addr) })
	}
	return k
}

// kernelToken is the token of a kernel started with extra flags on dataDir.
func kernelToken(t testing.TB, dataDir string, extra []string) string {
	t.Helper()
	if slices.Contains(extra, "--insecure-no-token") {
		return ""
	}
	path := filepath.Join(dataDir, "auth-token")
	if i := slices.Index(extra, "--auth-token-file"); i >= 0 && i+1 < len(extra) {
		path = extra[i+1]
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the kernel's token: %v", err)
	}
	return strings.TrimSpace(string(raw))
}

// tokenTransport adds a kernel's bearer token to requests without an
// Authorization header sent to the address of a kernel started by
// startKernel.
type tokenTransport struct {
	mu     *sync.Mutex
	tokens map[string]string // host:port -> token
	base   http.RoundTripper // nil: http.DefaultTransport
}

var kernelTokens = &tokenTransport{mu: new(sync.Mutex), tokens: map[string]string{}}

func (tt *tokenTransport) add(addr, tok string) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.tokens[addr] = tok
}

func (tt *tokenTransport) remove(addr string) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	delete(tt.tokens, addr)
}

// tokenEnv is FOYA_TOKEN=<token> for a client command aimed (with --addr,
// or FOYA_ADDR in env) at a kernel started by startKernel: tests run client
// commands with a data directory of their own, which does not hold that
// kernel's token. Nil otherwise.
func tokenEnv(args, env []string) []string {
	addr := ""
	for i, a := range args {
		if a == "--addr" && i+1 < len(args) {
			addr = args[i+1]
		} else if v, ok := strings.CutPrefix(a, "--addr="); ok {
			addr = v
		}
	}
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "FOYA_ADDR="); ok && addr == "" {
			addr = v
		}
	}
	kernelTokens.mu.Lock()
	tok := kernelTokens.tokens[addr]
	kernelTokens.mu.Unlock()
	if tok == "" {
		return nil
	}
	return []string{"FOYA_TOKEN=" + tok}
}

func (tt *tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tt.mu.Lock()
	tok := tt.tokens[r.URL.Host]
	tt.mu.Unlock()
	if tok != "" && r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	if tt.base != nil {
		return tt.base.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// repoPath is a path under the module root.
func repoPath(elem ...string) string {
	return filepath.Join(append([]string{moduleRoot}, elem...)...)
}

func (k *kernelProc) Logs() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.logs.String()
}

func (k *kernelProc) url() string { return "http://" + k.addr }

// stop sends SIGTERM and waits for a graceful exit.
func (k *kernelProc) stop(t testing.TB) {
	select {
	case <-k.done:
		return
	default:
	}
	k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(15 * time.Second):
		k.cmd.Process.Kill()
		t.Errorf("kernel ignored SIGTERM for 15s:\n%s", k.Logs())
		<-k.done
	}
}

func (k *kernelProc) gql(t testing.TB, query string, vars map[string]any, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	resp, err := http.Post(k.url()+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Data   json.RawMessage
		Errors []json.RawMessage
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("%s: %s (%v)", query, raw, err)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatal(err)
		}
	}
}

func TestVersionAndUsage(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(foyaBin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "foya ") {
		t.Fatalf("version: %q %v", out, err)
	}
	cmd := exec.Command(foyaBin, "frobnicate")
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Fatalf("unknown command exit = %v", err)
	}
}

func TestServeCreatesPrivateDataDir(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "nested", "foya")
	k := startKernel(t, data)
	fi, err := os.Stat(data)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode %v, want 0700", fi.Mode().Perm())
	}
	// The playground is served at /playground (Foya web at /).
	resp, err := http.Get(k.url() + "/playground")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(page, []byte("graphiql")) {
		t.Fatalf("playground: %d %.200s", resp.StatusCode, page)
	}
}

// Restart: data survives, and sessions left in a turn are reset to idle.
func TestRestartKeepsDataAndResetsPhases(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	proj := t.TempDir()
	k := startKernel(t, data)
	p := k.createProject(t, proj)
	var ids []string
	for i := range 3 {
		ids = append(ids, k.createSession(t, client.CreateSessionInput{Title: ptr(fmt.Sprint("s", i)), ProjectId: ptr(p.Id)}))
	}
	k.stop(t)

	// Simulate a crash mid-turn: the log says session 0 was running.
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(data, "foya.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := core.NewEvent(ids[0], core.EventPhaseChanged, core.PhasePayload{Phase: core.PhaseTurn})
	if _, err := db.Append(ctx, ids[0], core.AnyHead, []core.Event{ev}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	k2 := startKernel(t, data)
	if !strings.Contains(k2.Logs(), "session phase reset to idle after restart") || !strings.Contains(k2.Logs(), ids[0]) {
		t.Fatalf("no reset log line:\n%s", k2.Logs())
	}
	var got struct {
		Sessions []struct {
			ID, Title, Phase string
			Project          struct{ ID string }
		}
		Projects []struct{ ID string }
	}
	decodeAs(t, map[string]any{"sessions": k2.listSessions(t, false).Sessions, "projects": k2.listProjects(t)}, &got)
	if len(got.Sessions) != 3 || len(got.Projects) != 1 {
		t.Fatalf("after restart: %+v", got)
	}
	for _, s := range got.Sessions {
		if s.Phase != "IDLE" || s.Project.ID != p.Id {
			t.Fatalf("session after restart: %+v", s)
		}
	}
}

// A third-party client: the npm graphql-ws package against a running kernel.
func TestNodeGraphQLWSClient(t *testing.T) {
	t.Parallel()
	if testing.Short() && !testenv.CI() {
		t.Skip("-short: skipping the npm client check")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		testenv.Optional(t, "npm is not installed: skipping the third-party graphql-ws client check (install Node.js and npm to run it)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Optional(t, "node is not installed: skipping the third-party graphql-ws client check")
	}
	dir := repoPath("test", "node")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := testenv.NPMInstall(ctx, npm, dir, "graphql-ws"); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	// A loopback kernel without a token (--insecure-no-token: this half is
	// about a client that sends none), and one beyond loopback that requires
	// the token (sent as a Bearer header and in connection_init).
	for _, remote := range []bool{false, true} {
		data := t.TempDir()
		base, env := "", os.Environ()
		if remote {
			k := startKernel(t, data, "--addr", "0.0.0.0:0")
			base = "http://127.0.0.1:" + portOf(t, k.addr)
			tok, err := os.ReadFile(filepath.Join(data, "auth-token"))
			if err != nil {
				t.Fatal(err)
			}
			env = append(env, "FOYA_TOKEN="+strings.TrimSpace(string(tok)))
		} else {
			base = startKernel(t, data, "--insecure-no-token").url()
		}
		cmd := exec.CommandContext(ctx, node, "subscribe.mjs", base)
		cmd.Dir = dir
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node client (token %v): %v\n%s", remote, err, out)
		}
		if !strings.Contains(string(out), "ok:") {
			t.Fatalf("node client output: %s", out)
		}
		t.Logf("token %v: %s", remote, bytes.TrimSpace(out))
	}
}

// Two kernels never share a data directory.
func TestDataDirIsLocked(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	startKernel(t, data)
	cmd := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", data)
	out, err := cmd.CombinedOutput()
	if err == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "in use by another foya kernel") {
		t.Fatalf("second kernel: %v\n%s", err, out)
	}
}

// installBuilt copies the executable name that TestMain built (foya, or
// the third-party test plugins echo and videoecho) to dst with mode 0755,
// in one write (as cp or an installer leaves a file).
func installBuilt(t *testing.T, name, dst string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(foyaBin), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, raw, 0o755); err != nil {
		t.Fatal(err)
	}
}

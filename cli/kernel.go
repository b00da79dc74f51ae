package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/edge/access"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// defaultKernelAddr is where the CLI looks for a running kernel unless
// $FOYA_ADDR or --addr says otherwise.
const defaultKernelAddr = "127.0.0.1:4777"

// kernelAddr is the default of --addr: $FOYA_ADDR, else defaultKernelAddr.
func kernelAddr() string {
	if a := strings.TrimSpace(os.Getenv("FOYA_ADDR")); a != "" {
		return a
	}
	return defaultKernelAddr
}

// addrUsage is the help text of --addr.
const addrUsage = "host:port of a running kernel, or http(s)://host:port ($FOYA_ADDR sets the default); when none answers, one is started for this command"

// kernelLink is the CLI's connection to a kernel: a running one, or one it
// started for the duration of the command.
type kernelLink struct {
	*client.Client
	spawned *spawnedKernel
}

// Close stops a kernel the command started; a running kernel is left alone.
func (l *kernelLink) Close() {
	if l.spawned != nil {
		l.spawned.stop()
	}
}

// connectOrSpawn connects to the kernel at addr; when nothing listens there
// it starts `foya serve --addr 127.0.0.1:0 --data-dir dataDir` as a child and
// connects to that. It says on stderr which happened. Requests carry the
// token clientToken finds.
func connectOrSpawn(ctx context.Context, addr, dataDir, tokenFile string, stderr io.Writer) (*kernelLink, error) {
	if err := checkAddr(client.New(addr, "").Addr()); err != nil {
		return nil, err
	}
	token, err := clientToken(tokenFile, dataDir, addr)
	if err != nil {
		return nil, err
	}
	c := client.New(addr, token)
	probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	probe, err := client.Probe(probeCtx, c)
	cancel()
	if err == nil {
		if !isFoya(probe) {
			return nil, fmt.Errorf("the server at %s answered, but it is not a Foya kernel (its GraphQL schema has no Foya SessionEvent type); "+
				"give a foya serve address with --addr or $FOYA_ADDR (default %s)", c.Endpoint(), defaultKernelAddr)
		}
		fmt.Fprintf(stderr, "connected to kernel at %s\n", addr)
		return &kernelLink{Client: c}, nil
	}
	if !isConnRefused(err) {
		var ke *client.Error
		if errors.As(err, &ke) {
			return nil, err // a kernel's coded error (UNAUTHENTICATED…)
		}
		return nil, fmt.Errorf("no Foya kernel answers at %s: %w", c.Endpoint(), err)
	}
	k, err := spawnKernel(ctx, dataDir)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "started a kernel for this command (data dir %s) at %s\n", k.dataDir, k.addr)
	// The kernel creates its token before it listens: on a first run there
	// was none to read above.
	if token, err = clientToken(tokenFile, dataDir, k.addr); err != nil {
		k.stop()
		return nil, err
	}
	return &kernelLink{Client: client.New(k.addr, token), spawned: k}, nil
}

// isFoya reports whether a Probe answer comes from a Foya kernel.
func isFoya(p *client.ProbeResponse) bool {
	if p == nil || p.Foya == nil || p.Foya.Name == nil || *p.Foya.Name != "SessionEvent" {
		return false
	}
	for _, f := range p.Foya.Fields {
		if f.Name == "seq" {
			return true
		}
	}
	return false
}

// checkAddr refuses a kernel address without a port: "127.0.0.1" alone
// would otherwise fail to connect and start a kernel in the default data
// directory instead of reaching the one meant.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || strings.ContainsAny(addr, "/?#") {
		return cmdutil.UsageError{Err: fmt.Errorf("--addr %q: give the kernel's host:port, e.g. %s (or http://host:port)", addr, defaultKernelAddr)}
	}
	return nil
}

// clientToken is the bearer token the CLI sends: $FOYA_TOKEN, else the
// contents of tokenFile, else, for a loopback addr only, the data
// directory's auth-token file when it exists (the local kernel's token is
// never sent to another machine unless asked to).
func clientToken(tokenFile, dataDir, addr string) (string, error) {
	if t := strings.TrimSpace(os.Getenv("FOYA_TOKEN")); t != "" {
		return t, nil
	}
	if tokenFile != "" {
		return access.ReadToken(tokenFile)
	}
	if !access.IsLoopbackName(client.New(addr, "").Host()) {
		return "", nil
	}
	tok, err := access.ReadToken(filepath.Join(dataDir, access.TokenFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return tok, err
}

// isConnRefused reports whether err means that nothing listens at the address.
func isConnRefused(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// spawnedKernel is a `foya serve` child process.
type spawnedKernel struct {
	cmd     *exec.Cmd
	addr    string
	dataDir string
	done    chan struct{}
	mu      sync.Mutex
	tail    []string // last lines of its log, for errors
}

func spawnKernel(ctx context.Context, dataDir string) (*spawnedKernel, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the foya executable: %w", err)
	}
	dir, err := cmdutil.PrepareDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	childSysProcAttr(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("spawn kernel: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("spawn kernel: %w", err)
	}
	k := &spawnedKernel{cmd: cmd, dataDir: dir, done: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		defer close(k.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "#"+access.WebLinkParam+"=") {
				continue // the web link holds the token: never repeated in an error
			}
			k.mu.Lock()
			k.tail = append(k.tail, line)
			if len(k.tail) > 20 {
				k.tail = k.tail[1:]
			}
			k.mu.Unlock()
			if a, ok := listeningAddr(line); ok {
				select {
				case addrc <- a:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case k.addr = <-addrc:
		return k, nil
	case <-k.done:
		return nil, fmt.Errorf("the spawned kernel exited before listening:\n%s", k.log())
	case <-time.After(30 * time.Second):
		k.stop()
		return nil, fmt.Errorf("the spawned kernel did not listen within 30s:\n%s", k.log())
	case <-ctx.Done():
		k.stop()
		return nil, fmt.Errorf("spawn kernel: %w", ctx.Err())
	}
}

// listeningAddr extracts addr from serve's `msg=listening addr=…` log line.
func listeningAddr(line string) (string, bool) {
	if !strings.Contains(line, "msg=listening ") {
		return "", false
	}
	_, rest, ok := strings.Cut(line, " addr=")
	if !ok {
		return "", false
	}
	addr, _, _ := strings.Cut(rest, " ")
	return addr, addr != ""
}

func (k *spawnedKernel) log() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return strings.Join(k.tail, "\n")
}

// stop sends SIGTERM and waits for the kernel to exit (SIGKILL after 15s).
func (k *spawnedKernel) stop() {
	select {
	case <-k.done:
		return
	default:
	}
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(15 * time.Second):
		_ = k.cmd.Process.Kill()
		<-k.done
	}
}

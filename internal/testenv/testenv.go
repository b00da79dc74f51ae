// Package testenv makes the optional checks of the test suite honest: a
// check that needs a tool the machine may lack (Node.js and npm, Chromium,
// script(1)…) is skipped with its reason outside CI, fails under CI=true
// (.ci/run installs those tools), and every skip reason is summarised at the
// end of the package's tests, also without -v.
package testenv

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// CI reports whether the tests run under CI=true.
func CI() bool { return os.Getenv("CI") == "true" }

var (
	mu    sync.Mutex
	skips = map[string]string{} // test name → reason
)

// Optional skips t because an optional tool is missing, saying why; under
// CI=true it fails t instead.
func Optional(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("CI=true, but this check cannot run: %s", msg)
	}
	mu.Lock()
	skips[t.Name()] = msg
	mu.Unlock()
	t.Skip(msg)
}

// Main runs the package's tests (call it from TestMain) and then writes the
// skipped optional checks with their reasons to stderr, and to the
// terminal when there is one: go test shows a passing package's output only
// with -v, and a skipped check must not pass unnoticed.
func Main(m *testing.M) int {
	code := m.Run()
	if s := Summary(); s != "" {
		fmt.Fprint(os.Stderr, s)
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			io.WriteString(tty, s)
			tty.Close()
		}
	}
	return code
}

// DefaultParallel makes n the number of parallel tests of the package
// (t.Parallel) unless -test.parallel was given: call it from TestMain
// before Main. For packages whose tests mostly wait on processes they
// start (kernels, browsers), where GOMAXPROCS tests at a time leave the
// machine half idle.
func DefaultParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", fmt.Sprint(n)); err != nil {
			panic(err)
		}
	}
}

// Summary lists the optional checks skipped so far ("" when none).
func Summary() string {
	mu.Lock()
	defer mu.Unlock()
	if len(skips) == 0 {
		return ""
	}
	names := make([]string, 0, len(skips))
	for n := range skips {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%d optional check(s) skipped (CI=true makes them fail):\n", len(names))
	for _, n := range names {
		fmt.Fprintf(&b, "  SKIP %s: %s\n", n, skips[n])
	}
	return b.String()
}

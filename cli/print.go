package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// isTerminal reports whether f is a terminal: a character device that is
// not /dev/null. (golang.org/x/term is not a dependency.)
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	fi, err := file.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

// printer renders a turn for people: assistant text on stdout, everything
// else compact on stderr, dim or red only when stderr is a terminal.
type printer struct {
	// stdout is buffered: a burst of deltas is one write, flushed when no
	// more events are waiting (see flush) and before anything goes to
	// stderr, so the two streams stay in order on a terminal.
	stdout      *bufio.Writer
	stderr      io.Writer
	color       bool
	ttyOut      bool
	streamed    strings.Builder // assistant text of the current message so far
	midLine     bool            // stdout does not end with a newline
	wrote       bool            // any assistant text was printed
	inReasoning bool
}

func newPrinter(stdout, stderr io.Writer) *printer {
	return &printer{stdout: bufio.NewWriterSize(stdout, 64<<10), stderr: stderr, color: isTerminal(stderr), ttyOut: isTerminal(stdout)}
}

// flush writes out buffered stdout text.
func (p *printer) flush() error {
	if err := p.stdout.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

const (
	ansiDim   = "\x1b[2m"
	ansiRed   = "\x1b[31m"
	ansiReset = "\x1b[0m"
)

// text streams an assistant text delta to stdout.
func (p *printer) text(s string) {
	if s == "" {
		return
	}
	p.endReasoning()
	p.streamed.WriteString(s)
	s = cmdutil.Neutralize(s)
	fmt.Fprint(p.stdout, s)
	p.midLine = !strings.HasSuffix(s, "\n")
	p.wrote = true
}

// finishText completes an assistant message: deltas a late subscription
// missed are printed from the final text.
func (p *printer) finishText(full string) {
	got := p.streamed.String()
	if strings.HasPrefix(full, got) {
		p.text(full[len(got):])
	}
	p.streamed.Reset()
}

// endText ends the assistant's output with a newline.
func (p *printer) endText() {
	p.endReasoning()
	if p.midLine {
		fmt.Fprintln(p.stdout)
		p.midLine = false
	}
}

func (p *printer) reasoning(s string) {
	p.flush()
	if !p.inReasoning {
		p.breakLine()
		p.inReasoning = true
		if p.color {
			fmt.Fprint(p.stderr, ansiDim)
		}
		fmt.Fprint(p.stderr, "thinking: ")
	}
	fmt.Fprint(p.stderr, cmdutil.Neutralize(s))
}

func (p *printer) endReasoning() {
	if !p.inReasoning {
		return
	}
	p.inReasoning = false
	if p.color {
		fmt.Fprint(p.stderr, ansiReset)
	}
	fmt.Fprintln(p.stderr)
}

// breakLine ends a half-written stdout line before stderr output when both
// go to the same terminal.
func (p *printer) breakLine() {
	if p.midLine && p.ttyOut && p.color {
		fmt.Fprintln(p.stdout)
		p.midLine = false
	}
}

func (p *printer) line(style, format string, args ...any) {
	p.endReasoning()
	p.breakLine()
	p.flush()
	msg := cmdutil.Neutralize(fmt.Sprintf(format, args...))
	if p.color {
		msg = style + msg + ansiReset
	}
	fmt.Fprintln(p.stderr, msg)
}

// info is a dim line on stderr (tool calls, results, usage).
func (p *printer) info(format string, args ...any) { p.line(ansiDim, format, args...) }

// note is a status line on stderr.
func (p *printer) note(format string, args ...any) { p.line(ansiDim, format, args...) }

// errorf is a red line on stderr.
func (p *printer) errorf(format string, args ...any) { p.line(ansiRed, format, args...) }

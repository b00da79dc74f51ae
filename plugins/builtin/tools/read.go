package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/foya-dev/foya/plugins/sdk"
)

func readInfo() sdk.Tool {
	return sdk.Tool{
		Name: "read",
		Description: fmt.Sprintf("Read a file inside the project. Text comes back line-numbered like `cat -n` "+
			"(default the first %d lines; lines over %d bytes are cut); use offset and limit for long files. "+
			"PNG, JPEG, GIF and WebP images (up to %d MiB) are attached for you to see. Other binary files are refused.",
			DefaultReadLimit, DefaultMaxLineBytes, DefaultMaxImageBytes>>20),
		Schema: schema([]string{"path"}, map[string]any{
			"path":   prop("string", "File path, relative to the project directory or absolute inside it."),
			"offset": prop("integer", "1-based line number to start at (default 1)."),
			"limit":  prop("integer", fmt.Sprintf("Number of lines to read (default %d).", DefaultReadLimit)),
		}),
		ReadOnly: true,
	}
}

type readInput struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func (s *Set) read(ctx context.Context, c *call) (sdk.ToolResult, error) {
	var in readInput
	if err := decode(c, &in); err != nil {
		return sdk.ToolResult{}, err
	}
	if in.Offset < 0 || in.Limit < 0 {
		return sdk.ToolResult{}, errors.New("offset and limit must not be negative")
	}
	if in.Offset == 0 {
		in.Offset = 1
	}
	if in.Limit == 0 {
		in.Limit = DefaultReadLimit
	}
	abs, rel, err := c.scope.resolve(in.Path)
	if err != nil {
		return sdk.ToolResult{}, err
	}
	f, err := c.scope.openRead(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return sdk.ToolResult{}, fmt.Errorf("%s does not exist", rel)
	}
	if err != nil {
		return sdk.ToolResult{}, fmt.Errorf("%s: %w", rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return sdk.ToolResult{}, err
	}
	if fi.IsDir() {
		return sdk.ToolResult{}, fmt.Errorf("%s is a directory; use glob to list files", rel)
	}
	if !fi.Mode().IsRegular() {
		return sdk.ToolResult{}, fmt.Errorf("%s is not a regular file", rel)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(8192)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return sdk.ToolResult{}, err
	}
	if mt := imageType(head); mt != "" {
		if fi.Size() > s.cfg.MaxImageBytes {
			return sdk.ToolResult{}, fmt.Errorf("%s is a %s image of %d bytes; the limit is %d bytes", rel, mt, fi.Size(), s.cfg.MaxImageBytes)
		}
		data, err := io.ReadAll(io.LimitReader(br, s.cfg.MaxImageBytes+1))
		if err != nil {
			return sdk.ToolResult{}, err
		}
		return sdk.ToolResult{
			Text:       fmt.Sprintf("image %s (%s, %d bytes) attached", rel, mt, len(data)),
			Attachment: &sdk.Attachment{Name: filepath.Base(abs), MediaType: mt, Data: data},
		}, nil
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return sdk.ToolResult{}, fmt.Errorf("%s is a binary file (%d bytes); read shows only text and images", rel, fi.Size())
	}
	return readLines(ctx, br, rel, in.Offset, in.Limit)
}

// readLines formats lines [offset, offset+limit) like `cat -n` and counts the
// rest.
func readLines(ctx context.Context, br *bufio.Reader, rel string, offset, limit int) (sdk.ToolResult, error) {
	var out strings.Builder
	n, shown, capped := 0, 0, false
	for {
		line, cut, err := readLine(br, DefaultMaxLineBytes)
		if err == io.EOF {
			break
		}
		if err != nil {
			return sdk.ToolResult{}, err
		}
		n++
		if n%4096 == 0 && ctx.Err() != nil {
			return sdk.ToolResult{}, ctx.Err()
		}
		if n < offset || shown >= limit || capped {
			continue
		}
		if out.Len() > DefaultMaxReadOutputBytes {
			capped = true
			continue
		}
		fmt.Fprintf(&out, "%6d\t%s", n, line)
		if cut > 0 {
			fmt.Fprintf(&out, "… [line cut, %d more bytes]", cut)
		}
		out.WriteByte('\n')
		shown++
	}
	switch {
	case n == 0:
		return sdk.ToolResult{Text: fmt.Sprintf("%s is empty", rel)}, nil
	case offset > n:
		return sdk.ToolResult{}, fmt.Errorf("offset %d is past the end of %s (%d lines)", offset, rel, n)
	}
	if last := offset + shown - 1; offset > 1 || last < n {
		reason := ""
		if capped {
			reason = fmt.Sprintf(" (output capped at %d bytes)", DefaultMaxReadOutputBytes)
		}
		fmt.Fprintf(&out, "[showing lines %d-%d of %d%s; use offset and limit to read more]\n", offset, last, n, reason)
	}
	return sdk.ToolResult{Text: out.String()}, nil
}

// readLine reads one line without its line ending, keeping at most max bytes
// (cut at a rune boundary) and returning how many bytes were dropped.
func readLine(br *bufio.Reader, max int) (string, int, error) {
	var buf []byte
	dropped := 0
	read := false
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF && read {
				break
			}
			return "", 0, err
		}
		read = true
		take := 0
		if dropped == 0 {
			take = min(max-len(buf), len(chunk))
			for take < len(chunk) && take > 0 && !utf8.RuneStart(chunk[take]) {
				take-- // cut at a rune boundary
			}
			buf = append(buf, chunk[:take]...)
		}
		dropped += len(chunk) - take
		if !isPrefix {
			break
		}
	}
	return string(buf), dropped, nil
}

// imageType sniffs the image formats a model can take.
func imageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

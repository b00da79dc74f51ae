package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/foya-dev/foya/core"
)

// scopeRefusal checks the path argument of a file tool call against the
// session's scope before anyone is asked to approve it: a path outside the
// scope directory (through "..", an absolute path or a symlink) or inside
// the kernel's data directory is refused here, so nobody approves a call
// the tool would refuse anyway. The tool plugin checks again when it runs.
// It returns "" when the call may go on.
func (cfg *Config) scopeRefusal(scope string, c core.ToolCall) string {
	if !fileTools[c.Name] {
		return ""
	}
	var in struct {
		Path *string `json:"path"`
	}
	if json.Unmarshal(c.Input, &in) != nil || in.Path == nil || strings.TrimSpace(*in.Path) == "" {
		return ""
	}
	root := realPath(scope)
	p := *in.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	real := realPath(filepath.Clean(p))
	if !pathWithin(root, real) {
		return fmt.Sprintf("refused: path %s is outside the session's directory %s", *in.Path, scope)
	}
	if data := cfg.DataDir; data != "" {
		data = realPath(data)
		if pathWithin(data, real) && !pathWithin(data, root) {
			return fmt.Sprintf("refused: path %s is inside the kernel's data directory, which tools cannot access", *in.Path)
		}
	}
	for _, h := range cfg.HiddenPaths {
		if pathWithin(realPath(h), real) {
			return fmt.Sprintf("refused: path %s is one of the kernel's secrets, which tools cannot access", *in.Path)
		}
	}
	return ""
}

// fileTools are the built-in tools whose "path" argument names a file or
// directory in the session's scope.
var fileTools = map[string]bool{"read": true, "write": true, "edit": true, "glob": true, "grep": true}

// realPath resolves the symlinks of the longest existing prefix of the
// clean absolute path p.
func realPath(p string) string {
	var rest []string
	for cur := p; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(cur)
		if !errors.Is(err, fs.ErrNotExist) || parent == cur {
			return p
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// pathWithin reports whether p is dir or lies beneath it.
func pathWithin(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

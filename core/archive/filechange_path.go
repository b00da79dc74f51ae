package archive

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
)

// ValidFileChangePath checks the path of a recorded file change as the
// write tool would produce it (docs/export.md): relative to the session's
// working directory, slash-separated and clean (no empty, "." or ".."
// component, no leading or trailing slash), no backslash, NUL or other
// control character, and no ".git" component (in any letter case). The
// error says which rule the path breaks. Import refuses such a change and a
// rewind never writes it.
func ValidFileChangePath(p string) error {
	switch {
	case p == "":
		return errors.New("empty")
	case len(p) > core.MaxFileChangePath:
		return fmt.Errorf("longer than %d bytes", core.MaxFileChangePath)
	case !utf8.ValidString(p):
		return errors.New("not valid UTF-8")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return errors.New("absolute; a file change is relative to the project")
	case strings.ContainsRune(p, '\\'):
		return errors.New("contains a backslash; components are separated by /")
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errors.New("contains a control character")
	}
	for c := range strings.SplitSeq(p, "/") {
		switch {
		case c == "..":
			return errors.New("escapes the project (a .. component)")
		case c == "" || c == ".":
			return errors.New("not a clean path (an empty or . component)")
		case strings.EqualFold(c, ".git"):
			return errors.New("lies in .git, which file changes never touch")
		}
	}
	if path.Clean(p) != p {
		return errors.New("not a clean path")
	}
	return nil
}

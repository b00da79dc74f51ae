package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// systemReadable are the directories a confined command may always read
// and execute when reads are confined (Policy.ConfineReads): what a shell,
// git, compilers and interpreters installed system-wide need. /run is
// listed entry by entry in SystemReadable, without /run/user (the user's
// runtime directory: agent sockets, keyrings, `foya web`'s link file).
var systemReadable = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", "/opt", "/nix", "/snap", "/proc", "/dev", "/sys",
}

// SystemReadable is the system part of the read roots (docs/sandbox.md):
// the directories above that exist, and every entry of /run but user.
func SystemReadable() []string {
	var out []string
	for _, d := range systemReadable {
		if _, err := os.Lstat(d); err == nil {
			out = append(out, d)
		}
	}
	if entries, err := os.ReadDir("/run"); err == nil {
		for _, e := range entries {
			if e.Name() != "user" {
				out = append(out, filepath.Join("/run", e.Name()))
			}
		}
	}
	return out
}

// HomeReadable are the files under home every confined command may read:
// git's global configuration (~/.gitconfig, ~/.config/git), without which
// git refuses to run when it cannot read it, and which holds the user's
// commit identity. Nothing else of home is readable unless a root says so.
func HomeReadable(home string) []string {
	if home == "" {
		return nil
	}
	return []string{filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git")}
}

// homeHubs are directories directly under HOME that hold many programs'
// private state: never made readable as a toolchain's root.
var homeHubs = []string{".local", ".config", ".cache", ".ssh", ".gnupg", ".aws", ".kube", ".docker"}

// ToolchainReadable is the read roots a command needs for the programs on
// its PATH (a colon-separated list): every absolute PATH directory and,
// for one named bin that lies under home, its parent (~/go/bin → ~/go,
// ~/.cargo/bin → ~/.cargo: the toolchain around the program), unless that
// parent is home itself, one of the shared directories under it (~/.local,
// ~/.config, ~/.cache, …) or contains a hidden path. Outside home a bin
// directory's parent is not added (/usr, /opt are system roots; another
// directory could hold other projects).
func ToolchainReadable(path, home string, hidden []string) []string {
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		dir = filepath.Clean(dir)
		out = appendPath(out, dir)
		if filepath.Base(dir) != "bin" || home == "" {
			continue
		}
		parent := filepath.Dir(dir)
		if !strictlyWithin(filepath.Clean(home), parent) || !toolRoot(parent, home, hidden) {
			continue
		}
		out = appendPath(out, parent)
	}
	return out
}

// ProgramReadable is the read roots an MCP server configured as argv
// needs besides the system's: the directory of its program and of every
// absolute path among its arguments that exists; for a path inside a
// node_modules directory, that whole node_modules directory (Node.js
// resolves dependencies there); for a program in a bin directory, the
// directory around it (a virtual environment, a toolchain), with the same
// exceptions as ToolchainReadable.
func ProgramReadable(argv []string, pathList, home string, hidden []string) []string {
	var out []string
	for i, a := range argv {
		p := a
		if i == 0 && !strings.Contains(a, "/") {
			p = findOnPath(a, pathList)
		}
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		for _, q := range []string{p, realOr(p)} {
			if j := strings.Index(q+"/", "/node_modules/"); j >= 0 {
				out = appendPath(out, q[:j]+"/node_modules")
				continue
			}
			dir := q
			if !fi.IsDir() {
				dir = filepath.Dir(q)
			}
			if dir == "/" {
				continue
			}
			out = appendPath(out, dir)
			if filepath.Base(dir) == "bin" {
				if parent := filepath.Dir(dir); toolRoot(parent, home, hidden) {
					out = appendPath(out, parent)
				}
			}
		}
	}
	return out
}

// toolRoot reports whether dir may be opened for reading as a program's
// surroundings: not /, not home or above it, not a shared directory of
// home, and holding no hidden path.
func toolRoot(dir, home string, hidden []string) bool {
	if dir == "/" {
		return false
	}
	if home != "" {
		home = filepath.Clean(home)
		if dir == home || strictlyWithin(dir, home) {
			return false
		}
		for _, h := range homeHubs {
			if dir == filepath.Join(home, h) {
				return false
			}
		}
	}
	for _, h := range hidden {
		if h == dir || strictlyWithin(dir, h) {
			return false
		}
	}
	return true
}

// strictlyWithin reports whether p lies beneath dir (not dir itself).
func strictlyWithin(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != "." && r != ".." && !strings.HasPrefix(r, "../") && !filepath.IsAbs(r)
}

func realOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func appendPath(out []string, p string) []string {
	if slices.Contains(out, p) {
		return out
	}
	return append(out, p)
}

// findOnPath is the first executable file name in the PATH list, or name.
func findOnPath(name, pathList string) string {
	for _, dir := range filepath.SplitList(pathList) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return name
}

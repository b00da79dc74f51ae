package daemon

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
)

// ReexecEnv, set to 1 in the kernel's environment, runs every built-in
// plugin as the kernel binary re-executed (`foya plugin NAME`) even where
// its own executable lies beside the kernel's (for measuring one against
// the other).
const ReexecEnv = "FOYA_PLUGIN_REEXEC"

// PluginExecPrefix starts the name of a built-in plugin's own executable:
// foya-plugin-openai, foya-plugin-tools, … (packages cmd/foya-plugin-NAME;
// `go install ./...` or `go build -o DIR/ ./...` put them beside foya).
const PluginExecPrefix = "foya-plugin-"

// builtinExec is the path of the built-in plugin name's own executable:
// PluginExecPrefix+name in the directory of exe (symbolic links resolved),
// when it is a regular executable file of the same build as the running
// kernel (see sameBuild). Empty otherwise: the kernel binary serves it as
// `exe plugin name`, as under `go run . serve`.
//
// The own executable maps only the plugin's code (a few MB) where the
// kernel binary maps every package of the kernel: a process of it costs
// less resident and proportional memory (BENCHMARKS.md, issue 37).
func builtinExec(exe, name string) string {
	if os.Getenv(ReexecEnv) == "1" || exe == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	path := filepath.Join(filepath.Dir(exe), PluginExecPrefix+name)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	if !sameBuild(path) {
		return ""
	}
	return path
}

// sameBuild reports whether the executable at path was built from the
// same module version and source revision with the same Go toolchain as
// the running kernel (its embedded build information): a plugin executable
// left from an older install is not used. (Builds of a modified work tree
// with no version control information to tell them apart count as the
// same: build them together, `go build -o DIR/ ./...`.)
func sameBuild(path string) bool {
	self := ownBuild()
	if self == nil {
		return false
	}
	other, err := buildinfo.ReadFile(path)
	if err != nil {
		return false
	}
	return buildKey(other) == buildKey(self)
}

var ownBuild = sync.OnceValue(func() *debug.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return bi
})

// buildKey is what two executables of one build share: the toolchain, the
// main module's path and version, the revision and whether the tree was
// modified.
func buildKey(bi *debug.BuildInfo) [6]string {
	k := [6]string{bi.GoVersion, bi.Main.Path, bi.Main.Version}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			k[3] = s.Value
		case "vcs.time":
			k[4] = s.Value
		case "vcs.modified":
			k[5] = s.Value
		}
	}
	return k
}

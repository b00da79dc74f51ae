// Package sandbox confines the commands tool plugins run (the built-in
// `bash` tool): writes only under a few roots (Landlock), the kernel's data
// directory masked, every process the command starts ended with it, and
// optionally no network.
//
// A confined command runs under a small helper, the kernel executable itself
// re-executed as `<exe> __sandbox POLICY`, because confinement must be set
// up in the child between fork and exec, which Go cannot do in place. Where
// user namespaces work, the helper starts as PID 1 of new user, mount and
// PID namespaces (and a network namespace when the network is off); it
// mounts an empty read-only tmpfs over each hidden directory (binding the
// command's own directory back when it lies inside one), mounts a /proc for
// its PID namespace, applies Landlock, and starts `bash` as the caller's
// uid in a nested user namespace. When the helper exits or is killed, the
// kernel kills every process left in its PID namespace. Without user
// namespaces the helper applies Landlock only and tracks the command's
// processes as a child subreaper. See docs/sandbox.md.
package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
)

// HelperCommand is the first argument that makes a binary act as the
// sandbox helper; main (and test binaries) call MaybeHelper first thing.
const HelperCommand = "__sandbox"

// Policy is what one confined command may do and how to run it.
type Policy struct {
	// Namespaces runs the command in new user, mount and PID namespaces.
	Namespaces bool `json:"namespaces"`
	// Writable roots: the command may create, change and delete files only
	// beneath them (and write to Devices).
	Writable []string `json:"writable"`
	// ConfineReads makes Landlock handle reading and executing files and
	// listing directories too: the command may read only beneath
	// SystemReadable(), Readable, Writable and Devices, and execute the
	// helper's own executable (docs/sandbox.md).
	ConfineReads bool `json:"confineReads,omitempty"`
	// Readable are more read-and-execute roots (directories or files) when
	// ConfineReads is set.
	Readable []string `json:"readable,omitempty"`
	// Devices are files the command may write but not create or delete
	// (/dev/null and the like).
	Devices []string `json:"devices"`
	// Hidden directories are masked by an empty read-only directory, hidden
	// files by /dev/null (needs Namespaces).
	Hidden []string `json:"hidden"`
	// Expose lists directories inside a Hidden one that stay visible at
	// their path (a scratch directory under the data directory).
	Expose []string `json:"expose"`
	// Network false denies TCP connect and bind (Landlock ABI 4+) and, with
	// Namespaces, gives the command an empty network namespace.
	Network bool `json:"network"`
	// UID and GID are the caller's ids, which the command keeps.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// Dir, Env and Argv are the command's working directory, whole
	// environment and argument vector.
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
	Argv []string `json:"argv"`

	// Stdin gives the command the helper's standard input (an MCP
	// server's requests); otherwise it reads /dev/null.
	Stdin bool `json:"stdin,omitempty"`
	// NoReport: the caller passes no report pipe as fd 3 and reads no
	// Report (Command).
	NoReport bool `json:"noReport,omitempty"`
	// Exec replaces the helper by the command once the mounts are set up,
	// instead of running it as a child: no PID namespace, no leftover
	// tracking, no report. It starts the tools plugin itself with the data
	// directory masked.
	Exec bool `json:"exec,omitempty"`
	// NoLandlock applies no Landlock ruleset (with Exec: the tools plugin
	// writes in every session's directory; its bash calls are confined by
	// a helper of their own).
	NoLandlock bool `json:"noLandlock,omitempty"`
	// InheritEnv gives the command the helper's own environment instead of
	// Env (with Exec: the environment go-plugin set for the plugin).
	InheritEnv bool `json:"inheritEnv,omitempty"`
	// Limits are the resource limits of the command and everything it
	// starts.
	Limits Limits `json:"limits,omitzero"`
}

// Report is what the helper tells its caller after the command ended.
type Report struct {
	// Started says the command ran; when false, Error says why.
	Started bool   `json:"started"`
	Error   string `json:"error,omitempty"`
	// ExitCode is the command's exit status, or -1 when Signal killed it.
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	// Leftover describes processes the command left running when it
	// ended; the helper killed them.
	Leftover []string `json:"leftover,omitempty"`
	// ABI is the Landlock ABI version the kernel offers (0: none).
	ABI int `json:"abi"`
	// Landlock says whether the Landlock ruleset was enforced.
	Landlock bool `json:"landlock"`
	// ReadsConfined says the ruleset also confined reads (ConfineReads
	// with Landlock enforced).
	ReadsConfined bool `json:"readsConfined,omitempty"`
	// Namespaces, Masked and Proc say what the namespace setup achieved.
	Namespaces bool `json:"namespaces"`
	Masked     bool `json:"masked"`
	Proc       bool `json:"proc"`
	// ProcLimit says what enforces Limits.Procs: "pids cgroup" or
	// "RLIMIT_NPROC" (empty: no process limit asked for).
	ProcLimit string `json:"procLimit,omitempty"`
	// CPUMeter says what measured the call's CPU time for
	// Limits.CPUSeconds: "cgroup" or "/proc" (empty: no CPU budget).
	CPUMeter string `json:"cpuMeter,omitempty"`
	// CPUExceeded says the call used its CPU budget and was killed.
	CPUExceeded bool `json:"cpuExceeded,omitempty"`
	// Notes are remarks on degraded setup steps.
	Notes []string `json:"notes,omitempty"`
}

// DefaultDevices are the device files every command may write.
var DefaultDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// MaybeHelper runs the helper and exits when os.Args asks for it; it
// returns otherwise. Call it at the very start of main (and of TestMain in
// tests that run confined commands from the test binary).
func MaybeHelper() {
	if len(os.Args) > 1 && os.Args[1] == HelperCommand {
		os.Exit(helperMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == limitsCommand {
		os.Exit(limitsMain(os.Args[2:]))
	}
}

func encodePolicy(p Policy) (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode sandbox policy: %w", err)
	}
	return string(b), nil
}

// Package hooks owns the hooks document (Claude Code's format): parsing and
// validation, tool-name matchers, the kernel-wide document and the trust of
// project hooks files. The engine decides when hooks run; a core.HookRunner
// given at construction runs them.
//
// It imports only the standard library and core.
package hooks

package deptest

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// A Package is what the check needs of a package `go list -json` lists.
type Package struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Module     *struct{ Path string }
}

// A Violation is an import that breaks the table.
type Violation struct {
	Pkg, Import string // relative to Module for module packages
	Rule        *Rule  // nil: no rule governs Pkg
}

func (v Violation) String() string {
	if v.Rule == nil {
		return fmt.Sprintf("%s: no rule in internal/deptest's table governs this package; add one", v.Pkg)
	}
	return fmt.Sprintf("%s imports %s, which breaks the rule for %q: %s", v.Pkg, v.Import, v.Rule.Pkg, v.Rule.Rule)
}

// Check checks the imports of the module's packages in pkgs (the output of
// `go list -deps -json` over the module: the module's packages and every
// package they import) against rules.
func Check(pkgs []Package, rules []Rule) []Violation {
	byPath := map[string]Package{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	var out []Violation
	for _, p := range pkgs {
		from, ok := relative(p)
		if !ok {
			continue
		}
		r := governing(from, rules)
		if r == nil {
			out = append(out, Violation{Pkg: from})
			continue
		}
		for _, imp := range p.Imports {
			q, known := byPath[imp]
			if !known || q.Standard {
				continue // the standard library (go list lists every import it resolves)
			}
			to, allowed := allowed(q, r)
			if !allowed {
				out = append(out, Violation{Pkg: from, Import: to, Rule: r})
			}
		}
	}
	return out
}

// relative is a module package's path relative to Module ("." for the root).
func relative(p Package) (string, bool) {
	if p.Standard || p.Module == nil || p.Module.Path != Module {
		return "", false
	}
	if p.ImportPath == Module {
		return ".", true
	}
	return strings.TrimPrefix(p.ImportPath, Module+"/"), true
}

// allowed says whether r allows importing q; to names q as an edge does:
// a module package relative to Module, a third-party one by its module
// (a listed module allows the modules below its path too: bun's dialects).
func allowed(q Package, r *Rule) (to string, ok bool) {
	if rel, in := relative(q); in {
		return rel, slices.ContainsFunc(r.Imports, func(pat string) bool { return match(pat, rel) })
	}
	mod := q.ImportPath
	if q.Module != nil {
		mod = q.Module.Path
	}
	return mod, slices.ContainsFunc(r.Modules, func(m string) bool { return m == "*" || m == mod || strings.HasPrefix(mod, m+"/") })
}

// governing is the most specific rule whose pattern matches pkg: an exact
// pattern before one with "*", that before one with "/...", a longer before
// a shorter.
func governing(pkg string, rules []Rule) *Rule {
	var best *Rule
	bestKind, bestLen := -1, -1
	for i := range rules {
		r := &rules[i]
		if !match(r.Pkg, pkg) {
			continue
		}
		kind := 2
		switch {
		case r.Pkg == "..." || strings.HasSuffix(r.Pkg, "/..."):
			kind = 0
		case strings.Contains(r.Pkg, "*"):
			kind = 1
		}
		if kind > bestKind || (kind == bestKind && len(r.Pkg) > bestLen) {
			best, bestKind, bestLen = r, kind, len(r.Pkg)
		}
	}
	return best
}

// match says whether the package pattern pat matches the relative path pkg.
func match(pat, pkg string) bool {
	switch {
	case pat == "...":
		return true
	case strings.HasSuffix(pat, "/..."):
		base := strings.TrimSuffix(pat, "/...")
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	case strings.Contains(pat, "*"):
		ok, err := path.Match(pat, pkg)
		return err == nil && ok
	}
	return pat == pkg
}

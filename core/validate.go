package core

import (
	"fmt"
	"regexp"
	"strings"
)

// EnvKeyPrefix marks an API key that is read from the kernel's environment
// at call time: "env:OPENAI_API_KEY".
const EnvKeyPrefix = "env:"

// EnvNameRE matches an environment variable name.
var EnvNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Problems collects validation messages; each names the field it is about.
type Problems []string

// Add records a problem with field.
func (p *Problems) Add(field, format string, args ...any) {
	*p = append(*p, field+": "+fmt.Sprintf(format, args...))
}

// maxProblems is how many problems one error lists.
const maxProblems = 8

// Err is nil without problems, else a BAD_INPUT listing them.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	if len(p) > maxProblems {
		return Errorf(CodeBadInput, "%s; and %d more problems", strings.Join(p[:maxProblems], "; "), len(p)-maxProblems)
	}
	return Errorf(CodeBadInput, "%s", strings.Join(p, "; "))
}

package core

import (
	"fmt"
	"regexp"
	"strings"
)

// envKeyPrefix marks an API key that is read from the kernel's environment
// at call time: "env:OPENAI_API_KEY".
const EnvKeyPrefix = "env:"

// keyEnvNameRE is the rule every env: reference follows unless the operator
// allows the name explicitly (`foya serve --allow-key-env NAME`): only
// variables named like API keys, so that a connection cannot send PATH, HOME
// or AWS_SECRET_ACCESS_KEY to a base URL of the caller's choice.
// envNameRE matches an environment variable name.
var EnvNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// problems collects validation messages; each names the field it is about.
type Problems []string

func (p *Problems) Add(field, format string, args ...any) {
	*p = append(*p, field+": "+fmt.Sprintf(format, args...))
}

// maxProblems is how many problems one error lists.
const maxProblems = 8

func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	if len(p) > maxProblems {
		return Errorf(CodeBadInput, "%s; and %d more problems", strings.Join(p[:maxProblems], "; "), len(p)-maxProblems)
	}
	return Errorf(CodeBadInput, "%s", strings.Join(p, "; "))
}

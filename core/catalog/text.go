package catalog

import (
	"fmt"
	"github.com/foya-dev/foya/core"
	"unicode/utf8"
)

// validateConnectionText checks the bounded text of a connection: its name,
// key and model ids, and the number of models.
func validateConnectionText(p *core.Problems, c core.Connection) {
	if n := utf8.RuneCountInString(c.Name); n > core.MaxConnectionNameChars {
		p.Add("input.name", "%d characters is over the limit of %d", n, core.MaxConnectionNameChars)
	} else if msg := core.DisplayTextProblem(c.Name); msg != "" {
		p.Add("input.name", "%s", msg)
	}
	if len(c.APIKey) > core.MaxAPIKeyBytes {
		p.Add("input.apiKey", "%d bytes is over the limit of %d bytes", len(c.APIKey), core.MaxAPIKeyBytes)
	}
	if len(c.Models) > core.MaxModelsPerConnection {
		p.Add("input.models", "%d models is over the limit of %d per connection", len(c.Models), core.MaxModelsPerConnection)
	}
	for i, m := range c.Models {
		field := fmt.Sprintf("input.models[%d].id", i)
		if n := utf8.RuneCountInString(m.ID); n > core.MaxModelIDChars {
			p.Add(field, "%d characters is over the limit of %d", n, core.MaxModelIDChars)
		} else if msg := core.DisplayTextProblem(m.ID); msg != "" {
			p.Add(field, "%s", msg)
		}
	}
}

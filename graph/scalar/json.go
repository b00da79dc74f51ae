// Package scalar holds the schema's custom GraphQL scalars (JSON) and
// their marshalling; standard library and gqlgen only.
package scalar

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON is an arbitrary JSON value carried as raw bytes.
type JSON json.RawMessage

// MarshalGQL writes the raw JSON.
func (j JSON) MarshalGQL(w io.Writer) {
	if len(j) == 0 {
		io.WriteString(w, "null") //nolint:errcheck // gqlgen's writer interface has no error path
		return
	}
	w.Write(j) //nolint:errcheck // as above
}

// UnmarshalGQL accepts any decoded GraphQL input value.
func (j *JSON) UnmarshalGQL(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("JSON scalar: %w", err)
	}
	*j = raw
	return nil
}

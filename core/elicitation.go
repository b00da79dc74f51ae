package core

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Elicitation modes (MCP elicitation/create).
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// Elicitation answers (MCP ElicitResult.action).
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// Elicitation is a question an MCP server asks the person behind a tool
// call (elicitation/create): a form of flat fields, or a URL to open.
type Elicitation struct {
	// Server is the name of the MCP server that asks.
	Server  string `json:"server"`
	Mode    string `json:"mode"`
	Message string `json:"message"`
	// Fields are the form's fields (form mode), in the schema's order.
	Fields []ElicitationField `json:"fields,omitempty"`
	// URL is the page to open (url mode); ElicitationID names it.
	URL           string `json:"url,omitempty"`
	ElicitationID string `json:"elicitationId,omitempty"`
}

// ElicitationField is one field of a form elicitation, from the
// requested schema's properties.
type ElicitationField struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is string, number, integer, boolean or array (a multiple choice).
	Type     string `json:"type"`
	Required bool   `json:"required,omitempty"`
	// Format is the string format the server asks for (email, uri, date,
	// date-time).
	Format string `json:"format,omitempty"`
	// Options are the allowed values of a single or multiple choice.
	Options   []ElicitationOption `json:"options,omitempty"`
	Default   any                 `json:"default,omitempty"`
	Minimum   *float64            `json:"minimum,omitempty"`
	Maximum   *float64            `json:"maximum,omitempty"`
	MinLength *int                `json:"minLength,omitempty"`
	MaxLength *int                `json:"maxLength,omitempty"`
	MinItems  *int                `json:"minItems,omitempty"`
	MaxItems  *int                `json:"maxItems,omitempty"`
}

// ElicitationOption is one allowed value of a choice, with its label.
type ElicitationOption struct {
	Value string `json:"value"`
	Title string `json:"title,omitempty"`
}

// ElicitationResult is the person's answer: accept (with Content for a
// form), decline or cancel.
type ElicitationResult struct {
	Action  string
	Content map[string]any
}

// Asker asks the person driving the session of a tool call; the turn
// engine puts one in the context of every tool call (WithAsker). Elicit
// blocks until an answer or the end of ctx: a ctx past its deadline
// declines, a cancelled one (the turn stopped) cancels.
type Asker interface {
	Elicit(ctx context.Context, q Elicitation) (ElicitationResult, error)
}

type askerKey struct{}

// WithAsker attaches the asker of a tool call to its context.
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// AskerOf returns the asker of a tool call's context, or nil.
func AskerOf(ctx context.Context) Asker {
	a, _ := ctx.Value(askerKey{}).(Asker)
	return a
}

// Question is the text shown by a client that knows nothing of fields.
func (q Elicitation) Question() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q asks: %s", q.Server, q.Message)
	if q.Mode == ElicitURL {
		fmt.Fprintf(&b, "\nOpen %s, then accept; or decline.", q.URL)
		return b.String()
	}
	for _, f := range q.Fields {
		fmt.Fprintf(&b, "\n- %s (%s", f.Name, f.Type)
		if f.Required {
			b.WriteString(", required")
		}
		b.WriteString(")")
		if d := cmpOr(f.Title, f.Description); d != "" {
			b.WriteString(": " + d)
		}
		if len(f.Options) > 0 {
			vals := make([]string, len(f.Options))
			for i, o := range f.Options {
				vals[i] = o.Value
			}
			b.WriteString(" [" + strings.Join(vals, ", ") + "]")
		}
	}
	if len(q.Fields) > 0 {
		b.WriteString("\nAnswer with a JSON object of the fields")
		if len(q.Fields) == 1 {
			b.WriteString(" or the value alone")
		}
		b.WriteString(".")
	} else {
		b.WriteString("\nAccept (any answer) or decline.")
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ParseAnswer checks an accepted answer against the fields and returns the
// content to send: a JSON object of the fields, or, for a form of one
// field, its value alone. Errors name the field and are meant for the
// person answering.
func (q Elicitation) ParseAnswer(answer string) (map[string]any, error) {
	if q.Mode == ElicitURL {
		return nil, nil
	}
	if len(q.Fields) == 0 {
		return map[string]any{}, nil // a confirmation: any answer accepts
	}
	answer = strings.TrimSpace(answer)
	var content map[string]any
	dec := json.NewDecoder(strings.NewReader(answer))
	dec.UseNumber()
	if err := dec.Decode(&content); err != nil || content == nil {
		if len(q.Fields) != 1 {
			return nil, fmt.Errorf("answer: give a JSON object with the fields %s", fieldNames(q.Fields))
		}
		content = map[string]any{q.Fields[0].Name: answer}
	}
	out := map[string]any{}
	for k := range content {
		if !slices.ContainsFunc(q.Fields, func(f ElicitationField) bool { return f.Name == k }) {
			return nil, fmt.Errorf("answer.%s: no such field; the fields are %s", k, fieldNames(q.Fields))
		}
	}
	for _, f := range q.Fields {
		v, ok := content[f.Name]
		if !ok || v == nil {
			if f.Required {
				return nil, fmt.Errorf("answer.%s: required", f.Name)
			}
			continue
		}
		cv, err := f.coerce(v)
		if err != nil {
			return nil, fmt.Errorf("answer.%s: %w", f.Name, err)
		}
		out[f.Name] = cv
	}
	return out, nil
}

func fieldNames(fs []ElicitationField) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func (f ElicitationField) allowed(s string) error {
	if len(f.Options) == 0 || slices.ContainsFunc(f.Options, func(o ElicitationOption) bool { return o.Value == s }) {
		return nil
	}
	vals := make([]string, len(f.Options))
	for i, o := range f.Options {
		vals[i] = o.Value
	}
	return fmt.Errorf("%q is not one of %s", s, strings.Join(vals, ", "))
}

// coerce converts a value (JSON, or the text of a one-field answer) to the
// field's type and checks its bounds.
func (f ElicitationField) coerce(v any) (any, error) {
	switch f.Type {
	case "boolean":
		return coerceBool(v)
	case "number", "integer":
		return f.coerceNumber(v)
	case "array":
		return f.coerceList(v)
	default:
		return f.coerceString(v)
	}
}

// coerceBool converts a boolean or its text.
func coerceBool(v any) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		if b, err := strconv.ParseBool(strings.ToLower(x)); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("want true or false")
}

// coerceNumber converts a number or its text, checking the field's
// bounds; an integer field's value is an int64.
func (f ElicitationField) coerceNumber(v any) (any, error) {
	var n float64
	switch x := v.(type) {
	case json.Number:
		n, _ = x.Float64()
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return nil, fmt.Errorf("want a %s", f.Type)
		}
		n = p
	case float64:
		n = x
	default:
		return nil, fmt.Errorf("want a %s", f.Type)
	}
	if f.Type == "integer" && n != math.Trunc(n) {
		return nil, fmt.Errorf("want an integer")
	}
	if f.Minimum != nil && n < *f.Minimum {
		return nil, fmt.Errorf("at least %v", *f.Minimum)
	}
	if f.Maximum != nil && n > *f.Maximum {
		return nil, fmt.Errorf("at most %v", *f.Maximum)
	}
	if f.Type == "integer" {
		return int64(n), nil
	}
	return n, nil
}

// coerceList converts a list of strings or comma-separated text,
// checking each item's choice and the field's item counts.
func (f ElicitationField) coerceList(v any) (any, error) {
	var items []string
	switch x := v.(type) {
	case []any:
		for _, it := range x {
			s, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("want a list of strings")
			}
			items = append(items, s)
		}
	case string:
		for s := range strings.SplitSeq(x, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
	default:
		return nil, fmt.Errorf("want a list of strings")
	}
	for _, s := range items {
		if err := f.allowed(s); err != nil {
			return nil, err
		}
	}
	if f.MinItems != nil && len(items) < *f.MinItems {
		return nil, fmt.Errorf("choose at least %d", *f.MinItems)
	}
	if f.MaxItems != nil && len(items) > *f.MaxItems {
		return nil, fmt.Errorf("choose at most %d", *f.MaxItems)
	}
	return items, nil
}

// coerceString checks a string's choice and length.
func (f ElicitationField) coerceString(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("want a string")
	}
	if err := f.allowed(s); err != nil {
		return nil, err
	}
	n := len([]rune(s))
	if f.MinLength != nil && n < *f.MinLength {
		return nil, fmt.Errorf("at least %d characters", *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, fmt.Errorf("at most %d characters", *f.MaxLength)
	}
	return s, nil
}

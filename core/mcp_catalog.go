package core

// MCPPromptState is one prompt a server offers (prompts/list).
type MCPPromptState struct {
	Name        string
	Title       string
	Description string
	Arguments   []MCPPromptArgument
}

// MCPPromptArgument is one argument of a prompt.
type MCPPromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// MCPResourceState is one resource a server offers (resources/list).
type MCPResourceState struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
}

// MCPResourceTemplateState is one resource template a server offers
// (resources/templates/list).
type MCPResourceTemplateState struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
}
